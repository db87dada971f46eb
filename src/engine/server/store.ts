// What the engine keeps on disk under its data dir: training runs, checkpoints (metadata in one JSON
// file written atomically, weights in files), and the append-only record of applied training steps.
// It survives restarts; models themselves do not (a checkpoint is loaded into a new model).
//
// Several engines may share one store (the CLI's, the MCP server's and the extension's engines all use
// the user's one store, engineStoreDir()). Each write of the index is a read-merge-write under the
// store's lock file: the index on disk is merged three ways with what this engine last read, record
// by record (a run's fields; each checkpoint), so one engine's new checkpoint never erases another's.
// Before a lookup that misses, and before each listing, an engine re-reads the index when it changed.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../../core/fs/atomic';
import { errorMessage } from '../../core/errors';
import { withStoreLock } from './storeLock';

export const CheckpointRecord = z.object({
  checkpoint_id: z.string(),
  checkpoint_type: z.enum(['training', 'sampler']),
  time: z.string(),
  tinker_path: z.string(),
  size_bytes: z.number().int(),
  public: z.boolean(),
  expires_at: z.string().nullable(),
  file: z.string(),
  /** the save request's user_metadata (records written before it existed have none) */
  user_metadata: z.record(z.string(), z.string()).nullable().optional(),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

export const RunRecord = z.object({
  training_run_id: z.string(),
  base_model: z.string(),
  model_owner: z.string(),
  is_lora: z.boolean(),
  corrupted: z.boolean(),
  lora_rank: z.number().int().nullable(),
  train_mlp: z.boolean(),
  train_attn: z.boolean(),
  train_unembed: z.boolean(),
  created: z.string(),
  last_request_time: z.string(),
  user_metadata: z.record(z.string(), z.string()).nullable(),
  /** the project of the session that created the run (none: the default) */
  project_id: z.string().nullable().optional(),
  checkpoints: z.array(CheckpointRecord),
});
export type RunRecord = z.infer<typeof RunRecord>;

const StoreFile = z.object({ version: z.literal(1), runs: z.array(z.unknown()) });

export const AppliedStep = z.object({
  model_id: z.string(),
  seq_id: z.number().int(),
  type: z.string(),
  request_id: z.string(),
  time: z.string(),
});
export type AppliedStep = z.infer<typeof AppliedStep>;

/** A model id made safe as one path segment (official ids contain ':'). */
export function fileSafe(id: string): string {
  return encodeURIComponent(id).replace(/%/g, '_');
}

/** The index as flat records, keyed `["run", id]` → a run's fields (no checkpoints), `["ckpt", id, ckpt]` → a checkpoint. */
type Flat = Map<string, string>;

function flatten(runs: Iterable<RunRecord>): Flat {
  const flat: Flat = new Map();
  for (const run of runs) {
    const { checkpoints, ...fields } = run;
    flat.set(JSON.stringify(['run', run.training_run_id]), JSON.stringify(fields));
    for (const c of checkpoints) flat.set(JSON.stringify(['ckpt', run.training_run_id, c.checkpoint_id]), JSON.stringify(c));
  }
  return flat;
}

/**
 * Three-way merge of the index, record by record: where this engine changed a record since `base`
 * (what it last read or wrote), its version wins (a deletion included); otherwise the disk's does.
 */
export function mergeIndex(base: Flat, mine: Flat, disk: Flat): Flat {
  const out: Flat = new Map();
  for (const key of new Set([...base.keys(), ...mine.keys(), ...disk.keys()])) {
    const m = mine.get(key);
    const v = m === base.get(key) ? disk.get(key) : m;
    if (v !== undefined) out.set(key, v);
  }
  return out;
}

/** The runs of a flat index; a checkpoint whose run is gone is dropped. */
function unflatten(flat: Flat): RunRecord[] {
  const runs = new Map<string, RunRecord>();
  const checkpoints: [string, CheckpointRecord][] = [];
  for (const [key, json] of flat) {
    const [kind, runId] = JSON.parse(key) as [string, string];
    if (kind === 'run') runs.set(runId, { ...(JSON.parse(json) as Omit<RunRecord, 'checkpoints'>), checkpoints: [] });
    else checkpoints.push([runId, JSON.parse(json) as CheckpointRecord]);
  }
  for (const [runId, c] of checkpoints) runs.get(runId)?.checkpoints.push(c);
  for (const run of runs.values()) run.checkpoints.sort((a, b) => a.time.localeCompare(b.time) || a.checkpoint_id.localeCompare(b.checkpoint_id));
  return [...runs.values()];
}

export class EngineStore {
  private runs = new Map<string, RunRecord>();
  /** the index as this engine last read or wrote it (the base of the three-way merge) */
  private base: Flat = new Map();
  /** the index file's identity when last read or written (inode, size, mtime) */
  private stamp = '';
  /** the last queued metadata read or write; a failed write does not block the ones after it */
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly dataDir: string,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Opens (or creates) the store. A metadata file that cannot be read as a store is set aside as
   * engine-store.json.corrupt-<time> (said in the log) and the runs in it that are still valid are
   * kept; a cut-off last line of the applied-steps record is dropped.
   */
  static async open(dataDir: string, log: (line: string) => void = () => undefined): Promise<EngineStore> {
    const store = new EngineStore(dataDir, log);
    await fs.mkdir(path.join(dataDir, 'checkpoints'), { recursive: true });
    let text: string | undefined;
    try {
      text = await fs.readFile(store.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== undefined) await store.load(text);
    await store.dropPartialAppliedTail();
    return store;
  }

  private async load(text: string): Promise<void> {
    let problem: string | undefined;
    let candidates: unknown[] = [];
    try {
      const parsed = StoreFile.safeParse(JSON.parse(text));
      if (parsed.success) candidates = parsed.data.runs;
      else problem = `${parsed.error.issues[0]?.path.join('.') || '(top level)'}: ${parsed.error.issues[0]?.message}`;
    } catch (err) {
      problem = `not valid JSON (${errorMessage(err)})`;
    }
    let bad = 0;
    for (const [i, candidate] of candidates.entries()) {
      const run = RunRecord.safeParse(candidate);
      if (run.success) this.runs.set(run.data.training_run_id, run.data);
      else {
        bad++;
        problem ??= `runs.${i}.${run.error.issues[0]?.path.join('.')}: ${run.error.issues[0]?.message}`;
      }
    }
    if (problem === undefined) {
      this.base = flatten(this.runs.values());
      this.stamp = await this.currentStamp();
      return;
    }
    const aside = `${this.file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await fs.rename(this.file, aside);
    this.log(
      `${this.file} could not be read (${problem}); it was moved to ${aside}. ` +
        `Kept ${this.runs.size} training run(s)${bad ? `, dropped ${bad} invalid run record(s)` : ''}.`,
    );
    await this.save();
  }

  private async dropPartialAppliedTail(): Promise<void> {
    let buf: Buffer;
    try {
      buf = await fs.readFile(this.appliedStepsFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (buf.length === 0 || buf[buf.length - 1] === 0x0a) return;
    await fs.truncate(this.appliedStepsFile, buf.lastIndexOf(0x0a) + 1);
    this.log(`${this.appliedStepsFile}: dropped a cut-off last line (the engine stopped while writing it)`);
  }

  private get file(): string {
    return path.join(this.dataDir, 'engine-store.json');
  }

  get appliedStepsFile(): string {
    return path.join(this.dataDir, 'applied-steps.jsonl');
  }

  /**
   * Writes the metadata atomically, one write at a time. Each write takes the state at the moment it
   * runs, so a write after a failed one (disk full) writes everything the failed one would have.
   */
  save(): Promise<void> {
    return this.queue(() =>
      withStoreLock(this.dataDir, async () => {
        const mine = flatten(this.runs.values());
        const disk = (await this.readDisk()) ?? this.base;
        const merged = mergeIndex(this.base, mine, disk);
        await writeFileAtomic(this.file, JSON.stringify({ version: 1, runs: unflatten(merged) }, null, 1));
        // what changed in memory while this write was under way (a new checkpoint) stays for the next
        this.apply(unflatten(mergeIndex(mine, flatten(this.runs.values()), merged)));
        this.base = merged;
        this.stamp = await this.currentStamp();
      }),
    );
  }

  /**
   * Takes in what other engines on this store wrote since this one last read the index (when the
   * file changed), keeping this engine's own unsaved changes.
   */
  refresh(): Promise<void> {
    return this.queue(async () => {
      if ((await this.currentStamp()) === this.stamp) return;
      const disk = await this.readDisk().catch(() => undefined);
      if (!disk) return;
      const stamp = await this.currentStamp();
      this.apply(unflatten(mergeIndex(this.base, flatten(this.runs.values()), disk)));
      this.base = disk;
      this.stamp = stamp;
    });
  }

  private queue(work: () => Promise<void>): Promise<void> {
    const next = this.writing.then(work, work);
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async currentStamp(): Promise<string> {
    try {
      const st = await fs.stat(this.file);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'none';
    }
  }

  /** The index on disk, flat; undefined when there is none or it cannot be read as an index. */
  private async readDisk(): Promise<Flat | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      this.log(`${this.file} is not valid JSON (${errorMessage(err)}); it is rewritten from this engine's records`);
      return undefined;
    }
    const parsed = StoreFile.safeParse(json);
    if (!parsed.success) return undefined;
    return flatten(parsed.data.runs.flatMap((r) => {
      const run = RunRecord.safeParse(r);
      return run.success ? [run.data] : [];
    }));
  }

  /** Puts `runs` in memory, updating the objects in place (routes hold references to them). */
  private apply(runs: RunRecord[]): void {
    const seen = new Set<string>();
    for (const run of runs) {
      seen.add(run.training_run_id);
      const live = this.runs.get(run.training_run_id);
      if (!live) {
        this.runs.set(run.training_run_id, run);
        continue;
      }
      const old = new Map(live.checkpoints.map((c) => [c.checkpoint_id, c]));
      Object.assign(live, run, {
        checkpoints: run.checkpoints.map((c) => {
          const o = old.get(c.checkpoint_id);
          return o ? Object.assign(o, c) : c;
        }),
      });
    }
    for (const id of [...this.runs.keys()]) if (!seen.has(id)) this.runs.delete(id);
  }

  run(id: string): RunRecord | undefined {
    return this.runs.get(id);
  }

  allRuns(): RunRecord[] {
    return [...this.runs.values()].sort((a, b) => b.created.localeCompare(a.created));
  }

  async putRun(run: RunRecord): Promise<void> {
    this.runs.set(run.training_run_id, run);
    await this.save();
  }

  checkpointFile(runId: string, kind: 'weights' | 'sampler_weights', name: string): string {
    return path.join(this.dataDir, 'checkpoints', fileSafe(runId), kind, `${name}.state`);
  }

  async writeCheckpoint(
    given: RunRecord,
    kind: 'weights' | 'sampler_weights',
    name: string,
    bytes: Uint8Array,
    ttlSeconds: number | null | undefined,
    userMetadata?: Record<string, string> | null,
  ): Promise<CheckpointRecord> {
    const run = this.runs.get(given.training_run_id) ?? given;
    const file = this.checkpointFile(run.training_run_id, kind, name);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, bytes);
    const now = new Date();
    const record: CheckpointRecord = {
      checkpoint_id: `${kind}/${name}`,
      checkpoint_type: kind === 'weights' ? 'training' : 'sampler',
      time: now.toISOString(),
      tinker_path: `tinker://${run.training_run_id}/${kind}/${name}`,
      size_bytes: bytes.length,
      public: false,
      expires_at: ttlSeconds ? new Date(now.getTime() + ttlSeconds * 1000).toISOString() : null,
      file: path.relative(this.dataDir, file),
      ...(userMetadata && Object.keys(userMetadata).length ? { user_metadata: userMetadata } : {}),
    };
    run.checkpoints = run.checkpoints.filter((c) => c.checkpoint_id !== record.checkpoint_id);
    run.checkpoints.push(record);
    run.last_request_time = now.toISOString();
    await this.save();
    return record;
  }

  async readCheckpoint(c: CheckpointRecord): Promise<Uint8Array> {
    return new Uint8Array(await fs.readFile(path.join(this.dataDir, c.file)));
  }

  async deleteCheckpoint(given: RunRecord, checkpointId: string): Promise<boolean> {
    const run = this.runs.get(given.training_run_id) ?? given;
    const c = run.checkpoints.find((x) => x.checkpoint_id === checkpointId);
    if (!c) return false;
    run.checkpoints = run.checkpoints.filter((x) => x !== c);
    await fs.rm(path.join(this.dataDir, c.file), { force: true });
    await this.save();
    return true;
  }

  /** Deletes checkpoints whose TTL has passed; returns how many. */
  async expire(now = Date.now()): Promise<number> {
    await this.refresh();
    let n = 0;
    for (const run of this.runs.values()) {
      for (const c of [...run.checkpoints]) {
        if (c.expires_at && Date.parse(c.expires_at) <= now) {
          await this.deleteCheckpoint(run, c.checkpoint_id);
          n++;
        }
      }
    }
    return n;
  }

  async recordApplied(step: AppliedStep): Promise<void> {
    await fs.appendFile(this.appliedStepsFile, `${JSON.stringify(step)}\n`);
  }

  /** The applied steps; a line that is not a whole step record (cut off by a crash) is skipped. */
  async appliedSteps(): Promise<AppliedStep[]> {
    let text = '';
    try {
      text = await fs.readFile(this.appliedStepsFile, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const steps: AppliedStep[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        continue;
      }
      const step = AppliedStep.safeParse(json);
      if (step.success) steps.push(step.data);
    }
    return steps;
  }
}
