// The agent's sweep tools (`start_sweep`, `sweep_status`) on the sweep runner, shaped as the eval tools
// are. start_sweep validates the sweep file and every point's run spec, then answers at once with the
// sweep's folder: the sweep runs in the background of the process that serves the tools (the MCP
// server, or the extension host) and stops with it, each run saving a resume point; calling
// start_sweep again resumes it (finished runs skipped, interrupted ones resumed). sweep_status reads
// the sweep folder: progress, then the ranking by the sweep's metric as a compact table.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { errorMessage } from '../errors';
import { expandSweep } from '../experiments/expand';
import { rankRuns } from '../experiments/ranking';
import { hasFinalCheckpoint, isStoppedEarly, runSweep, type SweepProgress } from '../experiments/runSweep';
import { readSweepFile, sweepName } from '../experiments/sweepFile';
import { isSweepDir, readSweepManifest } from '../experiments/sweepManifest';
import { readMetricsRowsSync } from '../runs/runDirectory';
import { isSweepFile } from '../spec/kinds';
import type { SweepHost, TrainingSession } from './session';

export const StartSweepInput = z.object({
  sweep_file: z.string().min(1).describe('a *.sweep.json or *.sweep.yaml file, relative to the workspace'),
  max_concurrent: z.number().int().min(1).max(64).optional().describe("runs at once (default: the file's max_concurrent, else 1 on the embedded engine, 4 on cloud/custom)"),
  max_cost_usd: z.number().gt(0).optional().describe("the sweep's budget in US dollars (estimate), shared by its runs, over the file's: no run starts a step that would take the sweep past it"),
  max_tokens_total: z.number().int().min(1).optional().describe("the sweep's budget in tokens, shared by its runs, over the file's"),
});
export type StartSweepInput = z.output<typeof StartSweepInput>;

export const SweepStatusInput = z.object({
  sweep: z.string().min(1).describe('the sweep folder start_sweep returned, or the sweep file'),
});

interface SweepJob {
  progress: SweepProgress;
  abort: AbortController;
  done: Promise<void>;
  finished: boolean;
  error?: string;
  cancelled?: boolean;
  /** the window's sweep runner has had it: from then on that runner says whether it runs */
  hostHad?: boolean;
}

/**
 * What is running of a sweep, if anything. In the extension host the window's sweep runner is the one
 * source of truth once it has had the sweep: the tool's own job settles only when the runner's promise
 * does, a little after the runner has dropped a stopped sweep.
 */
function liveProgress(job: SweepJob | undefined, host: SweepHost | undefined, dir: string): SweepProgress | undefined {
  const hostProgress = host?.running(dir);
  if (hostProgress) {
    if (job) job.hostHad = true;
    return hostProgress;
  }
  return job && !job.finished && !job.hostHad ? job.progress : undefined;
}

/** The sweeps each session started, by folder; a session's close stops them. */
const jobsOf = new WeakMap<TrainingSession, Map<string, SweepJob>>();

function jobs(s: TrainingSession): Map<string, SweepJob> {
  let m = jobsOf.get(s);
  if (!m) {
    const created = new Map<string, SweepJob>();
    jobsOf.set(s, created);
    // the server goes: every sweep it runs stops, each run saving a resume point
    s.onClose(async () => {
      for (const j of created.values()) j.abort.abort();
      await Promise.all([...created.values()].map((j) => j.done));
    });
    m = created;
  }
  return m;
}

export async function startSweep(s: TrainingSession, a: StartSweepInput): Promise<{ text: string; value: unknown }> {
  const ctx = s.evalContext();
  const file = path.resolve(ctx.baseDir, a.sweep_file);
  if (!isSweepFile(file)) throw new Error(`start_sweep: ${a.sweep_file} is not a sweep file (*.sweep.json, *.sweep.yaml or *.sweep.yml)`);
  const spec = readSweepFile(file);
  // every point validated before anything starts: a bad one is the tool's error, not the background's
  const expanded = await expandSweep(file, spec);
  const dir = path.join(path.resolve(ctx.runsDir), sweepName(file, spec));
  const all = jobs(s);
  const host = s.sweepHost();
  const busy = liveProgress(all.get(dir), host, dir);
  if (busy) return { text: `already running: ${dir} (${progressText(busy)}); call sweep_status`, value: { sweep: dir, running: true, progress: busy } };
  const done = expanded.points.filter((p) => isStoppedEarly(path.join(dir, p.name)) || hasFinalCheckpoint(path.join(dir, p.name))).length;
  const abort = new AbortController();
  const job: SweepJob = { progress: { total: expanded.points.length, done, running: [] }, abort, finished: false, done: Promise.resolve() };
  all.set(dir, job);
  const onProgress = (p: SweepProgress) => {
    job.progress = p;
    if (host) job.hostHad = true;
  };
  const budgetOverride = { ...(a.max_cost_usd !== undefined ? { max_cost_usd: a.max_cost_usd } : {}), ...(a.max_tokens_total !== undefined ? { max_tokens_total: a.max_tokens_total } : {}) };
  const maxConcurrent = { ...(a.max_concurrent ? { maxConcurrent: a.max_concurrent } : {}), ...(Object.keys(budgetOverride).length ? { budget: budgetOverride } : {}) };
  if (host) abort.signal.addEventListener('abort', () => host.cancel(dir), { once: true });
  // in the extension host the window's sweep runner runs it (its runs in the Runs view, Cancel Sweep); else this process
  const result: Promise<{ cancelled: boolean }> = host
    ? host.start(file, { ...maxConcurrent, onProgress }).then((r) => r ?? Promise.reject(new Error('the sweep did not start or failed: see the Tinker Studio log')))
    : runSweep({
        sweepFile: file,
        runsDir: ctx.runsDir,
        ...maxConcurrent,
        connect: ctx.connect,
        cacheDir: ctx.cacheDir,
        ...(ctx.python ? { python: ctx.python } : {}),
        ...(ctx.tracking ? { tracking: ctx.tracking } : {}),
        signal: abort.signal,
        log: (line) => ctx.log(`[sweep] ${line}`),
        onProgress,
      });
  job.done = result
    .then(
      (r) => void (job.cancelled = r.cancelled),
      (e: unknown) => void (job.error = errorMessage(e)),
    )
    .finally(() => (job.finished = true));
  const resumed = done > 0 || expanded.points.some((p) => fs.existsSync(path.join(dir, p.name, 'config.json')));
  return {
    text: `sweep ${resumed ? 'resumed' : 'started'} in the background: ${dir}\n${expanded.points.length} runs (${done} already done)\ncall sweep_status with {"sweep": ${JSON.stringify(dir)}} to follow it; it stops with this server (start_sweep again resumes it)`,
    value: { sweep: dir, running: true, runs: expanded.points.length, done },
  };
}

function progressText(p: SweepProgress): string {
  return `${p.done}/${p.total} done${p.running.length ? `, ${p.running.length} running (${p.running.join(', ')})` : ''}`;
}

export type SweepRunState = 'running' | 'completed' | 'stopped early' | 'interrupted' | 'queued';

export interface SweepStatusRow {
  run: string;
  status: SweepRunState;
  steps: number;
  rank?: number;
  best?: number;
  best_step?: number;
  last?: number;
}

/** The sweep folder's runs ranked by its metric, each with its state and steps recorded. */
export function sweepStatusRows(dir: string, running: ReadonlySet<string> = new Set()): { metric: { name: string; goal: string }; rows: SweepStatusRow[] } {
  const m = readSweepManifest(dir);
  const rowsOf = new Map(m.runs.map((r) => [r.name, readMetricsRowsSync(path.join(dir, r.name))]));
  const ranked = rankRuns(
    m.runs.map((r) => ({ id: r.name, rows: rowsOf.get(r.name)! })),
    m.metric,
  );
  const state = (name: string): SweepRunState => {
    const runDir = path.join(dir, name);
    if (running.has(name)) return 'running';
    if (hasFinalCheckpoint(runDir)) return 'completed';
    if (isStoppedEarly(runDir)) return 'stopped early';
    return fs.existsSync(path.join(runDir, 'config.json')) ? 'interrupted' : 'queued';
  };
  return {
    metric: m.metric,
    rows: ranked.map((r) => ({
      run: r.id,
      status: state(r.id),
      steps: new Set(rowsOf.get(r.id)!.map((x) => x.step)).size,
      ...(r.rank !== undefined ? { rank: r.rank } : {}),
      ...(r.best !== undefined ? { best: r.best } : {}),
      ...(r.bestStep !== undefined ? { best_step: r.bestStep } : {}),
      ...(r.last !== undefined ? { last: r.last } : {}),
    })),
  };
}

/** The rows as a compact text table, best first. */
export function formatSweepTable(metric: { name: string; goal: string }, rows: readonly SweepStatusRow[]): string {
  const fmt = (v: number | undefined) => (v === undefined ? '-' : String(Number(v.toPrecision(4))));
  const head = ['#', 'run', 'status', 'steps', `best ${metric.name} (${metric.goal === 'maximize' ? 'max' : 'min'})`, '@step', 'last'];
  const body = rows.map((r) => [r.rank === undefined ? '-' : String(r.rank), r.run, r.status, String(r.steps), fmt(r.best), r.best_step === undefined ? '-' : String(r.best_step), fmt(r.last)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  return [head, ...body].map((cells) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' ').trimEnd()).join('\n');
}

export async function sweepStatus(s: TrainingSession, a: z.output<typeof SweepStatusInput>): Promise<{ text: string; value: unknown }> {
  const ctx = s.evalContext();
  const given = path.resolve(ctx.baseDir, a.sweep);
  let dir = given;
  if (isSweepFile(given) && fs.existsSync(given) && fs.statSync(given).isFile()) dir = path.join(path.resolve(ctx.runsDir), sweepName(given, readSweepFile(given)));
  else if (!isSweepDir(dir) && isSweepDir(path.resolve(ctx.runsDir, a.sweep))) dir = path.resolve(ctx.runsDir, a.sweep);
  const job = jobs(s).get(dir);
  // live: started by these tools, or (in the extension host) by the person from the window
  const progress = liveProgress(job, s.sweepHost(), dir);
  const live = progress !== undefined;
  if (!isSweepDir(dir)) return { text: progress ? `starting: ${dir} (${progressText(progress)})` : `no sweep in ${dir} (start it with start_sweep)`, value: { sweep: dir, running: live, runs: [] } };
  const { metric, rows } = sweepStatusRows(dir, new Set(progress?.running ?? []));
  const finished = rows.filter((r) => r.status === 'completed' || r.status === 'stopped early').length;
  const head = progress
    ? `running: ${progressText(progress)}`
    : job?.error
      ? `stopped: ${job.error}`
      : finished === rows.length
        ? `done: ${finished}/${rows.length} runs finished`
        : `not running: ${finished}/${rows.length} runs finished (start_sweep resumes it)`;
  return { text: `${head}\n${formatSweepTable(metric, rows)}\nsweep: ${dir}`, value: { sweep: dir, running: live, finished, total: rows.length, metric, runs: rows } };
}
