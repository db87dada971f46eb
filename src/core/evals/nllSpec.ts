// The `nll` field of an eval spec: held-out chats in the SFT format (the SFT dataset's fields, read by
// training/chats.ts), scored by their NLL under each target with the renderer's train-on-what rule, as
// an SFT run's validation scores its chats. Nothing is sampled, so the sampling fields do not apply.
import * as z from 'zod';
import { SftDatasetSpec } from '../spec/datasets';
import { oneSource, positiveInt } from '../spec/fields';

// an SFT dataset's fields, without the validation split (the chats are all held out already)
const { validation: _validation, ...chatFields } = SftDatasetSpec.shape;

export const NllDatasetSpec = oneSource(
  z.strictObject({
    ...chatFields,
    max_chats: positiveInt().optional().describe('Score at most this many chats: the first ones of the file (the same chats for every target).'),
  }),
).describe('The held-out chats: `path` (JSONL) or `hf` (a Hugging Face dataset), each record a `messages` chat or prompt/completion fields, as in an SFT spec.');
export type NllDatasetSpec = z.output<typeof NllDatasetSpec>;

export const NllSpec = z
  .strictObject({
    dataset: NllDatasetSpec,
    train_on_what: z
      .enum(['last_assistant_message', 'all_assistant_messages'])
      .default('last_assistant_message')
      .describe('Which assistant turns are scored: the last one (default) or all of them (the SFT rule of the same name).'),
    max_length: positiveInt().optional().describe('Tokens per chat at most; longer chats are cut at the end, as in SFT (a chat cut before its scored tokens is left out and reported).'),
  })
  .describe("The NLL of held-out chats instead of sampling: each chat's mean NLL per scored token under each target (forward only), their mean over chats with a bootstrap interval, and paired comparisons on the same chats.");
export type NllSpec = z.output<typeof NllSpec>;

/** The top-level fields an NLL eval refuses: they are about sampling and grading. */
export const NLL_REFUSED_FIELDS = ['dataset', 'grader', 'env', 'n', 'temperature', 'top_p', 'top_k', 'max_tokens', 'stop', 'seed'] as const;

/** Why an NLL eval refuses `field`. */
export function nllRefusal(field: (typeof NLL_REFUSED_FIELDS)[number]): string {
  if (field === 'dataset') return 'not used with "nll": the chats go in nll.dataset (the top-level dataset holds problems to sample)';
  if (field === 'grader' || field === 'env') return `not used with "nll": an NLL eval scores the chats' own tokens, it grades no samples (give "${field}" or "nll", not both)`;
  return `not used with "nll": an NLL eval samples nothing (${field} is a sampling field); remove it`;
}
