// The DPO kind's descriptor (core/kinds/runKind.ts): what the CLI, the run runner, sweeps, the agent
// session and Compare Runs need of a DPO run.
import { defineKind, type KindMetrics } from '../training/runKind';
import { specKind } from '../spec/kinds';
import type { DpoRunResult } from '../runs/runEvents';
import { METRIC } from '../../protocol/metricKeys';
import { dpoStepReport, dpoStepReportText } from './agentReport';
import { DPO_METRIC_KEYS } from './loss';
import { DPO_SPEC, type ResolvedDpoSpec } from './spec';
import { estimateDpoRun } from './estimate';
import { prepareDpoRun, startDpoRun } from './start';
import type { DpoRun } from './loop';

/** DPO's step row (dpo/loop.ts), and the validation pairs' chosen NLL and the same DPO keys under test/. */
const DPO_METRICS: KindMetrics = {
  keys: ['epoch', 'progress', 'learning_rate', 'loss', 'num_tokens', ...DPO_METRIC_KEYS, METRIC.testNll, ...DPO_METRIC_KEYS.map((k) => `test/${k}`)],
  prefixes: ['optim/', 'time/', 'progress/'],
};

const f3 = (v: number | undefined) => v?.toFixed(3);
const f4 = (v: number | undefined) => v?.toFixed(4);

/** The session's run in one line: `DPO arith on …, batch 8 pairs, β 0.1, lr default`. */
function describeDpo(spec: ResolvedDpoSpec): string {
  return `DPO ${spec.name} on ${spec.model}, batch ${spec.batch_size} pairs, β ${spec.dpo_beta}, lr ${spec.learning_rate ?? 'default'}`;
}

export const DPO_KIND = defineKind<ResolvedDpoSpec, DpoRunResult>({
  row: specKind('dpo'),
  spec: async () => DPO_SPEC,
  start: startDpoRun,
  prepare: prepareDpoRun,
  estimate: estimateDpoRun,
  runsWorkspaceCode: () => false,
  metrics: () => DPO_METRICS,
  seedField: 'seed',
  outcome: (r) =>
    r.firstAccuracy !== undefined && r.lastAccuracy !== undefined ? `; pair accuracy ${r.firstAccuracy.toFixed(2)} → ${r.lastAccuracy.toFixed(2)}, DPO loss ${f3(r.firstDpoLoss)} → ${f3(r.lastDpoLoss)}` : '',
  cliReport: (r) =>
    r.firstDpoLoss !== undefined
      ? `\ndpo_loss ${f4(r.firstDpoLoss)} → ${f4(r.lastDpoLoss)}; accuracy ${f3(r.firstAccuracy)} → ${f3(r.lastAccuracy)}${r.firstTestNll !== undefined ? `; test/nll (chosen) ${f4(r.firstTestNll)} → ${f4(r.lastTestNll)}` : ''}\n`
      : '',
  // no learning-rate hint: get_lr is calibrated for SFT, and DPO's rates are far lower (1e-5)
  compareColumns: [
    { id: 'finalAccuracy', label: 'final pair accuracy', metric: 'accuracy', pick: 'last' },
    { id: 'finalMargin', label: 'final margin', metric: 'margin', pick: 'last' },
    { id: 'bestTestAccuracy', label: 'best test/accuracy', metric: 'test/accuracy', pick: 'best', goal: 'maximize' },
    { id: 'bestTestAccuracyStep', label: 'at step', metric: 'test/accuracy', pick: 'bestStep', goal: 'maximize' },
  ],
  agent: {
    describe: describeDpo,
    ready: ({ spec, run, specFile, runDir, step }) => {
      const r = run as DpoRun;
      const value = { run_name: spec.name, model: spec.model, spec_file: specFile, train_pairs: r.trainCount, validation_pairs: r.validationCount, dpo_beta: spec.dpo_beta, reference: r.referencePath ?? null, run_dir: runDir, step };
      return { text: `${describeDpo(spec)}; ${value.train_pairs} train / ${value.validation_pairs} validation pairs; reference ${value.reference ?? '–'}`, value, resumed: ' (same reference as before)' };
    },
    report: (o) => {
      const r = dpoStepReport({ runDir: o.runDir, firstStep: o.firstStep, lastStep: o.lastStep, stepsTotal: o.stepsTotal });
      return { text: dpoStepReportText(r), value: r };
    },
    lengthFields: '"max_steps" or "num_epochs"',
    finished: ({ runDir, steps, stepsTotal }) => {
      const r = dpoStepReport({ runDir, firstStep: 0, lastStep: steps - 1, stepsTotal });
      return {
        text: `; last pair accuracy ${r.accuracy?.toFixed(3) ?? '–'}, margin ${r.margin?.toFixed(4) ?? '–'}${r.test_accuracy !== null ? `, validation accuracy ${r.test_accuracy.toFixed(3)}` : ''}`,
        value: { accuracy: r.accuracy, margin: r.margin, test_accuracy: r.test_accuracy },
      };
    },
  },
});
