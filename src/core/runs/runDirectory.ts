// Run directories in the tinker-cookbook layout (config.json, metrics.jsonl, checkpoints.jsonl,
// iteration_NNNNNN/…): discovering them under a runs folder and summarising each for the tree views.
// Reads only; tolerant of runs still being written and of directories written by the Python cookbook.
import { Dirent, existsSync, promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { readIfExists } from '../fs/read';
import { JsonlProblem, parseJsonl } from './jsonl';
import { parseRunConfig } from './runConfig';
import { METRIC } from '../../protocol/metricKeys';
import { mergeMetrics } from '../../protocol/metricsRows';
import { runLockState } from './runLock';
import { STOPPED_EARLY_FILE, type DirectoryState } from './runStatus';
import { errorMessage } from '../errors';

/** One line of checkpoints.jsonl; unknown keys are preserved. */
export const CheckpointRecord = z
  .object({
    name: z.string(),
    batch: z.number().int().optional(),
    epoch: z.number().int().optional(),
    final: z.boolean().optional(),
    state_path: z.string().optional(),
    sampler_path: z.string().optional(),
  })
  .passthrough();
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

/** One line of metrics.jsonl: a step and any number of flat metrics. */
export const MetricsRecord = z.object({ step: z.number().int() }).catchall(z.unknown());
export type MetricsRecord = z.infer<typeof MetricsRecord>;

export interface RunSummary {
  /** absolute path of the run directory */
  dir: string;
  /** the directory's name */
  name: string;
  /** model_name from config.json when present */
  model?: string;
  /** the W&B run's URL (config.json's wandb.url) when the run is logged to W&B */
  wandbUrl?: string;
  /** number of distinct steps logged */
  steps: number;
  lastStep?: number;
  /** env/all/reward/total of the last step that has it */
  lastReward?: number;
  checkpoints: CheckpointRecord[];
  /** a `final` checkpoint exists */
  finished: boolean;
  /** not finished, and its writer died holding the directory (window reloaded, process killed): resumable */
  interrupted: boolean;
  /** a sweep's median rule stopped it (runStatus's STOPPED_EARLY_FILE) */
  stoppedEarly: boolean;
  /** a live process holds the directory's lock (this window's run, another window's, the CLI's) */
  locked: boolean;
  modifiedMs: number;
  problems: JsonlProblem[];
}

const RUN_MARKERS = ['metrics.jsonl', 'config.json', 'checkpoints.jsonl'];

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** Parses a JSONL file with a zod schema per line; bad lines become problems naming file and line. */
export function parseRecords<T>(text: string, file: string, schema: z.ZodType<T>): { records: T[]; problems: JsonlProblem[] } {
  const read = parseJsonl(text, file);
  const records: T[] = [];
  const problems = [...read.problems];
  for (const { line, value } of read.records) {
    const r = schema.safeParse(value);
    if (r.success) records.push(r.data);
    else {
      const issue = r.error.issues[0];
      problems.push({ file, line, message: `${issue?.path.join('.') || '(record)'}: ${issue?.message}` });
    }
  }
  return { records, problems };
}

export { mergeMetrics };

export function metricsFile(runDir: string): string {
  return path.join(runDir, 'metrics.jsonl');
}

/** metrics.jsonl text → one row per step (mergeMetrics), in step order, and the lines that are no row. */
export function parseMetricsRows(text: string, file: string): { rows: MetricsRecord[]; problems: JsonlProblem[] } {
  const r = parseRecords(text, file, MetricsRecord);
  return { rows: mergeMetrics(r.records), problems: r.problems };
}

/** A run's metrics, one row per step in step order; [] when it has no metrics.jsonl. */
export async function readMetricsRows(runDir: string): Promise<MetricsRecord[]> {
  const file = metricsFile(runDir);
  const text = await readIfExists(file);
  return text === undefined ? [] : parseMetricsRows(text, file).rows;
}

/** readMetricsRows for the synchronous callers (the CLI's end-of-run table, the agent's step report). */
export function readMetricsRowsSync(runDir: string): MetricsRecord[] {
  const file = metricsFile(runDir);
  return existsSync(file) ? parseMetricsRows(readFileSync(file, 'utf8'), file).rows : [];
}

export async function summarizeRun(dir: string): Promise<RunSummary> {
  const problems: JsonlProblem[] = [];
  const stat = await fs.stat(dir);
  let modifiedMs = stat.mtimeMs;

  let model: string | undefined;
  let wandbUrl: string | undefined;
  const configText = await readIfExists(path.join(dir, 'config.json'));
  if (configText !== undefined) {
    try {
      const cfg = parseRunConfig(configText, path.join(dir, 'config.json'));
      model = cfg.model_name;
      wandbUrl = cfg.wandb?.url;
    } catch (err) {
      problems.push({ file: path.join(dir, 'config.json'), line: 0, message: errorMessage(err) });
    }
  }

  let metrics: MetricsRecord[] = [];
  const mFile = metricsFile(dir);
  const metricsText = await readIfExists(mFile);
  if (metricsText !== undefined) {
    modifiedMs = Math.max(modifiedMs, (await fs.stat(mFile)).mtimeMs);
    const r = parseMetricsRows(metricsText, mFile);
    metrics = r.rows;
    for (const x of r.problems) problems.push(x);
  }

  let checkpoints: CheckpointRecord[] = [];
  const ckptFile = path.join(dir, 'checkpoints.jsonl');
  const ckptText = await readIfExists(ckptFile);
  if (ckptText !== undefined) {
    const r = parseRecords(ckptText, ckptFile, CheckpointRecord);
    checkpoints = r.records;
    for (const x of r.problems) problems.push(x);
  }

  const last = metrics[metrics.length - 1];
  const state = await stateOf(dir, checkpoints);
  const withReward = [...metrics].reverse().find((m) => typeof m[METRIC.reward] === 'number');
  return {
    dir,
    name: path.basename(dir),
    model,
    ...(wandbUrl ? { wandbUrl } : {}),
    steps: metrics.length,
    lastStep: last?.step,
    lastReward: withReward ? (withReward[METRIC.reward] as number) : undefined,
    checkpoints,
    finished: state.finished,
    interrupted: state.interrupted,
    stoppedEarly: state.stoppedEarly,
    locked: state.locked,
    modifiedMs,
    problems,
  };
}

/** What a run's status rests on: its final checkpoint, its lock, the median rule's marker. */
async function stateOf(dir: string, checkpoints: readonly CheckpointRecord[]): Promise<Required<DirectoryState> & { locked: boolean }> {
  const finished = checkpoints.some((c) => c.name === 'final');
  const lock = runLockState(dir);
  return { finished, interrupted: !finished && lock === 'stale', stoppedEarly: await exists(path.join(dir, STOPPED_EARLY_FILE)), locked: lock === 'held' };
}

/** A run directory's state (runStatus.ts directoryRunStatus) without reading its metrics.jsonl: checkpoints.jsonl, the lock, the marker. */
export async function readDirectoryState(dir: string): Promise<Required<DirectoryState>> {
  const file = path.join(dir, 'checkpoints.jsonl');
  const text = await readIfExists(file);
  return stateOf(dir, text === undefined ? [] : parseRecords(text, file, CheckpointRecord).records);
}

/** Run directories directly under `runsDir`, in its sweep folders (`<sweep>/<point>/`, marked by sweep.json), and `runsDir` itself if it is one; newest first. */
export async function listRuns(runsDir: string): Promise<RunSummary[]> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(runsDir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // the folder's own listing says whether it is a run; its subfolders are checked side by side
  const self = entries.some((e) => RUN_MARKERS.includes(e.name)) ? [runsDir] : [];
  const children = await Promise.all(
    entries
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map(async (e) => {
        const d = path.join(runsDir, e.name);
        if (await isRunDir(d)) return [d];
        // a sweep folder (sweep.json): its runs are one level down
        if (!(await exists(path.join(d, 'sweep.json')))) return [];
        const inner = await fs.readdir(d, { withFileTypes: true }).catch(() => [] as Dirent[]);
        const runs = await Promise.all(inner.filter((i) => i.isDirectory() && !i.name.startsWith('.')).map(async (i) => ((await isRunDir(path.join(d, i.name))) ? [path.join(d, i.name)] : [])));
        return runs.flat();
      }),
  );
  const runs = await Promise.all([...self, ...children.flat()].map(summarizeRun));
  return runs.sort((a, b) => b.modifiedMs - a.modifiedMs);
}

async function isRunDir(dir: string): Promise<boolean> {
  for (const m of RUN_MARKERS) if (await exists(path.join(dir, m))) return true;
  return false;
}
