// The SFT kind's descriptor (core/kinds/runKind.ts): what the CLI, the run runner, sweeps, the agent
// session and Compare Runs need of an SFT run (top-K distillation is an SFT run with a teacher).
import { defineKind, type KindMetrics } from '../kinds/runKind';
import { specKind } from '../spec/kinds';
import type { SftRunResult } from '../runs/runEvents';
import { METRIC } from '../../protocol/metricKeys';
import { sftStepReport, sftStepReportText } from '../agent/report';
import { SFT_SPEC, type ResolvedSftSpec } from './spec';
import { prepareSftRun, startSftRun } from './start';

/** SFT's step row (sft/loop.ts), the validation NLL and each inline evaluator's test/<name>/ keys. */
function sftMetrics(spec: ResolvedSftSpec): KindMetrics {
  return {
    keys: ['epoch', 'progress', 'learning_rate', METRIC.trainNll, METRIC.testNll, 'num_sequences', 'num_tokens', 'num_loss_tokens'],
    prefixes: ['optim/', 'time/', 'progress/', ...(spec.evals ?? []).map((e) => `test/${e.name}/`)],
  };
}

const f4 = (v: number | undefined) => v?.toFixed(4);

export const SFT_KIND = defineKind<ResolvedSftSpec, SftRunResult>({
  row: specKind('sft'),
  spec: async () => SFT_SPEC,
  start: startSftRun,
  prepare: prepareSftRun,
  // sampling evaluators run their grader files (the workspace's Python)
  runsWorkspaceCode: (spec) => Boolean(spec.evals?.some((e) => e.grader)),
  metrics: sftMetrics,
  seedField: 'seed',
  outcome: (r) =>
    r.firstTrainNll !== undefined && r.lastTrainNll !== undefined
      ? `; train NLL ${r.firstTrainNll.toFixed(3)} → ${r.lastTrainNll.toFixed(3)}${r.firstTestNll !== undefined && r.lastTestNll !== undefined ? `, validation NLL ${r.firstTestNll.toFixed(3)} → ${r.lastTestNll.toFixed(3)}` : ''}`
      : '',
  cliReport: (r) => (r.firstTrainNll !== undefined ? `\ntrain_mean_nll ${f4(r.firstTrainNll)} → ${f4(r.lastTrainNll)}${r.firstTestNll !== undefined ? `; test/nll ${f4(r.firstTestNll)} → ${f4(r.lastTestNll)}` : ''}\n` : ''),
  compareColumns: [
    { id: 'finalTrainNll', label: 'final train NLL', metric: METRIC.trainNll, pick: 'last' },
    { id: 'bestTestNll', label: 'best test/nll', metric: METRIC.testNll, pick: 'best', goal: 'minimize' },
    { id: 'bestTestNllStep', label: 'at step', metric: METRIC.testNll, pick: 'bestStep', goal: 'minimize' },
  ],
  agent: {
    describe: (spec) => `SFT ${spec.name} on ${spec.model}, batch ${spec.batch_size}, lr ${spec.learning_rate ?? 'default'}`,
    report: (o) => {
      const r = sftStepReport({ runDir: o.runDir, firstStep: o.firstStep, lastStep: o.lastStep });
      return { text: sftStepReportText(r), value: r };
    },
  },
});
