// The GRPO kind's descriptor (core/kinds/runKind.ts): what the CLI, the run runner, sweeps, the
// agent session and Compare Runs need of a GRPO run, all found through the kinds table. On-policy
// distillation, the KL penalty and environment runs are GRPO runs too (their spec says so).
import { defineKind, type KindMetrics } from '../kinds/runKind';
import { specKind } from '../spec/kinds';
import type { GrpoRunResult } from '../runs/runEvents';
import { METRIC } from '../../protocol/metricKeys';
import { stepReport, stepReportText } from '../agent/report';
import { GRPO_SPEC, type ResolvedGrpoSpec } from './spec';
import { prepareGrpoRun, startGrpoRun } from './start';
import { summaryTable } from './summary';

/** GRPO logs the cookbook's env/, test/, optim/, time/ and progress/ families, and the KL terms of distillation and the KL penalty. */
const GRPO_METRICS: KindMetrics = { keys: [METRIC.teacherKl, METRIC.klPolicyBase], prefixes: ['env/', 'test/', 'optim/', 'time/', 'progress/', `${METRIC.teacherKl}/`] };

export const GRPO_KIND = defineKind<ResolvedGrpoSpec, GrpoRunResult>({
  row: specKind('grpo'),
  spec: async () => GRPO_SPEC,
  start: startGrpoRun,
  prepare: prepareGrpoRun,
  // the reward function or the environment is the workspace's Python
  runsWorkspaceCode: () => true,
  metrics: () => GRPO_METRICS,
  seedField: 'sampling_seed',
  outcome: (r) => (r.firstTestReward !== undefined && r.lastTestReward !== undefined ? `; holdout reward ${r.firstTestReward.toFixed(3)} → ${r.lastTestReward.toFixed(3)}` : ''),
  cliReport: (r) => `\n${summaryTable(r.runDir)}\n\n`,
  compareColumns: [
    { id: 'finalTrainReward', label: 'final reward', metric: METRIC.reward, pick: 'last' },
    { id: 'bestTrainReward', label: 'best reward', metric: METRIC.reward, pick: 'best', goal: 'maximize' },
    { id: 'bestHoldoutReward', label: 'best holdout reward', metric: METRIC.testReward, pick: 'best', goal: 'maximize' },
    { id: 'bestHoldoutStep', label: 'at step', metric: METRIC.testReward, pick: 'bestStep', goal: 'maximize' },
  ],
  agent: {
    describe: (spec) => `${spec.name} on ${spec.model}, ${spec.groups_per_batch} groups × ${spec.group_size}, lr ${spec.learning_rate ?? 'default'}, up to ${spec.iterations} iterations`,
    report: (o) => {
      const r = stepReport({ runDir: o.runDir, firstStep: o.firstStep, lastStep: o.lastStep, stepsTotal: o.spec.iterations, groupsPerBatch: o.spec.groups_per_batch, rewardErrors: [...o.warnings] });
      return { text: stepReportText(r), value: r };
    },
  },
});
