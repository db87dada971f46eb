// GRPO run specs (`*.grpo.json`): the zod schema, with field names after the tinker-cookbook's
// rl/train.Config where it has one, declared to the spec layer (src/core/spec), which reads spec
// files, words their problems, resolves their paths and builds the JSON schema the editor uses.
import * as path from 'node:path';
import * as z from 'zod';
import { defineSpec, type Resolved } from '../spec/define';
import { optionalSeed, positiveInt } from '../spec/fields';
import { REWARD_FILE_EXTENSIONS } from '../reward/files';
import { EnvSpec } from '../env/spec';
import { isEnvFile } from '../env/files';
import { inlineEvalsField, type InlineEvalRun } from '../evals/inlineSpec';
import { DatasetSpec, ModelSourceSpec } from '../spec/datasets';

// the problems dataset and a second model's source are spec/datasets.ts's (data/ and training/ read them)
export { DatasetSpec, HoldoutSpec, ModelSourceSpec } from '../spec/datasets';

export const REWARD_EXTENSIONS = REWARD_FILE_EXTENSIONS;

export const RewardSpec = z
  .strictObject({
    file: z
      .string()
      .min(1)
      .refine((f) => (REWARD_EXTENSIONS as readonly string[]).includes(path.extname(f).toLowerCase()), {
        message: `must be a ${REWARD_EXTENSIONS.slice(0, -1).join(', ')} or ${REWARD_EXTENSIONS.at(-1)} file`,
      })
      .refine((f) => !isEnvFile(f), { message: 'is an environment file: give it as "env": {"file": …} instead of "reward"' })
      .describe(
        'Reward function file, relative to the spec file: Python `compute_reward(completion, ground_truth) -> float` or JS/TS `computeReward(completion, groundTruth)`.',
      ),
    timeout_ms: positiveInt().default(10_000).describe('Per-call time limit; a call over it scores 0 and its worker is replaced.'),
    workers: positiveInt().optional().describe('Parallel reward workers (default: 2).'),
  })
  .describe('The reward function.');

// RL environments (issue 36): `env` instead of `reward`; the schema is the env layer's (env/spec.ts), shared with eval specs
export { EnvSpec } from '../env/spec';

const PPO_KEYS = ['clip_low_threshold', 'clip_high_threshold'];

const GROUP_SIZE_MESSAGE = 'must be at least 2 (advantages are centred within a group, so one sample learns nothing); 1 is allowed with a teacher';


/** One dataset of a multi-teacher distillation (the cookbook's DistillationDatasetConfig). */
export const DistillDatasetSpec = z
  .strictObject({
    dataset: DatasetSpec,
    teacher: ModelSourceSpec.describe('The teacher of this dataset\'s prompts.'),
    groups_per_batch: positiveInt().describe('Groups of this dataset in each iteration.'),
  })
  .describe('A dataset and its teacher.');
export type DistillDatasetSpec = z.output<typeof DistillDatasetSpec>;


/** Saving the best policy as it is reached (src/core/grpo/autoCheckpoint.ts). */
export const AutoCheckpointSpec = z
  .strictObject({
    metric: z
      .enum(['train', 'holdout'])
      .default('train')
      .describe('The reward watched: "train" (env/all/reward/total, smoothed) or "holdout" (test/env/all/reward/total at each evaluation).'),
    threshold: z.number().default(0).describe('Only a reward above this is saved.'),
    min_iterations: z.number().int().min(0).default(1).describe('No auto-checkpoint before this many updates.'),
    smoothing: z.number().min(0).lt(1).default(0.8).describe('EMA factor of the train reward: smoothed = smoothing × previous + (1 − smoothing) × reward (0: none).'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be letters, digits, "_" or "-"' })
      .default('best')
      .describe('Checkpoint name prefix: checkpoints are named <name>-<step>.'),
  })
  .describe('Save a state + sampler checkpoint whenever the watched reward reaches a new best above the threshold, so the best policy is never lost to a later collapse.');

/** GRPO's spec as the spec layer reads it: the dataset, holdout and reward files resolve against the spec's folder. */
/** What a GRPO run gives its inline evaluators: its reward file and max_tokens as defaults, no chats to score. */
export const GRPO_INLINE_EVALS: InlineEvalRun = {
  aRun: 'a GRPO run',
  chats: false,
  ownGrader: true,
  describe: 'Inline evaluators next to the holdout: each samples its dataset every `every` iterations and logs test/<name>/env/all/reward/total and pass@1 … pass@n.',
};

export const GRPO_SPEC = defineSpec({
  kind: 'grpo',
  describe: 'A GRPO run on Tinker Studio: model, dataset, reward function and hyper-parameters.',
  words: {
    backendRuns: 'training and sampling',
    learningRate: "Adam learning rate (constant). Default: the cookbook's get_lr formula for the model.",
    seed: 'Seed of the dataset shuffle and holdout split.',
  },
  resumable: ['iterations', 'eval_every'],
  files: [
    ['dataset', 'path'],
    ['dataset', 'holdout', 'path'],
    ['dataset_configs', '*', 'dataset', 'path'],
    ['dataset_configs', '*', 'dataset', 'holdout', 'path'],
    ['reward', 'file'],
    ['env', 'file'],
    ['evals', '*', 'dataset', 'path'],
    ['evals', '*', 'grader', 'file'],
  ],
  fields: {
    eval_every: z.number().int().min(0).default(20).describe('Evaluate on the holdout every this many iterations, before the update (0: never).'),
    groups_per_batch: positiveInt().default(16).describe('Problems (groups) per iteration (with `dataset_configs`, each dataset gives its own).'),
    group_size: z
      .number()
      .int()
      .min(1, { message: GROUP_SIZE_MESSAGE })
      .default(8).describe('Samples per problem; advantages are centred within each group (at least 2, or 1 with a teacher).'),
    max_tokens: positiveInt().describe('Most tokens sampled per completion.'),
    temperature: z.number().min(0).default(1).describe('Sampling temperature (0 = greedy).'),
    stop: z
      .array(z.string().min(1))
      .optional()
      .describe("Stop strings, replacing the renderer's stop sequences."),
    iterations: positiveInt().describe('Training iterations (batches) to run.'),
    dataset: DatasetSpec.optional(),
    reward: RewardSpec.optional(),
    env: EnvSpec.optional(),
    teacher: ModelSourceSpec.optional().describe(
      'On-policy distillation: the teacher scores every sampled token (compute_logprobs) and the per-token advantage −kl_penalty_coef·(log π_sampler − log π_teacher) (reverse KL) is added to the reward advantage. With a teacher, `reward` is optional (prompt-only data) and `group_size` may be 1. The teacher must share the student\'s tokenizer.',
    ),
    dataset_configs: z
      .array(DistillDatasetSpec)
      .min(1)
      .optional()
      .describe('Multi-teacher distillation, instead of `dataset` and `teacher`: each iteration takes `groups_per_batch` groups of each dataset, scored by that dataset\'s teacher.'),
    kl_penalty_coef: z
      .number()
      .min(0)
      .optional()
      .describe('With a teacher: the weight of the reverse KL to it (default 1.0). Without: the KL penalty to `kl_reference`, re-centred on the batch mean (default 0: off).'),
    kl_discount_factor: z.number().min(0).max(1).default(0).describe('Each token\'s KL advantage becomes the discounted sum of its own and the later tokens\' (0: none).'),
    kl_reference: ModelSourceSpec.optional().describe('The reference model of the KL penalty (required when kl_penalty_coef > 0 without a teacher); usually the base model.'),
    sampling_seed: optionalSeed(
      'Fixes sampling: each request is seeded from this, the iteration and the group (or holdout problem), so the same spec on the local engine gives the same run. Absent: unseeded, as the cookbook.',
    ),
    loss_fn: z
      .enum(['importance_sampling', 'ppo'])
      .default('importance_sampling')
      .describe('Policy-gradient loss computed by the service.'),
    loss_fn_config: z
      .record(z.string(), z.number())
      .optional()
      .describe('Loss parameters; for "ppo": clip_low_threshold and clip_high_threshold (ratio bounds, e.g. 0.8 and 1.2).'),
    remove_constant_reward_groups: z
      .boolean()
      .default(false)
      .describe('Drop groups whose rewards are all equal (default: keep them, with zero advantage).'),
    auto_checkpoint: AutoCheckpointSpec.optional(),
    evals: inlineEvalsField(GRPO_INLINE_EVALS),
  },
  refine: (s, ctx) => {
    checkDistillation(s, ctx);
    if (s.auto_checkpoint?.metric === 'holdout' && s.eval_every === 0)
      ctx.addIssue({ code: 'custom', path: ['auto_checkpoint', 'metric'], message: '"holdout" needs eval_every > 0 (the holdout reward is measured only at evaluations)' });
    if (s.loss_fn_config !== undefined) {
      if (s.loss_fn !== 'ppo') ctx.addIssue({ code: 'custom', path: ['loss_fn_config'], message: `only used with loss_fn "ppo"` });
      else
        for (const key of Object.keys(s.loss_fn_config))
          if (!PPO_KEYS.includes(key))
            ctx.addIssue({ code: 'custom', path: ['loss_fn_config', key], message: `unknown ppo parameter (known: ${PPO_KEYS.join(', ')})` });
      const { clip_low_threshold: lo, clip_high_threshold: hi } = s.loss_fn_config;
      if (lo !== undefined && hi !== undefined && !(lo < hi))
        ctx.addIssue({ code: 'custom', path: ['loss_fn_config'], message: 'clip_low_threshold must be below clip_high_threshold' });
    }
  },
});

/** The rules that tie the dataset, the reward, the teacher and the KL fields together. */
function checkDistillation(
  s: { dataset?: unknown; dataset_configs?: ReadonlyArray<{ dataset: DatasetSpec }>; teacher?: unknown; reward?: unknown; env?: unknown; group_size: number; kl_penalty_coef?: number; kl_reference?: unknown; eval_every: number; evals?: ReadonlyArray<{ grader?: unknown; benchmark?: unknown }> },
  ctx: z.core.$RefinementCtx,
): void {
  const distill = s.teacher !== undefined || s.dataset_configs !== undefined;
  if (s.dataset_configs !== undefined) {
    if (s.dataset !== undefined) ctx.addIssue({ code: 'custom', path: ['dataset'], message: 'give "dataset" (with "teacher") or "dataset_configs", not both' });
    if (s.teacher !== undefined) ctx.addIssue({ code: 'custom', path: ['teacher'], message: 'with "dataset_configs", each dataset names its own teacher' });
  } else if (s.dataset === undefined) {
    ctx.addIssue({ code: 'custom', path: ['dataset'], message: 'required (or "dataset_configs" for multi-teacher distillation)' });
  }
  // --- RL environments: exactly one of reward and env (neither with a teacher) ---
  if (s.reward !== undefined && s.env !== undefined) ctx.addIssue({ code: 'custom', path: ['env'], message: 'give "reward" or "env", not both (an environment computes its own rewards)' });
  if (s.env !== undefined && s.dataset_configs !== undefined) ctx.addIssue({ code: 'custom', path: ['env'], message: 'not used with "dataset_configs"' });
  if (s.reward === undefined && s.env === undefined && !distill) ctx.addIssue({ code: 'custom', path: ['reward'], message: 'required (unless a "teacher" is given: on-policy distillation needs no reward), or an environment ("env") instead' });
  // ---
  if (s.group_size === 1 && !distill)
    ctx.addIssue({ code: 'custom', path: ['group_size'], message: GROUP_SIZE_MESSAGE });
  if (distill && s.kl_reference !== undefined) ctx.addIssue({ code: 'custom', path: ['kl_reference'], message: 'not used with a teacher (the KL is to the teacher)' });
  if (!distill && (s.kl_penalty_coef ?? 0) > 0 && s.kl_reference === undefined)
    ctx.addIssue({ code: 'custom', path: ['kl_reference'], message: 'required when kl_penalty_coef > 0 (the model the KL is measured against, e.g. {"model": "<the base model>"})' });
  if (distill && s.kl_penalty_coef === 0 && s.reward === undefined)
    ctx.addIssue({ code: 'custom', path: ['kl_penalty_coef'], message: 'is 0 and there is no reward: nothing to learn from' });
  if (s.reward === undefined)
    s.evals?.forEach((e, i) => {
      if (e.grader === undefined && e.benchmark === undefined) ctx.addIssue({ code: 'custom', path: ['evals', i, 'grader'], message: 'is required: this spec has no reward file to grade with' });
    });
  if (s.reward === undefined && s.env === undefined && s.eval_every > 0) {
    const holdouts = s.dataset_configs ? s.dataset_configs.map((c, i) => [i, c.dataset] as const) : s.dataset ? [[-1, s.dataset as DatasetSpec] as const] : [];
    for (const [i, d] of holdouts)
      if (d.holdout !== undefined)
        ctx.addIssue({ code: 'custom', path: i < 0 ? ['dataset', 'holdout'] : ['dataset_configs', i, 'dataset', 'holdout'], message: 'a holdout is scored with the reward: add "reward", or score the student with "evals" (a grader)' });
  }
}

/** The zod schema of a GRPO spec; its output (defaults applied, paths as written) and input (defaults optional). */
export const GrpoSpec = GRPO_SPEC.schema;
export type GrpoSpec = z.output<typeof GrpoSpec>;
export type GrpoSpecInput = z.input<typeof GrpoSpec>;
/** A spec ready to run: named, and every file path absolute. */
export type ResolvedGrpoSpec = Resolved<GrpoSpec>;
export const { parseText: parseGrpoSpecText, parseFile: parseGrpoSpecFile, parseValue: parseGrpoSpecValue, resolve: resolveGrpoSpec, jsonSchema: grpoSpecJsonSchema } = GRPO_SPEC;

/** A spec's datasets with their teachers and batch shares: `dataset_configs`, or the one `dataset` (with `teacher`, if any). */
export function specDatasets(spec: Pick<GrpoSpec, 'dataset' | 'dataset_configs' | 'teacher' | 'groups_per_batch'>): Array<{ dataset: DatasetSpec; teacher?: ModelSourceSpec; groups_per_batch: number }> {
  if (spec.dataset_configs) return spec.dataset_configs;
  if (!spec.dataset) throw new Error('the spec has no dataset');
  return [{ dataset: spec.dataset, ...(spec.teacher ? { teacher: spec.teacher } : {}), groups_per_batch: spec.groups_per_batch }];
}

/** The spec's (first) dataset: the one whose problems the playground and the reward tools show. */
export function mainDataset(spec: Pick<GrpoSpec, 'dataset' | 'dataset_configs' | 'teacher' | 'groups_per_batch'>): DatasetSpec {
  return specDatasets(spec)[0]!.dataset;
}

/** Whether the spec distills from a teacher (on-policy distillation). */
export function isDistillation(spec: Pick<GrpoSpec, 'teacher' | 'dataset_configs'>): boolean {
  return spec.teacher !== undefined || spec.dataset_configs !== undefined;
}
