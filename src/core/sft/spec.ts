// SFT run specs (`*.sft.json`): the zod schema, with names after the cookbook's supervised/train.Config
// where it has one, declared to the spec layer (src/core/spec), which reads spec files, words their
// problems, resolves their paths and builds the JSON schema the editor uses.
import * as z from 'zod';
import { defineSpec, type Resolved } from '../spec/define';
import { positiveInt } from '../spec/fields';
import { inlineEvalsField, type InlineEvalRun } from '../evals/inlineSpec';
import { ModelSourceSpec, SftDatasetSpec } from '../spec/datasets';

// the chats dataset is spec/datasets.ts's (training/chats.ts reads it)
export { SftDatasetSpec, ValidationSpec } from '../spec/datasets';

/** SFT's spec as the spec layer reads it: the chats and validation files resolve against the spec's folder. */
/** What an SFT run gives its inline evaluators: chats to score ("nll" without a grader), no reward file. */
export const SFT_INLINE_EVALS: InlineEvalRun = {
  aRun: 'an SFT run',
  chats: true,
  ownGrader: false,
  describe: 'Inline evaluators next to the validation NLL: "nll" on a chat file (test/<name>/nll), or "sampling" with a grader (test/<name>/env/all/reward/total, pass@k).',
};

export const SFT_SPEC = defineSpec({
  kind: 'sft',
  resumable: ['max_steps', 'num_epochs', 'eval_every'],
  fields: {
    dataset: SftDatasetSpec,
    train_on_what: z
      .enum(['last_assistant_message', 'all_assistant_messages'])
      .default('last_assistant_message')
      .describe('Which assistant turns carry loss: the last one (default) or all of them.'),
    batch_size: positiveInt().default(128).describe('Chats per optimizer step.'),
    num_epochs: positiveInt().optional().describe('Passes over the training chats (default 1). Give this or `max_steps`, or both (the smaller wins).'),
    max_steps: positiveInt().optional().describe('Stop after this many steps.'),
    lr_schedule: z.enum(['linear', 'cosine', 'constant']).default('linear').describe('Multiplier of the learning rate over the steps after warmup.'),
    warmup_steps: z.number().int().min(0).default(0).describe('Steps over which the learning rate rises linearly from lr/warmup_steps to lr.'),
    eval_every: z.number().int().min(0).default(10).describe('Measure validation NLL every this many steps, before the update (0: never).'),
    max_length: positiveInt().optional().describe('Tokens per chat at most; longer chats are cut at the end (the run reports how many).'),
    evals: inlineEvalsField(SFT_INLINE_EVALS),
    teacher: ModelSourceSpec.optional().describe(
      "Top-K soft-target distillation (off-policy): at every trained position the loss is the cross-entropy to the teacher's `n_teacher_targets` most likely next tokens (its top-k prompt log-probs of the chat), weighted by the teacher's probabilities renormalised over those tokens, instead of the chat's own token. The teacher must share the student's tokenizer.",
    ),
    n_teacher_targets: positiveInt()
      .max(1000)
      .optional()
      .describe("With `teacher`: K, the teacher's most likely tokens per position used as soft targets (default 20, the cookbook's). Target tokens and weights of shape (N, K) go to cross_entropy."),
  },
  refine: (s, ctx) => {
    if (s.n_teacher_targets !== undefined && s.teacher === undefined)
      ctx.addIssue({ code: 'custom', path: ['n_teacher_targets'], message: 'only used with "teacher" (top-K soft targets from a teacher)' });
    if (s.warmup_steps > 0 && s.max_steps !== undefined && s.warmup_steps >= s.max_steps)
      ctx.addIssue({ code: 'custom', path: ['warmup_steps'], message: `must be below max_steps (${s.max_steps})` });
  },
  files: [['dataset', 'path'], ['dataset', 'validation', 'path'], ['evals', '*', 'dataset', 'path'], ['evals', '*', 'grader', 'file']],
  words: {
    backendRuns: 'training',
    learningRate: "Peak Adam learning rate. Default: the cookbook's get_lr formula for the model.",
    seed: 'Seed of the shuffles (validation split, batch order per epoch) and of the LoRA initialisation.',
  },
  describe: 'An SFT run on Tinker Studio: model, chats and hyper-parameters.',
});

export const SftSpec = SFT_SPEC.schema;
export type SftSpec = z.output<typeof SftSpec>;
export type ResolvedSftSpec = Resolved<SftSpec>;
export const { parseText: parseSftSpecText, parseFile: parseSftSpecFile, parseValue: parseSftSpecValue, fromConfig: sftSpecFromConfig, jsonSchema: sftSpecJsonSchema } = SFT_SPEC;
