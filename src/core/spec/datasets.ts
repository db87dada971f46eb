// The dataset and model-source parts of run specs that several kinds and layers read: the problems
// dataset (GRPO, evals, data/pool.ts), the chats dataset (SFT, inline evals, training/chats.ts) and a
// second model's source (a distillation teacher, a KL reference: training/teachers.ts).
import * as z from 'zod';
import { datasetSource, heldOutSet, onInvalidLine, oneSource, positiveInt } from './fields';

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

export const ValidationSpec = heldOutSet(
  'validation chats',
  { zero: false, for: 'validation' },
  'Chats kept out of training; their NLL (test/nll) is measured every `eval_every` steps. Absent: no validation.',
);

export const SftDatasetSpec = oneSource(
  z.strictObject({
    ...datasetSource('chats'),
    messages_field: z.string().min(1).default('messages').describe('Field holding a chat list [{role, content}, …] (used when the record has it).'),
    prompt_field: z.string().min(1).default('prompt').describe('Otherwise: field holding the user turn (a string).'),
    completion_field: z.string().min(1).default('completion').describe('Otherwise: field holding the assistant answer (a string).'),
    system_prompt: z.string().optional().describe('System message put before every chat that has none.'),
    validation: ValidationSpec.optional(),
    on_invalid_line: onInvalidLine('chat'),
  }),
).describe('The chats to train on: `path` (JSONL) or `hf` (a Hugging Face dataset); each record a `messages` chat or prompt/completion fields.');
export type SftDatasetSpec = z.output<typeof SftDatasetSpec>;

/**
 * A second model the run scores its samples with (a distillation teacher, a KL reference): a base
 * model, a tinker:// sampler checkpoint, or a named sampler checkpoint of a run directory.
 */
export const ModelSourceSpec = z
  .strictObject({
    model: z.string().min(1).optional().describe('A base model, e.g. "Qwen/Qwen3-8B" or "tinker-studio/arith-gpt".'),
    checkpoint: z
      .string()
      .min(1)
      .optional()
      .describe('A tinker:// sampler path (alone), or, with `run`, the name of one of that run\'s sampler checkpoints (e.g. "final").'),
    run: z
      .string()
      .min(1)
      .optional()
      .describe('A run directory (relative to the spec file) or "latest": the newest run next to the spec (its `runs` folder, its folder, the runs folder) that is not itself a distillation run and has the named checkpoint.'),
  })
  .superRefine((t, ctx) => {
    if (t.run !== undefined) {
      if (t.model !== undefined) ctx.addIssue({ code: 'custom', path: ['model'], message: 'not used with "run" (the run\'s config.json names its model)' });
      if (t.checkpoint === undefined) ctx.addIssue({ code: 'custom', path: ['checkpoint'], message: 'give the name of the run\'s sampler checkpoint, e.g. "final"' });
      else if (t.checkpoint.startsWith('tinker://')) ctx.addIssue({ code: 'custom', path: ['checkpoint'], message: 'with "run", a checkpoint name such as "final"; a tinker:// path goes without "run"' });
    } else if ((t.model === undefined) === (t.checkpoint === undefined)) {
      ctx.addIssue({ code: 'custom', message: t.model === undefined ? 'give "model" (a base model), "checkpoint" (a tinker:// sampler path) or "run" and "checkpoint"' : 'give either "model" or "checkpoint", not both' });
    } else if (t.checkpoint !== undefined && !t.checkpoint.startsWith('tinker://')) {
      ctx.addIssue({ code: 'custom', path: ['checkpoint'], message: 'must be a tinker:// sampler path, e.g. tinker://<run id>/sampler_weights/final (or add "run" to name a run\'s checkpoint)' });
    }
  });
export type ModelSourceSpec = z.output<typeof ModelSourceSpec>;
