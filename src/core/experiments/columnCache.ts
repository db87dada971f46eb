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
import * as z from 'zod';
import type { RunColumns } from '../../protocol/compareData';
import { writeFileAtomicSync } from '../fs/atomic';

const CACHE_VERSION = 2;
const FINGERPRINT_BYTES = 256;
/** The file starts with these 8 bytes; a file that does not (a version-1 JSON cache, garbage) is rebuilt. */
const MAGIC = Buffer.from('TKCOLS2\n', 'latin1');

// The cache file: MAGIC, the header's byte length (u32 LE) and 4 zero bytes, the header (JSON, padded
// with spaces to a multiple of 8 bytes), then Float64 LE arrays of n values each: the steps, then one
// column per header key in order (NaN: not logged). One read, no JSON of points.
const CacheHeader = z.object({
  version: z.literal(CACHE_VERSION),
  /** bytes of metrics.jsonl the columns hold (up to the end of a complete line) */
  consumed: z.number().int().nonnegative(),
  /** sha1 of the first and of the last FINGERPRINT_BYTES bytes of that prefix */
  head: z.string(),
  tail: z.string(),
  /** rows (steps) */
  n: z.number().int().nonnegative(),
  keys: z.array(z.string()),
});
type CacheHeader = z.infer<typeof CacheHeader>;

/** Where a run's cache lives: by default `<runDir>/.tinker-cache/columns.bin`. */
export type CacheLocation = (runDir: string) => string;
export const besideRun: CacheLocation = (runDir) => path.join(runDir, '.tinker-cache', 'columns.bin');
/** In a folder of its own (the extension's storage), named by a hash of the run directory's path. */
export function inFolder(folder: string): CacheLocation {
  return (runDir) => path.join(folder, `${createHash('sha1').update(path.resolve(runDir)).digest('hex').slice(0, 16)}.bin`);
}

function sha1(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex');
}

/** The cache file's bytes for these columns. */
export function encodeColumnCache(columns: RunColumns, meta: { consumed: number; head: string; tail: string }): Buffer {
  const keys = Object.keys(columns.cols);
  const n = columns.steps.length;
  const header: CacheHeader = { version: CACHE_VERSION, consumed: meta.consumed, head: meta.head, tail: meta.tail, n, keys };
  let json = JSON.stringify(header);
  const jsonBytes = Buffer.byteLength(json, 'utf8');
  json += ' '.repeat((8 - ((16 + jsonBytes) % 8)) % 8);
  const headerBytes = Buffer.from(json, 'utf8');
  const start = 16 + headerBytes.length;
  const out = Buffer.alloc(start + 8 * n * (1 + keys.length));
  MAGIC.copy(out, 0);
  out.writeUInt32LE(headerBytes.length, 8);
  headerBytes.copy(out, 16);
  // the buffer is fresh (offset 0, start a multiple of 8): a Float64Array over it is aligned
  const f = new Float64Array(out.buffer, out.byteOffset + start, n * (1 + keys.length));
  for (let i = 0; i < n; i++) f[i] = columns.steps[i]!;
  keys.forEach((k, j) => {
    const col = columns.cols[k]!;
    const base = (j + 1) * n;
    for (let i = 0; i < n; i++) {
      const v = col[i];
      f[base + i] = v === null || v === undefined ? NaN : v;
    }
  });
  return out;
}

/** The columns and header of a cache file's bytes; throws an Error naming what is wrong. */
export function decodeColumnCache(buf: Buffer): { columns: RunColumns; consumed: number; head: string; tail: string } {
  if (buf.length < 16 || !buf.subarray(0, 8).equals(MAGIC)) throw new Error('not a version-2 column cache (wrong magic bytes)');
  const headerLength = buf.readUInt32LE(8);
  if (16 + headerLength > buf.length) throw new Error(`truncated: a ${headerLength}-byte header does not fit in ${buf.length} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(buf.subarray(16, 16 + headerLength).toString('utf8'));
  } catch (err) {
    throw new Error(`header: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = CacheHeader.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`header field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const h = parsed.data;
  const start = 16 + headerLength;
  const want = start + 8 * h.n * (1 + h.keys.length);
  if (start % 8 !== 0 || buf.length !== want) throw new Error(`truncated or padded: ${buf.length} bytes where the header promises ${want}`);
  // copy once into an aligned array (a Buffer from readFile may sit at any offset of a shared pool)
  const f = new Float64Array(h.n * (1 + h.keys.length));
  new Uint8Array(f.buffer).set(buf.subarray(start, want));
  const steps = new Array<number>(h.n);
  for (let i = 0; i < h.n; i++) steps[i] = f[i]!;
  const cols: Record<string, (number | null)[]> = {};
  h.keys.forEach((k, j) => {
    const base = (j + 1) * h.n;
    const col = new Array<number | null>(h.n);
    for (let i = 0; i < h.n; i++) {
      const v = f[base + i]!;
      col[i] = v === v ? v : null; // NaN → null
    }
    cols[k] = col;
  });
  return { columns: { steps, cols }, consumed: h.consumed, head: h.head, tail: h.tail };
}

/** Mutable columns plus the step → index map, extended row by row. */
class ColumnBuilder {
  readonly steps: number[];
  readonly cols: Record<string, (number | null)[]>;
  private index = new Map<number, number>();
  /** false once a row arrived out of step order: the columns must be re-sorted */
  private sorted = true;

  /** `from` is taken over, not copied: the caller hands over arrays it does not keep */
  constructor(from?: RunColumns) {
    this.steps = from ? from.steps : [];
    this.cols = from ? from.cols : {};
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
  /** set when a cache file was there but could not be used (corrupt, truncated, another version): the file and why */
  rebuilt?: string;
}

/** Reads `length` bytes at `position` (fewer at the end of the file). */
async function readAt(fh: fs.FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

/**
 * A run's columns. Reads the cache at `location(runDir)` (one read of a binary file) when it still
 * describes a prefix of metrics.jsonl (checked on that prefix's first and last bytes, read alone: a
 * warm load does not read metrics.jsonl whole), parses only what was appended since, and writes the
 * cache back when it changed. A cache file that cannot be used is rebuilt and named in `rebuilt`.
 * A run without metrics.jsonl has no columns (steps []).
 */
export async function loadColumns(runDir: string, location: CacheLocation = besideRun, o: { write?: boolean } = {}): Promise<LoadedColumns> {
  const metrics = path.join(runDir, 'metrics.jsonl');
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(metrics, 'r');
  } catch {
    return { columns: { steps: [], cols: {} }, source: 'built' };
  }
  try {
    const size = (await fh.stat()).size;
    const cacheFile = location(runDir);
    let cached: ReturnType<typeof decodeColumnCache> | undefined;
    let rebuilt: string | undefined;
    try {
      cached = decodeColumnCache(await fs.readFile(cacheFile));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') rebuilt = `${cacheFile}: ${err instanceof Error ? err.message : String(err)}; rebuilt from ${metrics}`;
    }
    const fingerprint = async (n: number, bytes?: Buffer) => {
      const head = bytes ? bytes.subarray(0, Math.min(n, FINGERPRINT_BYTES)) : await readAt(fh, 0, Math.min(n, FINGERPRINT_BYTES));
      const from = Math.max(0, n - FINGERPRINT_BYTES);
      const tail = bytes ? bytes.subarray(from, n) : await readAt(fh, from, n - from);
      return { head: sha1(head), tail: sha1(tail) };
    };
    let builder: ColumnBuilder | undefined;
    let from = 0;
    if (cached && cached.consumed <= size) {
      const f = await fingerprint(cached.consumed);
      if (f.head === cached.head && f.tail === cached.tail) {
        builder = new ColumnBuilder(cached.columns);
        from = cached.consumed;
      }
    }
    // what follows the prefix the cache holds (everything, without a cache): complete lines only, a line being written waits
    const rest = from < size ? await readAt(fh, from, size - from) : Buffer.alloc(0);
    const restEnd = rest.lastIndexOf(0x0a) + 1;
    const end = from + restEnd;
    let source: LoadedColumns['source'];
    if (!builder) {
      builder = new ColumnBuilder();
      source = 'built';
    } else source = restEnd === 0 ? 'cached' : 'extended';
    if (restEnd > 0) parseLines(rest.subarray(0, restEnd).toString('utf8'), builder);
    const columns = builder.done();
    if (source !== 'cached' && o.write !== false) {
      const f = from === 0 ? await fingerprint(end, rest) : await fingerprint(end);
      try {
        await fs.mkdir(path.dirname(cacheFile), { recursive: true });
        writeFileAtomicSync(cacheFile, encodeColumnCache(columns, { consumed: end, ...f }));
      } catch {
        // a read-only run directory: the columns are still right, only the next load is slower
      }
    }
    return { columns, source, ...(rebuilt ? { rebuilt } : {}) };
  } finally {
    await fh.close();
  }
}
