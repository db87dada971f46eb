// Preferences collected in the playground: with A/B samples shown, the person marks one side's sample
// better than the other's; the pair is appended to the workspace's pairs file (the `tinker.preferencesFile`
// setting) in the pairs format DPO runs read, with its provenance (both sides' models or checkpoints,
// the sampling settings, the time).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Message } from '../render/types';
import { pairToLine, parsePairsText } from '../dpo/pairs';

export interface CollectedPreference {
  prompt: readonly Message[];
  chosen: string;
  rejected: string;
  /** provenance, kept as the line's `source` */
  source: {
    tool: 'playground';
    chosen: { side: 'A' | 'B'; model: string; sample: number; reward?: number };
    rejected: { side: 'A' | 'B'; model: string; sample: number; reward?: number };
    sampling: Record<string, unknown>;
    ground_truth?: string;
    run: string;
    time: string;
  };
}

/** Appends the pair (after a newline when the file lacks a final one, creating the file and its folder); returns its 1-based line and the file's pair count. */
export async function appendPreference(file: string, p: CollectedPreference): Promise<{ line: number; pairs: number }> {
  const line = pairToLine({ prompt: p.prompt, chosen: [{ role: 'assistant', content: p.chosen }], rejected: [{ role: 'assistant', content: p.rejected }], meta: { source: p.source } });
  // the line must read back as the pair it is meant to be
  const check = parsePairsText(line, 'new pair');
  if (check.pairs.length !== 1) throw new Error(`the preference does not fit the pairs format: ${check.skipped[0]?.reason ?? 'invalid'}`);
  let text = '';
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fs.mkdir(path.dirname(file), { recursive: true });
  }
  const prefix = text === '' || text.endsWith('\n') ? '' : '\n';
  await fs.appendFile(file, `${prefix}${line}\n`, 'utf8');
  const before = text + prefix;
  return { line: before.split('\n').length, pairs: parsePairsText(before, path.basename(file)).pairs.length + 1 };
}
