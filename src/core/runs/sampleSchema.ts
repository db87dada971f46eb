// The schema of one per-sample record (see sampleRecord.ts). Only zod here: the webview panels
// import it too.
import { z } from 'zod';

export const RewardError = z.object({
  kind: z.string(),
  message: z.string(),
  traceback: z.string().optional(),
  /** the line of the reward file the traceback points at */
  line: z.number().int().positive().optional(),
});
export type RewardError = z.infer<typeof RewardError>;

export const SampleRecord = z.object({
  group_idx: z.number().int().min(0),
  traj_idx: z.number().int().min(0),
  problem_id: z.string(),
  /** the rendered prompt, special tokens written out */
  prompt: z.string(),
  /** the sampled text, stop token included */
  completion: z.string(),
  /** the parsed message content the reward function saw */
  content: z.string(),
  ground_truth: z.string(),
  completion_tokens: z.array(z.number().int()),
  logprobs: z.array(z.number()),
  reward: z.number(),
  advantage: z.number(),
  stop_reason: z.string(),
  termination: z.string(),
  reward_error: RewardError.optional(),
});
export type SampleRecord = z.infer<typeof SampleRecord>;

/** A sample without its token ids and log-probs (the breakdown panel's list; tokens load on demand). */
export const SampleSummary = SampleRecord.omit({ completion_tokens: true, logprobs: true }).extend({ token_count: z.number().int().nonnegative() });
export type SampleSummary = z.infer<typeof SampleSummary>;

export function summarizeSample(r: SampleRecord): SampleSummary {
  const { completion_tokens, logprobs: _logprobs, ...rest } = r;
  return { ...rest, token_count: completion_tokens.length };
}
