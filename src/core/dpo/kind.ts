// The DPO kind's descriptor (core/kinds/runKind.ts): what the CLI, the run runner, sweeps, the agent
// session and Compare Runs need of a DPO run.
import { defineKind, type KindMetrics } from '../kinds/runKind';
import { specKind } from '../spec/kinds';
import type { DpoRunResult } from '../runs/runEvents';
import { METRIC } from '../../protocol/metricKeys';
import { dpoStepReport, dpoStepReportText } from '../agent/report';
import { DPO_METRIC_KEYS } from './loss';
import { DPO_SPEC, type ResolvedDpoSpec } from './spec';
import { prepareDpoRun, startDpoRun } from './start';

/** DPO's step row (dpo/loop.ts), and the validation pairs' chosen NLL and the same DPO keys under test/. */
const DPO_METRICS: KindMetrics = {
  keys: ['epoch', 'progress', 'learning_rate', 'loss', 'num_tokens', ...DPO_METRIC_KEYS, METRIC.testNll, ...DPO_METRIC_KEYS.map((k) => `test/${k}`)],
  prefixes: ['optim/', 'time/', 'progress/'],
};

const f3 = (v: number | undefined) => v?.toFixed(3);
const f4 = (v: number | undefined) => v?.toFixed(4);

export const DPO_KIND = defineKind<ResolvedDpoSpec, DpoRunResult>({
  row: specKind('dpo'),
  spec: async () => DPO_SPEC,
  start: startDpoRun,
  prepare: prepareDpoRun,
  runsWorkspaceCode: () => false,
  metrics: () => DPO_METRICS,
  seedField: 'seed',
  outcome: (r) =>
    r.firstAccuracy !== undefined && r.lastAccuracy !== undefined ? `; pair accuracy ${r.firstAccuracy.toFixed(2)} → ${r.lastAccuracy.toFixed(2)}, DPO loss ${f3(r.firstDpoLoss)} → ${f3(r.lastDpoLoss)}` : '',
  cliReport: (r) =>
    r.firstDpoLoss !== undefined
      ? `\ndpo_loss ${f4(r.firstDpoLoss)} → ${f4(r.lastDpoLoss)}; accuracy ${f3(r.firstAccuracy)} → ${f3(r.lastAccuracy)}${r.firstTestNll !== undefined ? `; test/nll (chosen) ${f4(r.firstTestNll)} → ${f4(r.lastTestNll)}` : ''}\n`
      : '',
  compareColumns: [
    { id: 'finalAccuracy', label: 'final pair accuracy', metric: 'accuracy', pick: 'last' },
    { id: 'finalMargin', label: 'final margin', metric: 'margin', pick: 'last' },
    { id: 'bestTestAccuracy', label: 'best test/accuracy', metric: 'test/accuracy', pick: 'best', goal: 'maximize' },
    { id: 'bestTestAccuracyStep', label: 'at step', metric: 'test/accuracy', pick: 'bestStep', goal: 'maximize' },
  ],
  agent: {
    describe: (spec) => `DPO ${spec.name} on ${spec.model}, batch ${spec.batch_size} pairs, β ${spec.dpo_beta}, lr ${spec.learning_rate ?? 'default'}`,
    report: (o) => {
      const r = dpoStepReport({ runDir: o.runDir, firstStep: o.firstStep, lastStep: o.lastStep, stepsTotal: o.stepsTotal });
      return { text: dpoStepReportText(r), value: r };
    },
  },
});
