// GRPO run specs (`*.grpo.json`): the zod schema, with field names after the tinker-cookbook's
// rl/train.Config where it has one, declared to the spec layer (src/core/spec), which reads spec
// files, words their problems, resolves their paths and builds the JSON schema the editor uses.
import * as path from 'node:path';
import * as z from 'zod';
import { defineSpec, type Resolved } from '../spec/define';
import { datasetSource, heldOutSet, onInvalidLine, oneSource, optionalSeed, positiveInt } from '../spec/fields';
import { REWARD_FILE_EXTENSIONS } from '../reward/files';
import { inlineEvalsField } from '../evals/inlineSpec';

export const HoldoutSpec = heldOutSet('holdout problems', { zero: true }, 'Problems kept out of training and used by the evaluations every `eval_every` iterations. Absent: no holdout.');
export type HoldoutSpec = z.output<typeof HoldoutSpec>;

export const DatasetSpec = oneSource(
  z
    .strictObject({
      ...datasetSource('problems'),
      prompt_field: z
        .string()
        .min(1)
        .default('question')
        .describe('Field holding the question (a string) or a chat list [{role, content}, …]. A line without it may give a chat list in `messages`.'),
      ground_truth_field: z
        .string()
        .min(1)
        .default('answer')
        .describe('Field holding the ground truth passed to compute_reward (a string, or a number turned into a string).'),
      system_prompt: z.string().optional().describe('System message put before every question.'),
      holdout: HoldoutSpec.optional(),
      holdout_max: positiveInt().optional().describe('At most this many holdout problems are evaluated (a sample chosen by `seed`).'),
      on_invalid_line: onInvalidLine('problem'),
    })
    .superRefine((d, ctx) => {
      if (d.holdout_max !== undefined && d.holdout === undefined)
        ctx.addIssue({ code: 'custom', path: ['holdout_max'], message: 'there is no holdout to cap (add dataset.holdout)' });
    }),
).describe('Where the prompts and ground truths come from: `path` (JSONL) or `hf` (a Hugging Face dataset).');
export type DatasetSpec = z.output<typeof DatasetSpec>;

export const REWARD_EXTENSIONS = REWARD_FILE_EXTENSIONS;

export const RewardSpec = z
  .strictObject({
    file: z
      .string()
      .min(1)
      .refine((f) => (REWARD_EXTENSIONS as readonly string[]).includes(path.extname(f).toLowerCase()), {
        message: `must be a ${REWARD_EXTENSIONS.slice(0, -1).join(', ')} or ${REWARD_EXTENSIONS.at(-1)} file`,
      })
      .describe(
        'Reward function file, relative to the spec file: Python `compute_reward(completion, ground_truth) -> float` or JS/TS `computeReward(completion, groundTruth)`.',
      ),
    timeout_ms: positiveInt().default(10_000).describe('Per-call time limit; a call over it scores 0 and its worker is replaced.'),
    workers: positiveInt().optional().describe('Parallel reward workers (default: 2).'),
  })
  .describe('The reward function.');

const PPO_KEYS = ['clip_low_threshold', 'clip_high_threshold'];

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
export const GRPO_SPEC = defineSpec({
  kind: 'grpo',
  describe: 'A GRPO run on Tinker Studio: model, dataset, reward function and hyper-parameters.',
  words: {
    backendRuns: 'training and sampling',
    learningRate: "Adam learning rate (constant). Default: the cookbook's get_lr formula for the model.",
    seed: 'Seed of the dataset shuffle and holdout split.',
  },
  files: [['dataset', 'path'], ['dataset', 'holdout', 'path'], ['reward', 'file'], ['evals', '*', 'dataset', 'path'], ['evals', '*', 'grader', 'file']],
  fields: {
    eval_every: z.number().int().min(0).default(20).describe('Evaluate on the holdout every this many iterations, before the update (0: never).'),
    groups_per_batch: positiveInt().default(16).describe('Problems (groups) per iteration.'),
    group_size: z
      .number()
      .int()
      .min(2, { message: 'must be at least 2 (advantages are centred within a group, so one sample learns nothing)' })
      .default(8)
      .describe('Samples per problem; advantages are centred within each group.'),
    max_tokens: positiveInt().describe('Most tokens sampled per completion.'),
    temperature: z.number().min(0).default(1).describe('Sampling temperature (0 = greedy).'),
    stop: z
      .array(z.string().min(1))
      .optional()
      .describe("Stop strings, replacing the renderer's stop sequences."),
    iterations: positiveInt().describe('Training iterations (batches) to run.'),
    dataset: DatasetSpec,
    reward: RewardSpec,
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
    evals: inlineEvalsField('grpo'),
  },
  refine: (s, ctx) => {
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

/** The zod schema of a GRPO spec; its output (defaults applied, paths as written) and input (defaults optional). */
export const GrpoSpec = GRPO_SPEC.schema;
export type GrpoSpec = z.output<typeof GrpoSpec>;
export type GrpoSpecInput = z.input<typeof GrpoSpec>;
/** A spec ready to run: named, and every file path absolute. */
export type ResolvedGrpoSpec = Resolved<GrpoSpec>;
export const { parseText: parseGrpoSpecText, parseFile: parseGrpoSpecFile, parseValue: parseGrpoSpecValue, resolve: resolveGrpoSpec, jsonSchema: grpoSpecJsonSchema } = GRPO_SPEC;
