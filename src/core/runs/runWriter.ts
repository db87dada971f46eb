// Writing a run directory in the tinker-cookbook layout (grpo-reference §4): config.json,
// metrics.jsonl, checkpoints.jsonl, iteration_NNNNNN/… . Appended records are written with one
// write(2) of a whole line on a file opened O_APPEND, so a crash leaves either the whole line or (at
// worst) a partial last line that readers already skip; whole files are written to a temp file and
// renamed over the target. Also reads back where a run can resume.
//
// Resume semantics (documented for readers): a resumed run appends further metrics lines after its
// last state checkpoint's step; what a killed attempt wrote past that step is moved aside first
// (resumePoint.ts), so each step appears once. Readers still merge lines per step (metricsRows.ts: a
// later line replaces an earlier one) for directories written before that or by other tools.
import { Redactor } from '../config/redact';
import type { Tracker } from '../tracking/tracker';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringifyJsonLine } from './jsonl';
import { parseRunConfig, RunConfig } from './runConfig';
import { CheckpointRecord, parseRecords } from './runDirectory';
import { writeFileAtomicSync } from '../fs/atomic';
import { RunLock, lockRunDirectory } from './runLock';
import { errorMessage } from '../errors';

/** checkpoints.jsonl key order of the cookbook: known keys first, then loop-state extras. */
const CHECKPOINT_KEY_ORDER = ['name', 'batch', 'epoch', 'final', 'state_path', 'sampler_path'] as const;

export function orderCheckpointRecord(record: CheckpointRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of CHECKPOINT_KEY_ORDER) if (record[k] !== undefined && record[k] !== null) out[k] = record[k];
  for (const [k, v] of Object.entries(record)) if (!(k in out) && v !== undefined && v !== null) out[k] = v;
  return out;
}

/** `iteration_000042` */
export function iterationDirName(i: number): string {
  return `iteration_${String(i).padStart(6, '0')}`;
}

/** `<name>-YYYYMMDD-HHMMSS` in UTC. */
export function runDirName(name: string, at: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}-${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`;
  const safe = name.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[._]+|[._]+$/g, '') || 'run';
  return `${safe}-${stamp}`;
}

/** Appends `line + "\n"` with a single write on an O_APPEND descriptor. */
function appendLine(file: string, line: string): void {
  const bytes = Buffer.from(`${line}\n`, 'utf8');
  const fd = fs.openSync(file, 'a');
  try {
    const n = fs.writeSync(fd, bytes, 0, bytes.length);
    if (n !== bytes.length) throw new Error(`short write to ${file} (${n} of ${bytes.length} bytes; disk full?)`);
  } finally {
    fs.closeSync(fd);
  }
}

function tempNameFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
}

/** Truncates a JSONL file after its last "\n" (no-op when it ends in one or does not exist). */
export function dropPartialTail(file: string): void {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (buf.length === 0 || buf[buf.length - 1] === 0x0a) return;
  fs.truncateSync(file, buf.lastIndexOf(0x0a) + 1);
}

export class RunWriter {
  private constructor(
    readonly dir: string,
    private readonly lock: RunLock,
  ) {}

  /** A new run directory `<runsDir>/<name>-YYYYMMDD-HHMMSS` (a suffix -2, -3… if that exists). */
  static create(runsDir: string, name: string, at = new Date()): RunWriter {
    fs.mkdirSync(runsDir, { recursive: true });
    const base = runDirName(name, at);
    for (let k = 1; ; k++) {
      const dir = path.join(runsDir, k === 1 ? base : `${base}-${k}`);
      try {
        fs.mkdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        continue;
      }
      return new RunWriter(dir, lockRunDirectory(dir));
    }
  }

  /** A new run directory at exactly `dir` (a sweep's point: `<runs>/<sweep>/<point>`); refused if it exists. */
  static createAt(dir: string): RunWriter {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    fs.mkdirSync(dir);
    return new RunWriter(path.resolve(dir), lockRunDirectory(dir));
  }

  /**
   * An existing run directory, to resume. A partial last line left by a crash mid-write is cut off
   * first, so the next append starts a line of its own instead of gluing onto the fragment. The
   * directory is locked until close(); a run directory another live process writes is refused.
   */
  static open(dir: string): RunWriter {
    if (!fs.existsSync(path.join(dir, 'config.json'))) throw new Error(`${dir} is not a run directory (no config.json)`);
    const lock = lockRunDirectory(dir);
    try {
      for (const f of ['metrics.jsonl', 'checkpoints.jsonl']) dropPartialTail(path.join(dir, f));
    } catch (err) {
      lock.release();
      throw err;
    }
    return new RunWriter(path.resolve(dir), lock);
  }

  /** Releases the run directory's lock (the writer must not be used afterwards). */
  close(): void {
    this.lock.release();
  }

  get name(): string {
    return path.basename(this.dir);
  }

  writeConfig(config: Record<string, unknown>): void {
    writeFileAtomicSync(path.join(this.dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  }

  readConfig(): RunConfig {
    const file = path.join(this.dir, 'config.json');
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`${file}: ${errorMessage(err)}`);
    }
    return parseRunConfig(text, file);
  }

  /** One metrics.jsonl line `{"step": i, ...metrics}`, then handed to the run's tracker (which only queues it). */
  appendMetrics(step: number, metrics: Record<string, number>): void {
    appendLine(path.join(this.dir, 'metrics.jsonl'), stringifyJsonLine({ step, ...metrics }));
    this.tracker?.log(step, metrics);
  }

  private tracker: Pick<Tracker, 'log'> | undefined;

  /** The tracker (W&B) each metrics row is also given to; runTracking.ts attaches it. */
  attachTracker(tracker: Pick<Tracker, 'log'> | undefined): void {
    this.tracker = tracker;
  }

  /** One timing_spans.jsonl line `{"step": i, "spans": [...]}`. */
  appendTimingSpans(step: number, spans: readonly unknown[]): void {
    appendLine(path.join(this.dir, 'timing_spans.jsonl'), stringifyJsonLine({ step, spans }));
  }

  appendCheckpoint(record: CheckpointRecord): void {
    appendLine(path.join(this.dir, 'checkpoints.jsonl'), stringifyJsonLine(orderCheckpointRecord(record)));
  }

  private redactor = new Redactor();

  /** The redactor that knows the secrets in use (without one, credential shapes are still redacted). */
  redactWith(redactor: Redactor): void {
    this.redactor = redactor;
  }

  /** Appends a line to the plain-text log (logs.log), with secrets redacted. */
  appendLog(line: string): void {
    appendLine(path.join(this.dir, 'logs.log'), this.redactor.redact(line).replace(/\n/g, '\n  '));
  }

  /**
   * (Over)writes iteration_NNNNNN/<file> like writeIterationFile, building, serialising and writing
   * the records a slice at a time (`slice(start, end)` gives items start … end−1 of `count`) with an
   * asynchronous write between slices, so a large iteration never holds the event loop for long.
   * Still a temporary file renamed into place: a crash leaves the old file or the whole new one.
   */
  async writeIterationFileInSlices(iteration: number, file: string, count: number, slice: (start: number, end: number) => readonly unknown[], sliceSize: number): Promise<void> {
    const dir = path.join(this.dir, iterationDirName(iteration));
    await fs.promises.mkdir(dir, { recursive: true });
    const target = path.join(dir, file);
    const tmp = tempNameFor(target);
    const fh = await fs.promises.open(tmp, 'w');
    try {
      try {
        for (let start = 0; start < count; start += sliceSize) {
          await fh.write(slice(start, Math.min(count, start + sliceSize)).map((r) => `${stringifyJsonLine(r)}\n`).join(''));
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.promises.rename(tmp, target);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }); // never leave the temp file behind
      throw err;
    }
  }

  /** (Over)writes iteration_NNNNNN/<file> with one JSON line per record. */
  writeIterationFile(iteration: number, file: string, records: readonly unknown[]): void {
    const dir = path.join(this.dir, iterationDirName(iteration));
    fs.mkdirSync(dir, { recursive: true });
    writeFileAtomicSync(path.join(dir, file), records.map((r) => `${stringifyJsonLine(r)}\n`).join(''));
  }

  readCheckpoints(): CheckpointRecord[] {
    const file = path.join(this.dir, 'checkpoints.jsonl');
    if (!fs.existsSync(file)) return [];
    const { records, problems } = parseRecords(fs.readFileSync(file, 'utf8'), file, CheckpointRecord);
    if (problems.length) throw new Error(`${problems[0]!.file}:${problems[0]!.line}: ${problems[0]!.message}`);
    return records;
  }

  /** The last record with a state_path (the cookbook's get_last_checkpoint), if any. */
  lastStateCheckpoint(): CheckpointRecord | undefined {
    return [...this.readCheckpoints()].reverse().find((r) => typeof r.state_path === 'string');
  }
}
