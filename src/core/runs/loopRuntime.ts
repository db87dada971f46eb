// What the GRPO and SFT loops share around their steps: one internal abort signal, the log and event
// plumbing, the training client a run starts from, checkpoint saving, and how a stretch of training
// ends — the final checkpoint, a pause (`stopAfter`) with a resume checkpoint, or a cancel that saves
// one so a resume repeats nothing. The loops keep only what a step does.
import { setMaxListeners } from 'node:events';
import type { SpanTimer } from '../grpo/spanTimer';
import type { GrpoEvent } from '../grpo/types';
import { METRIC } from '../../protocol/metricKeys';
import type { ServiceClient, TrainingClient } from '../tinker/client';
import type { CheckpointRecord } from './runDirectory';
import type { RunWriter } from './runWriter';
import { errorMessage } from '../errors';

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
  emit(e: GrpoEvent): void;
  /** throws Cancelled once the signal is aborted */
  checkCancel(): void;
}

export function loopIo(o: { writer: RunWriter; signal?: AbortSignal; log?: (line: string) => void; onEvent?: (e: GrpoEvent) => void }): LoopIo {
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
  o: { ttlSeconds?: number; extra?: Record<string, unknown>; signal?: AbortSignal } = {},
): Promise<CheckpointRecord> {
  const stateSubmitted = client.saveState(name, { ttlSeconds: o.ttlSeconds }, o.signal);
  const samplerSubmitted = kind === 'both' ? client.saveWeightsForSampler(name, { ttlSeconds: o.ttlSeconds }, o.signal) : undefined;
  const state = await (await stateSubmitted).result(o.signal);
  const sampler = samplerSubmitted ? await (await samplerSubmitted).result(o.signal) : undefined;
  return { name, batch, ...(o.extra ?? {}), state_path: state.path, ...(sampler?.path ? { sampler_path: sampler.path } : {}) };
}

export interface StretchEnd {
  trainer: TrainingClient;
  writer: RunWriter;
  io: LoopIo;
  /** the step this call stopped before, and the run's last step + 1 */
  stopStep: number;
  endStep: number;
  /** the batch of the last checkpoint this call recorded */
  lastSavedBatch: number;
  ttlSeconds?: number;
  /** 'iterations' or 'steps', for the log */
  unit: string;
  done: number;
  extra?: (batch: number) => Record<string, unknown>;
}

/**
 * Ends a stretch that ran to `stopStep`: before the run's end it pauses, with a state + sampler
 * checkpoint at `stopStep` (unless one was just saved there); at the end it saves `final`.
 */
export async function endStretch(o: StretchEnd): Promise<'paused' | 'completed'> {
  const record = async (name: string, batch: number, ttlSeconds?: number) => {
    const rec = await saveCheckpoint(o.trainer, name, batch, 'both', { ttlSeconds, extra: o.extra?.(batch) });
    o.writer.appendCheckpoint(rec);
    o.io.emit({ type: 'checkpoint', record: rec });
    return rec;
  };
  if (o.stopStep < o.endStep) {
    if (o.lastSavedBatch < o.stopStep) await record(checkpointName(o.stopStep), o.stopStep, o.ttlSeconds);
    o.io.log(`paused after ${o.done} ${o.unit} (next step ${o.stopStep} of ${o.endStep})`);
    return 'paused';
  }
  const final = await record('final', o.endStep);
  o.io.log(`finished: ${o.done} ${o.unit}, final checkpoint ${final.state_path}`);
  return 'completed';
}

/** After a cancel: a state checkpoint at exactly the steps written, so resuming repeats and loses nothing. */
export async function saveResumePoint(o: Omit<StretchEnd, 'trainer' | 'stopStep' | 'endStep'> & { trainer: TrainingClient | undefined; batch: number }): Promise<void> {
  if (o.trainer && o.batch > o.lastSavedBatch) {
    try {
      const rec = await saveCheckpoint(o.trainer, checkpointName(o.batch), o.batch, 'state', { ttlSeconds: o.ttlSeconds, extra: o.extra?.(o.batch) });
      o.writer.appendCheckpoint(rec);
      o.io.emit({ type: 'checkpoint', record: rec });
    } catch (saveErr) {
      o.io.log(`cancelled; saving a resume checkpoint at step ${o.batch} failed: ${errorMessage(saveErr)}`);
    }
  }
  o.io.log(`cancelled after ${o.done} ${o.unit} (next step ${o.batch})`);
}

/**
 * Writes a finished step: its wall time (`t0` from performance.now()), span metrics and timing
 * spans, its metrics, then the checkpoints it saved — after the metrics, so a reader never sees a
 * step's checkpoint without the step.
 */
export function recordStep(
  writer: RunWriter,
  io: LoopIo,
  step: number,
  metrics: Record<string, number>,
  timing: { timer: SpanTimer; t0: number },
  checkpoints: ReadonlyArray<CheckpointRecord | undefined>,
): void {
  metrics[METRIC.timeTotal] = (performance.now() - timing.t0) / 1000;
  Object.assign(metrics, timing.timer.metrics());
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
    await saveResumePoint(resume);
    return outcome;
  }
  resume.io.log(`failed at step ${resume.batch}: ${outcome.error}`);
  return outcome;
}
