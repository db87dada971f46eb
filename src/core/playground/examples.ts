// "Save as reward example": a playground sample becomes a line of the reward file's companion
// `<reward>.examples.jsonl`, in the format the reward CodeLens reads (core/reward/examples.ts).
import { promises as fs } from 'node:fs';
import { examplesFileFor } from '../reward/files';
import { parseExamples } from '../reward/examples';

export interface NewExample {
  completion: string;
  groundTruth: string;
  expected: number;
}

/** Appends the example (after a newline when the file lacks a final one); returns the file and its 1-based line. */
export async function appendRewardExample(rewardFile: string, example: NewExample): Promise<{ file: string; line: number }> {
  if (!Number.isFinite(example.expected)) throw new Error(`the expected reward must be a finite number (got ${example.expected})`);
  const file = examplesFileFor(rewardFile);
  let text = '';
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const line = JSON.stringify({ completion: example.completion, ground_truth: example.groundTruth, expected: example.expected });
  // the line must read back as the example it is meant to be
  const check = parseExamples(line, 'new example');
  if (check.examples.length !== 1) throw new Error(`the example does not fit the examples format: ${check.diagnostics[0]?.message ?? 'invalid'}`);
  const prefix = text === '' || text.endsWith('\n') ? '' : '\n';
  await fs.appendFile(file, `${prefix}${line}\n`, 'utf8');
  const lines = (text + prefix).split('\n').length;
  return { file, line: lines };
}
