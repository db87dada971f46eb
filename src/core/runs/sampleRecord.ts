// One sample of one group as Tinker Studio writes it per iteration (`iteration_NNNNNN/train_samples.jsonl`,
// `eval_<name>_samples.jsonl`): the writer, every reader and the panels' payloads use this schema.
// The Python tinker-cookbook writes no such files (only rollout summaries without text).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readIfExists } from '../fs/read';
import { SampleRecord } from './sampleSchema';
import type { JsonlProblem } from './jsonl';
import { parseRecords } from './runDirectory';
import { iterationDirName } from './runWriter';

export { RewardError, SampleRecord } from './sampleSchema';

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
  const text = await readIfExists(file);
  return text === undefined ? undefined : parseSamples(text, file);
}

const ITERATION_DIR = /^iteration_(\d{6,})$/;

/** The iterations of a run that have a training / holdout-evaluation samples file, ascending. */
export async function sampledIterations(runDir: string): Promise<{ train: number[]; eval: number[] }> {
  let names: string[];
  try {
    names = await fs.readdir(runDir);
  } catch {
    return { train: [], eval: [] };
  }
  const train: number[] = [];
  const evals: number[] = [];
  for (const name of names) {
    const m = ITERATION_DIR.exec(name);
    if (!m) continue;
    let files: string[];
    try {
      files = await fs.readdir(path.join(runDir, name));
    } catch {
      continue;
    }
    if (files.includes(TRAIN_SAMPLES)) train.push(Number(m[1]));
    if (files.includes(samplesFileName(HOLDOUT))) evals.push(Number(m[1]));
  }
  return { train: train.sort((a, b) => a - b), eval: evals.sort((a, b) => a - b) };
}

/** The holdout evaluation's samples (the cookbook's evaluator name "test"). */
export const HOLDOUT: SampleSplit = { kind: 'eval', name: 'test' };

/**
 * Why an iteration has no samples file, and what the directory has instead: Python tinker-cookbook
 * runs log rollout summaries (rewards and lengths, no text) and HTML/text logtree transcripts.
 */
export async function describeMissingSamples(runDir: string, iteration: number, split: SampleSplit): Promise<string> {
  const dir = path.join(runDir, iterationDirName(iteration));
  const wanted = samplesFileName(split);
  let files: string[];
  try {
    files = (await fs.readdir(dir)).sort();
  } catch {
    return `${iterationDirName(iteration)}/ does not exist in ${runDir}: that iteration has not written its files yet (or the run logged no per-iteration files).`;
  }
  const summaries = files.filter((f) => f.endsWith('_rollout_summaries.jsonl'));
  const lines: string[] = [];
  for (const f of summaries) {
    const text = await fs.readFile(path.join(dir, f), 'utf8');
    lines.push(`${f} (${text.split('\n').filter((l) => l.trim()).length} rollouts)`);
  }
  const others = files.filter((f) => !summaries.includes(f));
  return (
    `No ${wanted} in ${iterationDirName(iteration)}/: per-sample text, rewards and advantages are written by Tinker Studio's runs only; ` +
    `a Python tinker-cookbook run logs rollout summaries (rewards and token counts, no text). ` +
    (files.length ? `This iteration has: ${[...lines, ...others].join(', ')}.` : 'This iteration folder is empty.')
  );
}
