// One sample of one group as Tinker Studio writes it per iteration (`iteration_NNNNNN/train_samples.jsonl`,
// `eval_<name>_samples.jsonl`): the writer, every reader and the panels' payloads use this schema.
// The Python tinker-cookbook writes no such files (only rollout summaries without text).
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { readIfExists } from '../fs/read';
import { SampleRecord } from '../../protocol/sampleSchema';
import type { JsonlProblem } from './jsonl';
import { parseRecords } from './runDirectory';
import { iterationDirName } from './runWriter';

export { RewardError, SampleRecord } from '../../protocol/sampleSchema';

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

/** The first part of a samples file read before the breakdown can paint; the rest fills in. */
export const FIRST_READ_BYTES = 2 * 2 ** 20;

export interface SamplesProgress extends SamplesRead {
  bytesRead: number;
  bytesTotal: number;
}

/**
 * Reads one iteration's samples file in chunks, each chunk's complete lines through parseSamples.
 * `onFirst` gets the complete groups of the first chunk when more of the file follows (a large
 * iteration can paint before the rest is read); the promise has the whole file. Undefined when the
 * iteration has no such file.
 */
export async function readSamplesInChunks(
  runDir: string,
  iteration: number,
  split: SampleSplit,
  onFirst: (first: SamplesProgress) => void,
): Promise<SamplesRead | undefined> {
  const file = samplesFile(runDir, iteration, split);
  let bytesTotal: number;
  try {
    bytesTotal = (await fs.stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const records: SampleRecord[] = [];
  const problems: JsonlProblem[] = [];
  let pending = '';
  let lineNo = 0;
  let bytesRead = 0;
  let first = true;
  // bytes are decoded as a stream so that a character split across chunks stays whole
  const decoder = new StringDecoder('utf8');
  for await (const chunk of createReadStream(file, { highWaterMark: FIRST_READ_BYTES })) {
    if (!Buffer.isBuffer(chunk)) throw new Error(`${file}: unexpected chunk from the file stream`);
    bytesRead += chunk.length;
    const text = pending + decoder.write(chunk);
    // the text after the last "\n" is a line still to come (or still being written): left for later
    const end = text.lastIndexOf('\n') + 1;
    pending = text.slice(end);
    const read = parseSamples(text.slice(0, end), file);
    for (const r of read.records) records.push(r);
    for (const p of read.problems) problems.push({ ...p, line: p.line + lineNo });
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineNo++;
    if (first && bytesRead < bytesTotal) {
      // the last group read may continue in the next chunk
      const last = records.at(-1)?.group_idx;
      onFirst({ file, records: records.filter((r) => r.group_idx !== last), problems: [...problems], bytesRead, bytesTotal });
    }
    first = false;
  }
  return { file, records, problems };
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
