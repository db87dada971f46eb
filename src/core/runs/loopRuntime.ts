// What the GRPO and SFT loops share around their steps: the run object (RunCore) that holds a run's
// training client, current sampler and step counter between calls and is advanced N steps at a time;
// one internal abort signal per stretch, the log and event plumbing, the training client a run starts
// from, checkpoint saving, and how a stretch ends — the final checkpoint, a pause (the steps asked
// for are done), or a cancel that saves a resume point so a resume repeats nothing. The loops keep
// only what a step does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setMaxListeners } from 'node:events';
import type { SpanTimer } from './spanTimer';
import type { RunEndStatus, RunEvent, RunResultBase } from './runEvents';
import { METRIC } from '../../protocol/metricKeys';
import type { SamplingClient, ServiceClient, TrainingClient } from '../tinker/client';
import { readMetricsRowsSync, type CheckpointRecord } from './runDirectory';
import type { RunWriter } from './runWriter';
import { ModelRegistryOrigin } from './runConfig';
import { errorMessage } from '../errors';
import { UsageMeter } from '../tinker/usage';
import type { Budget } from '../cost/budget';
import type { PriceTable } from '../cost/prices';
import { RunCost, pricesInForce, spentBefore } from './runCost';

/** Thrown between phases once the run's signal is aborted. */
export class Cancelled extends Error {}

/**
 * The abort reason when the run's server went away (the local engine process died): the run fails
 * with this message instead of being cancelled, since no resume point can be saved on a dead server;
 * its last checkpoint is where Resume continues.
 */
export class ServerGone extends Error {
  override name = 'ServerGone';
}

/** The abort reason a sweep gives a run the median rule stops: it ends like a cancel (a resume point saved), and says so. */
export class StoppedEarly extends Error {
  override name = 'StoppedEarly';
}

/** Thrown before a step that would cross the run's budget: the run ends like a cancel (a resume point saved), with the budget's words. */
export class BudgetStop extends Error {
  override name = 'BudgetStop';
}

/**
 * A signal that follows `signal` only when its reason is ServerGone: the step in flight and its
 * checkpoint are finished after a user cancel, but not waited for on a server that no longer exists.
 */
export function serverGoneSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  if (!signal) return undefined;
  const ac = new AbortController();
  const check = () => {
    if (signal.reason instanceof ServerGone) ac.abort(signal.reason);
  };
  if (signal.aborted) check();
  else signal.addEventListener('abort', check, { once: true });
  return ac.signal;
}

/** How a stretch that threw ends: a user cancel, or a failure (a server that went away included). */
export function stopOutcome(err: unknown, signal: AbortSignal | undefined): { status: 'cancelled' } | { status: 'failed'; error: string } {
  if (signal?.reason instanceof ServerGone) return { status: 'failed', error: signal.reason.message };
  if (err instanceof Cancelled || signal?.aborted) return { status: 'cancelled' };
  return { status: 'failed', error: errorMessage(err) };
}

export function checkpointName(step: number): string {
  return String(step).padStart(6, '0');
}

/**
 * Runs `fn` with one internal signal that follows `outer`: the many concurrent requests of a step each
 * add an abort listener to it, not to the caller's signal.
 */
export async function withInnerSignal<T>(outer: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const inner = new AbortController();
  setMaxListeners(0, inner.signal);
  const onAbort = () => inner.abort(outer?.reason);
  if (outer?.aborted) inner.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(inner.signal);
  } finally {
    outer?.removeEventListener('abort', onAbort);
  }
}

export interface LoopIo {
  /** a line for the caller and for the run's logs.log */
  log(line: string): void;
  /** an event for the caller; a failing listener (a view, a progress bar) never stops training */
  emit(e: RunEvent): void;
  /** throws Cancelled once the signal is aborted */
  checkCancel(): void;
}

export function loopIo(o: { writer: RunWriter; signal?: AbortSignal; log?: (line: string) => void; onEvent?: (e: RunEvent) => void }): LoopIo {
  const log = (line: string) => {
    o.log?.(line);
    o.writer.appendLog(`${new Date().toISOString()} ${line}`);
  };
  return {
    log,
    emit: (e) => {
      try {
        o.onEvent?.(e);
      } catch (err) {
        log(`an event listener failed on "${e.type}": ${errorMessage(err)}`);
      }
    },
    checkCancel: () => {
      if (o.signal?.aborted) throw new Cancelled('cancelled');
    },
  };
}

/** The training client a run starts from: its resume point (weights and optimizer), a checkpoint to load (weights only), or fresh LoRA weights. */
export function openTrainingClient(
  service: ServiceClient,
  c: { model: string; loraRank: number; seed?: number; loadCheckpointPath?: string },
  resumeFrom: CheckpointRecord | undefined,
  userMetadata: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<TrainingClient> {
  if (resumeFrom?.state_path) return service.createTrainingClientFromState(resumeFrom.state_path, { withOptimizer: true, userMetadata }, signal);
  if (c.loadCheckpointPath) return service.createTrainingClientFromState(c.loadCheckpointPath, { withOptimizer: false, userMetadata }, signal);
  return service.createLoraTrainingClient(c.model, { rank: c.loraRank, seed: c.seed, userMetadata }, signal);
}

/** Saves a checkpoint under `name` (state, or state and sampler weights) and returns its record (`extra` fields included). */
export async function saveCheckpoint(
  client: TrainingClient,
  name: string,
  batch: number,
  kind: 'state' | 'both',
  o: { ttlSeconds?: number; extra?: Record<string, unknown>; metadata?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<CheckpointRecord> {
  // the run's metadata (spec checkpoint_metadata, run_name, spec_file), the step, and the caller's
  const userMetadata = { ...(client.checkpointMetadata ?? {}), step: String(batch), ...(o.metadata ?? {}) };
  const stateSubmitted = client.saveState(name, { ttlSeconds: o.ttlSeconds, userMetadata }, o.signal);
  const samplerSubmitted = kind === 'both' ? client.saveWeightsForSampler(name, { ttlSeconds: o.ttlSeconds, userMetadata }, o.signal) : undefined;
  const state = await (await stateSubmitted).result(o.signal);
  const sampler = samplerSubmitted ? await (await samplerSubmitted).result(o.signal) : undefined;
  return { name, batch, ...(o.extra ?? {}), state_path: state.path, ...(sampler?.path ? { sampler_path: sampler.path } : {}) };
}

export interface StretchEnd {
  trainer: TrainingClient;
  writer: RunWriter;
  io: LoopIo;
  /** the batch of the last checkpoint this call recorded */
  lastSavedBatch: number;
  ttlSeconds?: number;
  /** 'iterations' or 'steps', for the log */
  unit: string;
  done: number;
  extra?: (batch: number) => Record<string, unknown>;
}

/** After a cancel: a state checkpoint at exactly the steps written, so resuming repeats and loses nothing. */
export async function saveResumePoint(o: Omit<StretchEnd, 'trainer'> & { trainer: TrainingClient | undefined; batch: number; stoppedEarly?: boolean; budgetStop?: boolean }): Promise<void> {
  if (o.trainer && o.batch > o.lastSavedBatch) {
    try {
      const rec = await saveCheckpoint(o.trainer, checkpointName(o.batch), o.batch, 'state', { ttlSeconds: o.ttlSeconds, extra: o.extra?.(o.batch) });
      o.writer.appendCheckpoint(rec);
      o.io.emit({ type: 'checkpoint', record: rec });
    } catch (saveErr) {
      o.io.log(`cancelled; saving a resume checkpoint at step ${o.batch} failed: ${errorMessage(saveErr)}`);
    }
  }
  o.io.log(`${o.stoppedEarly ? 'stopped early' : o.budgetStop ? 'stopped by its budget' : 'cancelled'} after ${o.done} ${o.unit} (next step ${o.batch})`);
}

/**
 * Writes a finished step: its wall time (`t0` from performance.now()), span metrics and timing
 * spans, its token usage and estimated cost (`cost`: what the run's clients counted since the last
 * step), its metrics, then the checkpoints it saved — after the metrics, so a reader never sees a
 * step's checkpoint without the step.
 */
export function recordStep(
  writer: RunWriter,
  io: LoopIo,
  step: number,
  metrics: Record<string, number>,
  timing: { timer: SpanTimer; t0: number; queuePauses?: { take(): number } },
  checkpoints: ReadonlyArray<CheckpointRecord | undefined>,
  cost?: RunCost,
): void {
  metrics[METRIC.timeTotal] = (performance.now() - timing.t0) / 1000;
  // the run's requests' time on a paused queue since the last step (the run owns its service client)
  if (timing.queuePauses) metrics[METRIC.queuePaused] = timing.queuePauses.take();
  Object.assign(metrics, timing.timer.metrics());
  if (cost) {
    const priced = cost.stepMetrics();
    Object.assign(metrics, priced.metrics);
    for (const model of priced.unpriced)
      io.emit({ type: 'warning', step, message: `the price table (taken ${cost.prices.taken}) has no price for ${model}: its tokens are counted but left out of cost/* (add it to the tinker.prices setting)` });
  }
  writer.appendTimingSpans(step, timing.timer.timingSpans());
  writer.appendMetrics(step, metrics);
  io.emit({ type: 'metrics', step, metrics });
  for (const record of checkpoints) {
    if (!record) continue;
    writer.appendCheckpoint(record);
    io.emit({ type: 'checkpoint', record });
  }
}

/**
 * How a stretch that threw ends: a cancel saves a resume point (saveResumePoint) and reads
 * 'cancelled'; anything else (a server gone included) is logged and reads 'failed'.
 */
export async function endAfterThrow(
  err: unknown,
  signal: AbortSignal | undefined,
  resume: Parameters<typeof saveResumePoint>[0],
): Promise<{ status: 'cancelled' | 'failed'; error?: string }> {
  const outcome = stopOutcome(err, signal);
  if (outcome.status === 'cancelled') {
    await saveResumePoint({ ...resume, stoppedEarly: signal?.reason instanceof StoppedEarly });
    return outcome;
  }
  resume.io.log(`failed at step ${resume.batch}: ${outcome.error}`);
  return outcome;
}

/** What every run object is made of besides its loop's settings. */
export interface RunCoreParts {
  service: ServiceClient;
  writer: RunWriter;
  /** the checkpoint to resume from (the last record with a state_path) */
  resumeFrom?: CheckpointRecord;
  /** for the one-call wrappers (runGrpo, runSft): the whole run's signal and listener */
  signal?: AbortSignal;
  onEvent?: (e: RunEvent) => void;
  log?: (line: string) => void;
  /** the price table in force (default: the one config.json recorded, else the shipped defaults) */
  prices?: PriceTable;
  /** stop before a step that would cross it */
  budget?: Budget;
}

export interface AdvanceOptions {
  signal?: AbortSignal | undefined;
  onEvent?: ((e: RunEvent) => void) | undefined;
  /**
   * The one-call run: at the end save `final`, and on a cancel save a resume point. Without it (an
   * agent session between calls) a stretch ends 'paused' and saves nothing it was not asked to.
   */
  toEnd?: boolean;
}

/**
 * A run that lives between calls: its training client, current sampler and step counter stay in
 * memory, and `advance(n)` trains the next n steps with them. The loops (GrpoRun, SftRun) add what
 * a step does; opening, stretches, saves, loads and the final checkpoint are here.
 */
export abstract class RunCore<R extends RunResultBase> {
  abstract readonly kind: R['kind'];
  abstract readonly unit: 'iterations' | 'steps';
  trainer: TrainingClient | undefined;
  /** the sampler of the current weights (GRPO keeps one from open on; SFT makes one when asked) */
  sampler: SamplingClient | undefined;
  /** the next step to run */
  step: number;
  /** the batch of the last state checkpoint recorded */
  lastSavedBatch: number;
  private stretches = 0;

  constructor(
    protected readonly parts: RunCoreParts,
    private readonly start: { model: string; loraRank: number; seed?: number; loadCheckpointPath?: string; ttlSeconds?: number; rendererName: string; checkpointMetadata?: Record<string, string> },
    readonly endStep: number,
  ) {
    this.step = parts.resumeFrom?.batch ?? 0;
    this.lastSavedBatch = this.step;
    // the run's meter: every client its service creates (trainer, samplers, teachers) counts into it
    this.meter = parts.service.usage ??= new UsageMeter();
  }

  private readonly meter: UsageMeter;
  private costs: RunCost | undefined;

  /** The run's usage and cost so far; the cumulative figures continue from metrics.jsonl on resume. */
  get cost(): RunCost {
    if (!this.costs) {
      let config: Record<string, unknown> | undefined;
      try {
        config = this.parts.prices ? undefined : (JSON.parse(fs.readFileSync(path.join(this.parts.writer.dir, 'config.json'), 'utf8')) as Record<string, unknown>);
      } catch {
        config = undefined; // no config.json: the shipped defaults
      }
      this.costs = new RunCost(this.meter, pricesInForce(this.parts.prices, config), this.parts.budget, spentBefore(this.parts.writer.dir, this.step));
    }
    return this.costs;
  }

  /** The price table (before the first step only) and the budget the next steps are checked against. */
  setCostTerms(t: { prices?: PriceTable; budget?: Budget | undefined; gate?: RunCost['gate'] }): void {
    if (t.prices && !this.costs) this.parts.prices = t.prices;
    this.parts.budget = t.budget;
    if (this.costs) this.costs.budget = t.budget;
    if (t.gate) this.cost.gate = t.gate;
  }

  get writer(): RunWriter {
    return this.parts.writer;
  }

  get service(): ServiceClient {
    return this.parts.service;
  }

  /** Creates (or, resuming, loads) the training client, once. */
  async open(signal?: AbortSignal): Promise<void> {
    if (this.trainer) return;
    this.trainer = await openTrainingClient(this.parts.service, this.start, this.parts.resumeFrom, { renderer_name: this.start.rendererName }, signal);
    this.trainer.checkpointMetadata = this.runMetadata();
    await this.opened(signal);
  }

  /**
   * What every checkpoint of the run carries as user_metadata (saveCheckpoint adds the step): the
   * spec's checkpoint_metadata, the run's name and its spec file's name (not its folder), and the
   * registered model version it started from (config.json's model_registry, models/metadata.ts).
   */
  runMetadata(): Record<string, string> {
    let specFile: string | undefined;
    let registry: Record<string, string> = {};
    try {
      const cfg = JSON.parse(fs.readFileSync(path.join(this.parts.writer.dir, 'config.json'), 'utf8')) as { spec_file?: unknown; model_registry?: unknown };
      if (typeof cfg.spec_file === 'string') specFile = path.basename(cfg.spec_file);
      const origin = ModelRegistryOrigin.safeParse(cfg.model_registry);
      if (origin.success) registry = { registry_model: origin.data.name, registry_version: origin.data.version };
    } catch {
      // no config.json yet: the run's name is enough to find its checkpoints
    }
    return { ...(this.start.checkpointMetadata ?? {}), ...registry, run_name: path.basename(this.parts.writer.dir), ...(specFile ? { spec_file: specFile } : {}) };
  }

  /** A sampler of the current weights (an ephemeral snapshot when the loop keeps none). */
  async currentSampler(signal?: AbortSignal): Promise<SamplingClient> {
    await this.open(signal);
    this.sampler ??= await this.trainer!.saveWeightsAndGetSamplingClient(signal);
    return this.sampler;
  }

  protected async opened(_signal?: AbortSignal): Promise<void> {}
  protected beginStretch(): void {}
  protected endOfStretch(_io: LoopIo): void {}
  /** fields every checkpoint record of this run carries (SFT: the epoch) */
  protected extra(_batch: number): Record<string, unknown> | undefined {
    return undefined;
  }
  protected abstract startLine(): string;
  protected abstract step_(i: number, io: LoopIo, signal: AbortSignal): Promise<void>;
  /** the stretch's result: the fields every kind has, with the kind's own added */
  protected abstract result(base: Omit<RunResultBase, 'kind'>): R;

  private tokensSoFar?: number;
  /**
   * The cumulative `progress/tokens_trained` after step `i` trains `n` more tokens. A resumed run
   * continues from the value its metrics.jsonl holds for the step before the first one it runs.
   */
  protected tokensTrainedAfter(i: number, n: number): number {
    this.tokensSoFar ??= tokensTrainedBefore(this.parts.writer.dir, i);
    this.tokensSoFar += n;
    return this.tokensSoFar;
  }

  /** Called by a step once its metrics (and checkpoint, if any) are written. */
  protected stepDone(i: number, record: CheckpointRecord | undefined): void {
    this.step = i + 1;
    if (record?.state_path) this.lastSavedBatch = i + 1;
  }

  /**
   * The end of a supervised step (SFT, DPO): the periodic checkpoint when `saveEvery` falls due (not
   * after the last step: `final` covers it), the step's metrics row and that checkpoint, stepDone.
   */
  protected async finishSupervisedStep(
    i: number,
    metrics: Record<string, number>,
    io: LoopIo,
    timing: { timer: SpanTimer; t0: number },
    save: { trainer: TrainingClient; saveEvery: number; ttlSeconds: number | undefined; signal: AbortSignal | undefined },
  ): Promise<void> {
    const next = i + 1;
    let record: CheckpointRecord | undefined;
    if (save.saveEvery > 0 && next % save.saveEvery === 0 && next < this.endStep) {
      io.emit({ type: 'phase', step: i, phase: 'checkpoint' });
      record = await timing.timer.time('save_checkpoint', () =>
        saveCheckpoint(save.trainer, checkpointName(next), next, 'both', { ttlSeconds: save.ttlSeconds, extra: this.extra(next), signal: save.signal }),
      );
    }
    recordStep(this.writer, io, i, metrics, { ...timing, queuePauses: this.service.queuePauses }, [record], this.cost);
    this.stepDone(i, record);
  }

  /** Trains the next `n` steps (all that remain when undefined) and reports how the stretch ended. */
  advance(n: number | undefined, o: AdvanceOptions = {}): Promise<R> {
    return withInnerSignal(o.signal, (signal) => this.stretch(n, o, signal));
  }

  private async stretch(n: number | undefined, o: AdvanceOptions, signal: AbortSignal): Promise<R> {
    const w = this.parts.writer;
    const io = loopIo({ writer: w, signal, log: this.parts.log, onEvent: o.onEvent });
    const startStep = this.step;
    const endStep = this.endStep;
    const stopStep = n === undefined ? endStep : Math.min(endStep, startStep + Math.max(1, n));
    const resumed = this.parts.resumeFrom !== undefined || startStep > 0;
    const first = this.stretches++ === 0;
    this.beginStretch();
    let status: RunEndStatus = o.toEnd ? 'completed' : 'paused';
    let error: string | undefined;
    let budgetStop: string | undefined;
    let done = 0;
    io.emit({ type: 'started', runDir: w.dir, runName: w.name, model: this.start.model, startStep, endStep, resumed });
    io.log(`${first ? (this.parts.resumeFrom ? `resuming at step ${startStep} from ${this.parts.resumeFrom.state_path}` : 'starting') : `continuing at step ${startStep}`}: ${this.startLine()}, steps ${startStep}..${endStep - 1}`);
    try {
      if (startStep >= endStep) {
        io.log(`nothing to run: the run is at step ${startStep} of ${endStep}`);
        io.emit({ type: 'finished', runDir: w.dir, status: 'completed', lastStep: startStep - 1 });
        return this.result({ runDir: w.dir, status: 'completed', iterationsRun: 0 } as never);
      }
      await this.open(signal);
      for (let i = startStep; i < stopStep; i++) {
        io.checkCancel();
        const within = this.cost.check();
        if (!within.ok) throw new BudgetStop(within.message);
        await this.step_(i, io, signal);
        done++;
      }
      this.endOfStretch(io);
      if (o.toEnd) {
        const final = await this.saveNamed('final', 'both', undefined, io);
        io.log(`finished: ${done} ${this.unit}, final checkpoint ${final.state_path}`);
      } else io.log(`paused after ${done} ${this.unit} (next step ${this.step} of ${endStep})`);
    } catch (err) {
      const resume = { trainer: this.trainer, writer: w, io, batch: this.step, lastSavedBatch: this.lastSavedBatch, ttlSeconds: this.start.ttlSeconds, unit: this.unit, done, extra: (b: number) => this.extra(b) ?? {} };
      if (err instanceof BudgetStop) {
        // a clean stop, as a cancel: the resume point, then the budget's words in the log, a warning and the end
        status = 'cancelled';
        budgetStop = err.message;
        if (o.toEnd) await saveResumePoint({ ...resume, budgetStop: true });
        io.log(`budget: ${err.message}`);
        io.emit({ type: 'warning', step: this.step, message: err.message });
      } else if (o.toEnd) ({ status, error } = await endAfterThrow(err, signal, resume));
      else {
        const outcome = stopOutcome(err, signal);
        status = outcome.status;
        if (outcome.status === 'failed') {
          error = outcome.error;
          io.log(`failed at step ${this.step}: ${outcome.error}`);
        } else io.log(`cancelled after ${done} ${this.unit} (next step ${this.step})`);
      }
    }
    io.emit({ type: 'finished', runDir: w.dir, status, lastStep: this.step - 1, ...(budgetStop ? { budgetStop } : {}) });
    return this.result({ runDir: w.dir, status, iterationsRun: done, ...(error ? { error } : {}), ...(budgetStop ? { budgetStop } : {}) } as never);
  }

  /** Saves the current weights (state, or state and sampler) under `name` at the current step, and records it. */
  async saveNamed(name: string, kind: 'state' | 'both', ttlSeconds: number | undefined, io?: Pick<LoopIo, 'emit'>, signal?: AbortSignal, metadata?: Record<string, string>): Promise<CheckpointRecord> {
    await this.open(signal);
    const extra = this.extra(this.step);
    const rec = await saveCheckpoint(this.trainer!, name, this.step, kind, { ttlSeconds, ...(extra ? { extra } : {}), ...(metadata ? { metadata } : {}), signal });
    this.parts.writer.appendCheckpoint(rec);
    this.lastSavedBatch = this.step;
    io?.emit({ type: 'checkpoint', record: rec });
    return rec;
  }

  /** A state checkpoint at the current step when the last one is older: what a resume continues from. */
  async saveResumePoint(signal?: AbortSignal): Promise<CheckpointRecord | undefined> {
    if (!this.trainer || this.step <= this.lastSavedBatch) return undefined;
    return this.saveNamed(checkpointName(this.step), 'state', this.start.ttlSeconds, undefined, signal);
  }

  /** The next step continues from `path` (a tinker:// state path): weights and optimizer on the live training client. */
  async load(path: string, signal?: AbortSignal): Promise<void> {
    // a training client loads weights only as its first request: the loaded one replaces the live one
    // before the first step: weights only, a fresh optimizer (as the spec's load_checkpoint_path)
    const withOptimizer = this.step > 0 || this.parts.resumeFrom !== undefined;
    const next = await this.parts.service.createTrainingClientFromState(path, { withOptimizer, userMetadata: { renderer_name: this.start.rendererName } }, signal);
    next.checkpointMetadata = this.runMetadata();
    const old = this.trainer;
    const hadSampler = this.sampler !== undefined;
    this.trainer = next;
    this.sampler = undefined;
    if (!old) await this.opened(signal);
    else if (hadSampler) this.sampler = await next.saveWeightsAndGetSamplingClient(signal);
    this.parts.writer.appendCheckpoint({ name: `load-${checkpointName(this.step)}`, batch: this.step, state_path: path });
    this.lastSavedBatch = this.step;
    await old?.unload(signal).catch(() => undefined);
  }
}

/** The `progress/tokens_trained` a run's metrics.jsonl holds for the last step before `step` (0 when none). */
export function tokensTrainedBefore(runDir: string, step: number): number {
  if (step <= 0) return 0;
  let last = 0;
  for (const row of readMetricsRowsSync(runDir)) {
    if (row.step >= step) break;
    const v = (row as Record<string, unknown>)[METRIC.tokensTrained];
    if (typeof v === 'number' && Number.isFinite(v)) last = v;
  }
  return last;
}
