// The SFT kind's descriptor (core/kinds/runKind.ts): what the CLI, the run runner, sweeps, the agent
// session and Compare Runs need of an SFT run (top-K distillation is an SFT run with a teacher).
import { defineKind, type KindMetrics } from '../training/runKind';
import { specKind } from '../spec/kinds';
import type { SftRunResult } from '../runs/runEvents';
import { METRIC } from '../../protocol/metricKeys';
import { sftStepReport, sftStepReportText } from './agentReport';
import { SFT_SPEC, type ResolvedSftSpec } from './spec';
import { estimateSftRun } from './estimate';
import { prepareSftRun, startSftRun } from './start';
import type { SftRun } from './loop';

/** SFT's step row (sft/loop.ts), the validation NLL and each inline evaluator's test/<name>/ keys. */
function sftMetrics(spec: ResolvedSftSpec): KindMetrics {
  return {
    keys: ['epoch', 'progress', 'learning_rate', METRIC.trainNll, METRIC.testNll, 'num_sequences', 'num_tokens', 'num_loss_tokens'],
    prefixes: ['optim/', 'time/', 'progress/', ...(spec.evals ?? []).map((e) => `test/${e.name}/`)],
  };
}

const f4 = (v: number | undefined) => v?.toFixed(4);

/** The session's run in one line: `SFT arith on …, batch 8, lr default`. */
function describeSft(spec: ResolvedSftSpec): string {
  return `SFT ${spec.name} on ${spec.model}, batch ${spec.batch_size}, lr ${spec.learning_rate ?? 'default'}`;
}

export const SFT_KIND = defineKind<ResolvedSftSpec, SftRunResult>({
  row: specKind('sft'),
  spec: async () => SFT_SPEC,
  start: startSftRun,
  prepare: prepareSftRun,
  // sampling evaluators run their grader files (the workspace's Python)
  estimate: estimateSftRun,
  runsWorkspaceCode: (spec) => Boolean(spec.evals?.some((e) => e.grader)),
  metrics: sftMetrics,
  seedField: 'seed',
  outcome: (r) =>
    r.firstTrainNll !== undefined && r.lastTrainNll !== undefined
      ? `; train NLL ${r.firstTrainNll.toFixed(3)} → ${r.lastTrainNll.toFixed(3)}${r.firstTestNll !== undefined && r.lastTestNll !== undefined ? `, validation NLL ${r.firstTestNll.toFixed(3)} → ${r.lastTestNll.toFixed(3)}` : ''}`
      : '',
  cliReport: (r) => (r.firstTrainNll !== undefined ? `\ntrain_mean_nll ${f4(r.firstTrainNll)} → ${f4(r.lastTrainNll)}${r.firstTestNll !== undefined ? `; test/nll ${f4(r.firstTestNll)} → ${f4(r.lastTestNll)}` : ''}\n` : ''),
  specHints: { learningRate: true, loraCapacity: true },
  compareColumns: [
    { id: 'finalTrainNll', label: 'final train NLL', metric: METRIC.trainNll, pick: 'last' },
    { id: 'bestTestNll', label: 'best test/nll', metric: METRIC.testNll, pick: 'best', goal: 'minimize' },
    { id: 'bestTestNllStep', label: 'at step', metric: METRIC.testNll, pick: 'bestStep', goal: 'minimize' },
  ],
  agent: {
    describe: describeSft,
    ready: ({ spec, run, specFile, runDir, step }) => {
      const r = run as SftRun;
      return {
        text: `${describeSft(spec)}; ${r.trainCount} train / ${r.validationCount} validation chats`,
        value: { run_name: spec.name, model: spec.model, spec_file: specFile, train_chats: r.trainCount, validation_chats: r.validationCount, run_dir: runDir, step },
      };
    },
    report: (o) => {
      const r = sftStepReport({ runDir: o.runDir, firstStep: o.firstStep, lastStep: o.lastStep });
      return { text: sftStepReportText(r), value: r };
    },
    lengthFields: '"max_steps" or "num_epochs"',
    finished: ({ runDir, steps }) => {
      const r = sftStepReport({ runDir, firstStep: 0, lastStep: steps - 1 });
      return { text: `; last validation NLL ${r.test_nll?.toFixed(3) ?? '–'}`, value: { train_mean_nll: r.train_mean_nll, test_nll: r.test_nll } };
    },
  },
});
