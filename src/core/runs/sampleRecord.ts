// One sample of one group as Tinker Studio writes it per iteration (`iteration_NNNNNN/train_samples.jsonl`,
// `eval_<name>_samples.jsonl`): the writer, every reader and the panels' payloads use this schema.
// The Python tinker-cookbook writes no such files (only rollout summaries without text).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { JsonlProblem } from './jsonl';
import { parseRecords } from './runDirectory';
import { iterationDirName } from './runWriter';

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

/** Which samples file of an iteration: training, or an evaluation by its name. */
export type SampleSplit = { kind: 'train' } | { kind: 'eval'; name: string };

export const TRAIN_SAMPLES = 'train_samples.jsonl';

export function samplesFileName(split: SampleSplit): string {
  return split.kind === 'train' ? TRAIN_SAMPLES : `eval_${split.name}_samples.jsonl`;
}

export function samplesFile(runDir: string, iteration: number, split: SampleSplit): string {
  return path.join(runDir, iterationDirName(iteration), samplesFileName(split));
}

export interface SamplesRead {
  file: string;
  records: SampleRecord[];
  /** lines that are not sample records (a line still being written is left out, not a problem) */
  problems: JsonlProblem[];
}

/** Parses a samples file's text. */
export function parseSamples(text: string, file: string): SamplesRead {
  const r = parseRecords(text, file, SampleRecord);
  return { file, records: r.records, problems: r.problems };
}

/** Reads one iteration's samples file; undefined when the iteration has none. */
export async function readSamples(runDir: string, iteration: number, split: SampleSplit): Promise<SamplesRead | undefined> {
  const file = samplesFile(runDir, iteration, split);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseSamples(text, file);
}
