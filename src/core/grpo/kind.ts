// The GRPO kind's descriptor (core/kinds/runKind.ts): what the CLI, the run runner, sweeps, the
// agent session and Compare Runs need of a GRPO run, all found through the kinds table. On-policy
// distillation, the KL penalty and environment runs are GRPO runs too (their spec says so).
import * as path from 'node:path';
import { defineKind, type KindMetrics } from '../training/runKind';
import { specKind } from '../spec/kinds';
import type { GrpoRunResult } from '../runs/runEvents';
import { METRIC } from '../../protocol/metricKeys';
import { stepReport, stepReportText } from './agentReport';
import { GRPO_SPEC, type ResolvedGrpoSpec } from './spec';
import { estimateGrpoRun } from './estimate';
import { prepareGrpoRun, startGrpoRun } from './start';
import type { GrpoRun } from './loop';
import { summaryTable } from './summary';

/** GRPO logs the cookbook's env/, test/, optim/, time/ and progress/ families, and the KL terms of distillation and the KL penalty. */
const GRPO_METRICS: KindMetrics = { keys: [METRIC.teacherKl, METRIC.klPolicyBase], prefixes: ['env/', 'test/', 'optim/', 'time/', 'progress/', `${METRIC.teacherKl}/`] };

/** The session's run in one line: `arith on …, 4 groups × 8, lr default, up to 20 iterations`. */
function describeGrpo(spec: ResolvedGrpoSpec): string {
  return `${spec.name} on ${spec.model}, ${spec.groups_per_batch} groups × ${spec.group_size}, lr ${spec.learning_rate ?? 'default'}, up to ${spec.iterations} iterations`;
}

export const GRPO_KIND = defineKind<ResolvedGrpoSpec, GrpoRunResult>({
  row: specKind('grpo'),
  spec: async () => GRPO_SPEC,
  start: startGrpoRun,
  prepare: prepareGrpoRun,
  // the reward function or the environment is the workspace's Python
  estimate: estimateGrpoRun,
  runsWorkspaceCode: () => true,
  metrics: () => GRPO_METRICS,
  seedField: 'sampling_seed',
  outcome: (r) => (r.firstTestReward !== undefined && r.lastTestReward !== undefined ? `; holdout reward ${r.firstTestReward.toFixed(3)} → ${r.lastTestReward.toFixed(3)}` : ''),
  cliReport: (r) => `\n${summaryTable(r.runDir)}\n\n`,
  specHints: { learningRate: true },
  compareColumns: [
    { id: 'finalTrainReward', label: 'final reward', metric: METRIC.reward, pick: 'last' },
    { id: 'bestTrainReward', label: 'best reward', metric: METRIC.reward, pick: 'best', goal: 'maximize' },
    { id: 'bestHoldoutReward', label: 'best holdout reward', metric: METRIC.testReward, pick: 'best', goal: 'maximize' },
    { id: 'bestHoldoutStep', label: 'at step', metric: METRIC.testReward, pick: 'bestStep', goal: 'maximize' },
  ],
  agent: {
    describe: describeGrpo,
    ready: ({ spec, run, specFile, runDir, step }) => {
      const pool = (run as GrpoRun).pool;
      const scoring = spec.reward ? `reward ${spec.reward.file}` : spec.env ? `environment ${spec.env.file} (episodes of up to ${spec.env.max_turns} turn${spec.env.max_turns === 1 ? '' : 's'})` : 'no reward';
      return {
        text: `${describeGrpo(spec)}; ${pool.train.length} train / ${pool.holdout.length} holdout problems; ${scoring}${spec.teacher || spec.dataset_configs ? ', distilling from a teacher' : ''}`,
        value: { run_name: spec.name, model: spec.model, spec_file: specFile, train_problems: pool.train.length, holdout_problems: pool.holdout.length, iterations: spec.iterations, run_dir: runDir, step },
      };
    },
    report: (o) => {
      const r = stepReport({ runDir: o.runDir, firstStep: o.firstStep, lastStep: o.lastStep, stepsTotal: o.spec.iterations, groupsPerBatch: o.spec.groups_per_batch, rewardErrors: [...o.warnings] });
      return { text: stepReportText(r), value: r };
    },
    lengthFields: '"iterations"',
    refuseWhenDone: true,
    sampling: (spec) => ({
      maxTokens: spec.max_tokens,
      temperature: spec.temperature,
      ...(spec.stop?.length ? { stop: spec.stop } : {}),
      ...(spec.env ? { unscored: `unscored: this run's environment (${path.basename(spec.env.file)}) scores whole episodes, in train_grpo_step; these are single replies` } : {}),
    }),
    finished: ({ runDir, steps, spec }) => {
      const r = stepReport({ runDir, firstStep: 0, lastStep: steps - 1, stepsTotal: spec.iterations, groupsPerBatch: spec.groups_per_batch, rewardErrors: [] });
      return { text: `; mean train reward ${r.reward_mean?.toFixed(3) ?? '–'}${r.test_reward !== null ? `, last holdout ${r.test_reward.toFixed(3)}` : ''}`, value: { reward_mean: r.reward_mean, test_reward: r.test_reward } };
    },
  },
});
