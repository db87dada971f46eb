// Read-only documents of samples under the tinker-sample: scheme, for the native diff editor, and
// "Tinker: Compare Samples" (two samples of a group; by default its best against its worst reward);
// the comparisons across evaluations and runs are in sampleDiffs.ts.
// A URI names a sample by run directory, iteration, split, group and sample in its query.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import type { SampleRecord } from '../../protocol/sampleSchema';
import type { SampleAddress } from '../../core/runs/sampleText';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';

export const SAMPLE_SCHEME = 'tinker-sample';

/**
 * The document of a sample. `label` names it instead of its iteration, group and sample (the entries
 * of a multi-diff are titled by their documents' names); the query alone says which sample it is.
 */
export function sampleUri(a: SampleAddress, label?: string): vscode.Uri {
  const query = new URLSearchParams({ run: a.runDir, it: String(a.iteration), split: a.split, g: String(a.groupIdx), s: String(a.trajIdx) });
  const where = label !== undefined ? label.replace(/[/\\]/g, '∕') : `iteration_${String(a.iteration).padStart(6, '0')}/${a.split}/group-${a.groupIdx}-sample-${a.trajIdx}.txt`;
  return vscode.Uri.from({ scheme: SAMPLE_SCHEME, path: `/${path.basename(a.runDir)}/${where}`, query: query.toString() });
}

async function addressOf(uri: vscode.Uri): Promise<SampleAddress> {
  const { z } = await import('zod');
  const q = Object.fromEntries(new URLSearchParams(uri.query));
  const parsed = z
    .object({ run: z.string().min(1), it: z.coerce.number().int().nonnegative(), split: z.enum(['train', 'eval']), g: z.coerce.number().int().nonnegative(), s: z.coerce.number().int().nonnegative() })
    .safeParse(q);
  if (!parsed.success) throw new Error(`${uri.toString()}: not a sample address (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
  const d = parsed.data;
  return { runDir: d.run, iteration: d.it, split: d.split, groupIdx: d.g, trajIdx: d.s };
}

/**
 * Samples files parsed in the last moments, while unchanged on disk: a command and the two (for What
 * Changed, 2×N) documents of the diff it opens all read the same file, which is parsed once.
 */
const recent = new Map<string, { mtimeMs: number; size: number; records: Promise<SampleRecord[]>; expiry: NodeJS.Timeout }>();
/** how long a parsed file is kept after it was last asked for */
const RECENT_MS = 30_000;

/** The records of the samples file holding `a` (its group and sample are not used). */
export async function readSample(a: Omit<SampleAddress, 'groupIdx' | 'trajIdx'>): Promise<SampleRecord[]> {
  const { readSamples, samplesFile, HOLDOUT } = await import('../../core/runs/sampleRecord');
  const split = a.split === 'train' ? { kind: 'train' as const } : HOLDOUT;
  const file = samplesFile(a.runDir, a.iteration, split);
  const missing = () => new Error(`${a.runDir} has no ${a.split} samples for iteration ${a.iteration}`);
  const stat = await fs.stat(file).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ENOENT' ? missing() : err;
  });
  const hit = recent.get(file);
  if (hit) clearTimeout(hit.expiry);
  const records =
    hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size
      ? hit.records
      : readSamples(a.runDir, a.iteration, split).then((read) => {
          if (!read) throw missing();
          return read.records;
        });
  const forget = () => {
    const entry = recent.get(file);
    if (entry?.records !== records) return;
    clearTimeout(entry.expiry);
    recent.delete(file);
  };
  recent.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, records, expiry: setTimeout(forget, RECENT_MS).unref() });
  records.catch(forget);
  return records;
}

/** Other owners of tinker-sample: documents, by the URI's authority (run samples have none); a reader answers undefined for a sample it does not hold. */
type SampleReader = (uri: vscode.Uri) => string | undefined;
const sources = new Map<string, Set<SampleReader>>();

export function registerSampleSource(authority: string, read: SampleReader): vscode.Disposable {
  const readers = sources.get(authority) ?? new Set<SampleReader>();
  readers.add(read);
  sources.set(authority, readers);
  return new vscode.Disposable(() => readers.delete(read));
}

class SampleDocuments implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (uri.authority) {
      for (const read of sources.get(uri.authority) ?? []) {
        const text = read(uri);
        if (text !== undefined) return text;
      }
      throw new Error(`${uri.scheme}://${uri.authority}${uri.path}: no such sample`);
    }
    const a = await addressOf(uri);
    const s = (await readSample(a)).find((r) => r.group_idx === a.groupIdx && r.traj_idx === a.trajIdx);
    if (!s) throw new Error(`iteration ${a.iteration} of ${a.runDir} has no sample ${a.trajIdx} in group ${a.groupIdx}`);
    const { sampleText } = await import('../../core/runs/sampleText');
    return sampleText(a, s);
  }
}

export function registerSampleDocuments(log: Log): vscode.Disposable[] {
  return [
    vscode.workspace.registerTextDocumentContentProvider(SAMPLE_SCHEME, new SampleDocuments()),
    ...registerTable({ [COMMAND.compareSamples]: (arg?: unknown) => compareSamples(arg) }, log),
  ];
}

/** Opens two samples of a group in the diff editor (default: the best reward left, the worst right). */
async function compareSamples(arg: unknown): Promise<{ left: string; right: string } | undefined> {
  const { z } = await import('zod');
  const parsed = z
    .object({
      runDir: z.string().min(1),
      iteration: z.number().int().nonnegative(),
      split: z.enum(['train', 'eval']).default('train'),
      groupIdx: z.number().int().nonnegative(),
      left: z.number().int().nonnegative().optional(),
      right: z.number().int().nonnegative().optional(),
    })
    .safeParse(arg);
  if (!parsed.success) {
    void vscode.window.showInformationMessage('Tinker: Compare Samples compares two samples of a group: open an iteration with Tinker: Show Iteration… and use "Compare best vs worst" on a group.');
    return undefined;
  }
  const o = parsed.data;
  const group = (await readSample(o)).filter((r) => r.group_idx === o.groupIdx);
  if (group.length < 2) throw new Error(`group ${o.groupIdx} of iteration ${o.iteration} has fewer than two samples`);
  let best = group[0]!;
  let worst = group[0]!;
  for (const s of group) {
    if (s.reward > best.reward) best = s;
    if (s.reward < worst.reward) worst = s;
  }
  if (best === worst) worst = group.find((s) => s !== best)!;
  const leftIdx = o.left ?? best.traj_idx;
  const rightIdx = o.right ?? worst.traj_idx;
  const rewardOf = (t: number) => group.find((s) => s.traj_idx === t)?.reward;
  const left = sampleUri({ ...o, trajIdx: leftIdx });
  const right = sampleUri({ ...o, trajIdx: rightIdx });
  const title = `${path.basename(o.runDir)} #${o.iteration} group ${o.groupIdx}: sample ${leftIdx} (reward ${rewardOf(leftIdx)}) ↔ sample ${rightIdx} (reward ${rewardOf(rightIdx)})`;
  await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  return { left: left.toString(), right: right.toString() };
}
