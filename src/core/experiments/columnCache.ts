// A run's metrics as columns (compare.ts RunColumns), built once from metrics.jsonl, extended as rows
// arrive (only the bytes appended since are read), and persisted so the next load skips the parse.
// The cache records how much of metrics.jsonl it holds (complete lines only) and a fingerprint of
// that prefix (its size, its first and last bytes); a file that no longer starts with those bytes,
// or is shorter, was rewritten and the cache is rebuilt from scratch. The merge rule is the one every
// reader follows (src/protocol/metricsRows.ts): a later row repeating a key of its step replaces the
// step's row whole; a row of new keys adds them.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RunColumns } from '../../protocol/compareData';
import { writeFileAtomic } from '../runs/runWriter';

const CACHE_VERSION = 1;
const FINGERPRINT_BYTES = 256;

const ColumnCacheFile = z.object({
  version: z.literal(CACHE_VERSION),
  /** bytes of metrics.jsonl the columns hold (up to the end of a complete line) */
  consumed: z.number().int().nonnegative(),
  /** sha1 of the first and of the last FINGERPRINT_BYTES bytes of that prefix */
  head: z.string(),
  tail: z.string(),
  steps: z.array(z.number()),
  cols: z.record(z.string(), z.array(z.number().nullable())),
});
type ColumnCacheFile = z.infer<typeof ColumnCacheFile>;

/** Where a run's cache lives: by default `<runDir>/.tinker-cache/columns.json`. */
export type CacheLocation = (runDir: string) => string;
export const besideRun: CacheLocation = (runDir) => path.join(runDir, '.tinker-cache', 'columns.json');
/** In a folder of its own (the extension's storage), named by a hash of the run directory's path. */
export function inFolder(folder: string): CacheLocation {
  return (runDir) => path.join(folder, `${createHash('sha1').update(path.resolve(runDir)).digest('hex').slice(0, 16)}.json`);
}

function sha1(b: Buffer): string {
  return createHash('sha1').update(b).digest('hex');
}

/** Mutable columns plus the step → index map, extended row by row. */
class ColumnBuilder {
  readonly steps: number[];
  readonly cols: Record<string, (number | null)[]>;
  private index = new Map<number, number>();
  /** false once a row arrived out of step order: the columns must be re-sorted */
  private sorted = true;

  constructor(from?: RunColumns) {
    this.steps = from ? from.steps.slice() : [];
    this.cols = {};
    if (from) for (const [k, v] of Object.entries(from.cols)) this.cols[k] = v.slice();
    this.steps.forEach((s, i) => this.index.set(s, i));
  }

  add(row: Record<string, unknown>): void {
    const step = row['step'];
    if (typeof step !== 'number' || !Number.isInteger(step)) return;
    let i = this.index.get(step);
    const keys = Object.keys(row).filter((k) => k !== 'step');
    if (i === undefined) {
      i = this.steps.length;
      if (i > 0 && step < this.steps[i - 1]!) this.sorted = false;
      this.steps.push(step);
      this.index.set(step, i);
      for (const c of Object.values(this.cols)) c.push(null);
    } else if (keys.some((k) => this.cols[k] !== undefined && this.cols[k][i!] !== null && this.cols[k][i!] !== undefined)) {
      // the step logged again: its row is replaced whole
      for (const c of Object.values(this.cols)) c[i] = null;
    }
    for (const k of keys) {
      const v = row[k];
      // non-numbers (strings) are not plotted; NaN and ±Infinity are kept as null (JSON cannot hold them)
      if (typeof v !== 'number' && v !== null) continue;
      let col = this.cols[k];
      if (!col) {
        col = new Array<number | null>(this.steps.length).fill(null);
        this.cols[k] = col;
      }
      col[i] = typeof v === 'number' && Number.isFinite(v) ? v : null;
    }
  }

  done(): RunColumns {
    if (this.sorted) return { steps: this.steps, cols: this.cols };
    const order = this.steps.map((_, i) => i).sort((a, b) => this.steps[a]! - this.steps[b]!);
    const cols: Record<string, (number | null)[]> = {};
    for (const [k, c] of Object.entries(this.cols)) cols[k] = order.map((i) => c[i] ?? null);
    return { steps: order.map((i) => this.steps[i]!), cols };
  }
}

/** Parses complete JSONL lines (bad lines are skipped: the readers report them elsewhere). */
function parseLines(text: string, into: ColumnBuilder): void {
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    let v: unknown;
    try {
      // the loops write NaN for a metric that is not a number (JSON.parse rejects it)
      v = JSON.parse(t.replace(/:\s*(-?Infinity|NaN)\b/g, ':null'));
    } catch {
      continue;
    }
    if (v && typeof v === 'object' && !Array.isArray(v)) into.add(v as Record<string, unknown>);
  }
}

export interface LoadedColumns {
  columns: RunColumns;
  /** how the load went: from scratch, from the cache as is, or the cache plus the appended rows */
  source: 'built' | 'cached' | 'extended';
}

/**
 * A run's columns. Reads the cache at `location(runDir)` when it still describes a prefix of
 * metrics.jsonl, parses only what was appended since, and writes the cache back when it changed.
 * A run without metrics.jsonl has no columns (steps []).
 */
export async function loadColumns(runDir: string, location: CacheLocation = besideRun, o: { write?: boolean } = {}): Promise<LoadedColumns> {
  const metrics = path.join(runDir, 'metrics.jsonl');
  let buf: Buffer;
  try {
    buf = await fs.readFile(metrics);
  } catch {
    return { columns: { steps: [], cols: {} }, source: 'built' };
  }
  const end = buf.lastIndexOf(0x0a) + 1; // complete lines only: a line being written waits
  const cacheFile = location(runDir);
  let cached: ColumnCacheFile | undefined;
  try {
    const parsed = ColumnCacheFile.safeParse(JSON.parse(await fs.readFile(cacheFile, 'utf8')));
    if (parsed.success) cached = parsed.data;
  } catch {
    cached = undefined;
  }
  const fingerprint = (n: number) => ({ head: sha1(buf.subarray(0, Math.min(n, FINGERPRINT_BYTES))), tail: sha1(buf.subarray(Math.max(0, n - FINGERPRINT_BYTES), n)) });
  let source: LoadedColumns['source'] = 'built';
  let builder: ColumnBuilder;
  let from = 0;
  if (cached && cached.consumed <= end) {
    const f = fingerprint(cached.consumed);
    if (f.head === cached.head && f.tail === cached.tail) {
      builder = new ColumnBuilder({ steps: cached.steps, cols: cached.cols });
      from = cached.consumed;
      source = from === end ? 'cached' : 'extended';
    } else builder = new ColumnBuilder();
  } else builder = new ColumnBuilder();
  if (from < end) parseLines(buf.subarray(from, end).toString('utf8'), builder);
  const columns = builder.done();
  if (source !== 'cached' && o.write !== false) {
    const f = fingerprint(end);
    const file: ColumnCacheFile = { version: CACHE_VERSION, consumed: end, head: f.head, tail: f.tail, steps: columns.steps, cols: columns.cols };
    try {
      await fs.mkdir(path.dirname(cacheFile), { recursive: true });
      writeFileAtomic(cacheFile, JSON.stringify(file));
    } catch {
      // a read-only run directory: the columns are still right, only the next load is slower
    }
  }
  return { columns, source };
}
