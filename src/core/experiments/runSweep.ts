// Runs a sweep: every expanded point an ordinary run directory `<runs>/<sweep name>/<point name>/`,
// at most `max_concurrent` at once, the median stopping rule checked after every step. Re-running the
// same sweep resumes it: finished and stopped-early runs are skipped, interrupted or cancelled ones
// resumed, the rest started. Every point's spec is validated before any run starts (expandSweep).
import * as fs from 'fs';
import * as path from 'path';
import type { RunTrackingOptions } from '../runs/runTracking';
import { runKind } from '../kinds/registry';
import type { RunEvent, RunResultBase } from '../runs/runEvents';
import { readMetricsRowsSync } from '../runs/runDirectory';
import { STOPPED_EARLY_FILE } from '../runs/runStatus';
import { StoppedEarly } from '../runs/loopRuntime';
import { writeFileAtomicSync } from '../fs/atomic';
import type { ServiceClient } from '../tinker/client';
import type { NetworkOptions } from '../tinker/proxy';
import { errorMessage } from '../errors';
import { expandSweep, sweptPaths, type PreparedPoint } from './expand';
import { medianStops, type CurveRun } from './medianRule';
import { rankRuns, type RankedRun } from './ranking';
import { readSweepFile, sweepName } from './sweepFile';
import { writeSweepManifest, type SweepManifest } from './sweepManifest';
import type { Budget } from '../cost/budget';
import type { PriceTable } from '../cost/prices';
import { sweepBudget, usdSavedOf } from './sweepBudget';

export function isStoppedEarly(runDir: string): boolean {
  return fs.existsSync(path.join(runDir, STOPPED_EARLY_FILE));
}

export type SweepRunStatus = 'completed' | 'stopped early' | 'cancelled' | 'failed' | 'skipped' | 'queued';

export interface SweepRunOutcome {
  name: string;
  dir: string;
  status: SweepRunStatus;
  /** steps this invocation ran */
  stepsRun: number;
  /** steps the median rule saved (the run's end step minus the step it stopped at) */
  stepsSaved: number;
  /** the predicted cost of those steps: the run's mean cost/step_usd × stepsSaved (estimate) */
  usdSaved: number;
  /** the sweep's budget stopped the run before a step (a resume point kept), in budgetStopMessage's words */
  budgetStop?: string;
  /** wall time this invocation spent in the run, ms */
  ms: number;
  error?: string;
}

export interface SweepProgress {
  total: number;
  done: number;
  running: string[];
  /** the last event of a run */
  point?: string;
}

export interface RunSweepOptions {
  sweepFile: string;
  runsDir: string;
  /** overrides the file's max_concurrent */
  maxConcurrent?: number;
  /** the backend every run uses (default: the base spec's); the default concurrency follows it: 1 local, 4 cloud/custom */
  backend?: 'local' | 'cloud' | 'custom';
  connect: (spec: { backend: 'local' | 'cloud' | 'custom'; base_url?: string }) => Promise<ServiceClient>;
  cacheDir: string;
  network?: NetworkOptions;
  python?: string;
  /** names of environment variables the reward workers may see (the extension's tinker.rewardEnvironment) */
  rewardEnvironment?: readonly string[];
  /** experiment tracking (W&B) for every run of the sweep: one group per sweep, each run named by its point */
  tracking?: RunTrackingOptions;
  /** the price table in force for every run (the tinker.prices setting or --prices over the defaults) */
  prices?: PriceTable;
  /** the sweep's shared budget, over the file's max_cost_usd / max_tokens_total (an agent's start_sweep) */
  budget?: Budget;
  signal?: AbortSignal;
  log?: (line: string) => void;
  onEvent?: (point: string, e: RunEvent) => void;
  onProgress?: (p: SweepProgress) => void;
}

export interface SweepResult {
  name: string;
  dir: string;
  manifest: SweepManifest;
  outcomes: SweepRunOutcome[];
  ranking: Array<RankedRun & { status: SweepRunStatus | 'completed' }>;
  stepsSaved: number;
  /** steps saved × the mean wall time per step of this invocation, ms (0 when nothing ran) */
  msSaved: number;
  /** Σ the stopped runs' usdSaved: the predicted cost of the steps the median rule saved (estimate) */
  usdSaved: number;
  /** the sweep's budget stopped it (runs not started, or stopped before a step), in budgetStopMessage's words */
  budgetStop?: string;
  cancelled: boolean;
}

/** Reads, expands and validates the sweep, writes sweep.json, and runs (or resumes) its points. */
export async function runSweep(o: RunSweepOptions): Promise<SweepResult> {
  const file = path.resolve(o.sweepFile);
  const s = readSweepFile(file);
  const expanded = await expandSweep(file, s); // throws naming file, point, field, value (or the metric the kind does not log): nothing started
  const kind = await runKind(expanded.kind);
  const name = sweepName(file, s);
  const dir = path.join(path.resolve(o.runsDir), name);
  const manifest: SweepManifest = {
    kind: 'sweep',
    name,
    file,
    metric: s.metric,
    swept: sweptPaths(s),
    runs: expanded.points.map((p) => ({ name: p.name, point: p.point, ...(p.seed !== undefined ? { seed: p.seed } : {}) })),
  };
  fs.mkdirSync(dir, { recursive: true });
  writeSweepManifest(dir, manifest);
  const log = o.log ?? (() => undefined);
  const backend = o.backend ?? (expanded.points[0]?.spec as { backend?: string } | undefined)?.backend ?? 'local';
  const limit = Math.max(1, o.maxConcurrent ?? s.max_concurrent ?? (backend === 'local' ? 1 : 4));
  const rule = s.early_terminate;
  // a budget shared by every run: what each spent in earlier sessions counts
  const shared = sweepBudget({ ...pick(s), ...o.budget }, expanded.points.map((p) => ({ run: p.name, dir: path.join(dir, p.name) })));

  // each run's rows so far (the median rule's input), and which have ended
  const curves = new Map<string, CurveRun>();
  const outcomes = new Map<string, SweepRunOutcome>();
  const queue: PreparedPoint[] = [];
  for (const p of expanded.points) {
    const runDir = path.join(dir, p.name);
    const has = fs.existsSync(path.join(runDir, 'config.json'));
    const rows = has ? readMetricsRowsSync(runDir) : [];
    const finished = has && (isStoppedEarly(runDir) || hasFinalCheckpoint(runDir));
    // only a completed run votes past its last step; a stopped one only at the steps it reached
    curves.set(p.name, { id: p.name, rows: [...rows], completed: has && !isStoppedEarly(runDir) && hasFinalCheckpoint(runDir) });
    if (finished) outcomes.set(p.name, { name: p.name, dir: runDir, status: 'skipped', stepsRun: 0, stepsSaved: 0, usdSaved: 0, ms: 0 });
    else queue.push(p);
  }
  const total = expanded.points.length;
  const running = new Set<string>();
  const progress = (point?: string) => o.onProgress?.({ total, done: [...outcomes.values()].filter((x) => x.status !== 'cancelled' && x.status !== 'queued').length, running: [...running], ...(point ? { point } : {}) });
  log(`sweep ${name}: ${total} runs (${total - queue.length} already done), at most ${limit} at once, in ${dir}`);
  progress();

  const runOne = async (p: PreparedPoint): Promise<void> => {
    const runDir = path.join(dir, p.name);
    const ac = new AbortController();
    const onOuter = () => ac.abort();
    o.signal?.addEventListener('abort', onOuter);
    let stoppedAt: number | undefined;
    let endStep = 0;
    const started = Date.now();
    let stepsRun = 0;
    const curve = curves.get(p.name)!;
    const rows = curve.rows as Array<{ step: number; [k: string]: unknown }>;
    const onEvent = (e: RunEvent) => {
      o.onEvent?.(p.name, e);
      if (e.type === 'started') endStep = e.endStep;
      if (e.type !== 'metrics') return;
      stepsRun++;
      const i = rows.findIndex((r) => r.step === e.step);
      const row = { step: e.step, ...e.metrics };
      if (i >= 0) rows[i] = { ...rows[i], ...row };
      else rows.push(row);
      if (!rule || stoppedAt !== undefined) return;
      const others = [...curves.values()].filter((c) => c.id !== p.name);
      if (medianStops(curve, others, e.step, s.metric, rule)) {
        stoppedAt = e.step;
        log(`${p.name}: stopped early at step ${e.step} (its best ${s.metric.name} is worse than the median of the other runs at that step)`);
        ac.abort(new StoppedEarly(`stopped early at step ${e.step}`));
      }
    };
    running.add(p.name);
    progress(p.name);
    const resume = fs.existsSync(path.join(runDir, 'config.json'));
    let result: RunResultBase | undefined;
    let error: string | undefined;
    try {
      const common = {
        runsDir: dir,
        cacheDir: o.cacheDir,
        ...(o.network ? { network: o.network } : {}),
        connect: (spec: { backend: 'local' | 'cloud' | 'custom'; base_url?: string }) => o.connect(spec),
        signal: ac.signal,
        onEvent,
        log: (line: string) => log(`${p.name}: ${line}`),
        ...(o.tracking ? { tracking: o.tracking } : {}),
        ...(o.prices ? { prices: o.prices } : {}),
        ...(shared ? { budgetGate: { run: p.name, gate: shared.gate } } : {}),
        ...(resume ? { resumeDir: runDir } : { runDir, specFile: expanded.baseFile, configExtra: { sweep: { name, point: p.point, ...(p.seed !== undefined ? { seed: p.seed } : {}) } } }),
      };
      // the point's spec was validated by the kind's own spec module (expandSweep)
      result = await kind.start({ ...common, ...(o.python ? { python: o.python } : {}), ...(o.rewardEnvironment ? { rewardEnvironment: o.rewardEnvironment } : {}), ...(resume ? {} : { spec: p.spec }) });
    } catch (err) {
      error = errorMessage(err);
    } finally {
      o.signal?.removeEventListener('abort', onOuter);
      running.delete(p.name);
      shared?.ended(p.name, runDir);
    }
    let status: SweepRunStatus = result?.status === 'completed' ? 'completed' : result?.status === 'cancelled' ? 'cancelled' : 'failed';
    let stepsSaved = 0;
    let usdSaved = 0;
    if (stoppedAt !== undefined && status !== 'failed' && !o.signal?.aborted) {
      status = 'stopped early';
      stepsSaved = Math.max(0, endStep - (stoppedAt + 1));
      usdSaved = usdSavedOf(rows, stepsSaved);
      writeFileAtomicSync(path.join(runDir, STOPPED_EARLY_FILE), `${JSON.stringify({ step: stoppedAt, metric: s.metric, steps_saved: stepsSaved, usd_saved: usdSaved, at: new Date().toISOString() }, null, 2)}\n`);
    }
    const budgetStop = result?.budgetStop;
    if (budgetStop) log(`${p.name}: ${budgetStop}`);
    if (status === 'completed') curve.completed = true;
    error ??= result?.error;
    if (error) log(`${p.name}: failed: ${error}`);
    outcomes.set(p.name, { name: p.name, dir: runDir, status, stepsRun, stepsSaved, usdSaved, ms: Date.now() - started, ...(error ? { error } : {}), ...(budgetStop ? { budgetStop } : {}) });
    progress(p.name);
  };

  // a pool of `limit` workers taking points in order
  let next = 0;
  const worker = async () => {
    // once the shared budget refused a step, no further run starts
    while (next < queue.length && !o.signal?.aborted && !shared?.gate.exhausted) await runOne(queue[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
  for (const p of queue) if (!outcomes.has(p.name)) outcomes.set(p.name, { name: p.name, dir: path.join(dir, p.name), status: 'queued', stepsRun: 0, stepsSaved: 0, usdSaved: 0, ms: 0 });

  const list = expanded.points.map((p) => outcomes.get(p.name)!);
  const ranked = rankRuns(
    expanded.points.map((p) => ({ id: p.name, rows: readMetricsRowsSync(path.join(dir, p.name)) })),
    s.metric,
  );
  const statusOf = (n: string): SweepRunStatus => {
    const x = outcomes.get(n)!;
    if (x.status !== 'skipped') return x.status;
    return isStoppedEarly(x.dir) ? 'stopped early' : 'completed';
  };
  const stepsSaved = list.reduce((a, x) => a + x.stepsSaved, 0);
  const budgetStop = shared?.gate.stopMessage();
  if (budgetStop) log(`sweep ${name}: ${budgetStop}`);
  const ran = list.filter((x) => x.stepsRun > 0);
  const msPerStep = ran.length ? ran.reduce((a, x) => a + x.ms, 0) / ran.reduce((a, x) => a + x.stepsRun, 0) : 0;
  return {
    name,
    dir,
    manifest,
    outcomes: list,
    ranking: ranked.map((r) => ({ ...r, status: statusOf(r.id) })),
    stepsSaved,
    msSaved: stepsSaved * msPerStep,
    usdSaved: list.reduce((a, x) => a + x.usdSaved, 0),
    ...(budgetStop ? { budgetStop } : {}),
    cancelled: Boolean(o.signal?.aborted),
  };
}

/** Whether a run directory has its final checkpoint (the run completed). */
export function hasFinalCheckpoint(runDir: string): boolean {
  try {
    return fs.readFileSync(path.join(runDir, 'checkpoints.jsonl'), 'utf8').split('\n').some((l) => /"name"\s*:\s*"final"/.test(l));
  } catch {
    return false;
  }
}

/** The ranking as a text table (the CLI's output). */
export function rankingTable(r: SweepResult): string {
  const head = ['rank', 'run', 'status', `best ${r.manifest.metric.name}`, 'at step', 'last'];
  const fmt = (v: number | undefined) => (v === undefined ? '—' : Number(v.toPrecision(4)).toString());
  const rows = r.ranking.map((x) => [x.rank === undefined ? '—' : String(x.rank), x.id, x.status, fmt(x.best), x.bestStep === undefined ? '—' : String(x.bestStep), fmt(x.last)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The sweep file's budget fields. */
function pick(s: Budget): Budget {
  return { ...(s.max_cost_usd !== undefined ? { max_cost_usd: s.max_cost_usd } : {}), ...(s.max_tokens_total !== undefined ? { max_tokens_total: s.max_tokens_total } : {}) };
}
