// What the supervised kinds (SFT, DPO) share of a run's settings and of a step's opening: the span
// timer, the step's batch (batches.ts), its learning rate (lr.ts) and first metrics, and the periodic
// validation on the weights after s updates (grpo-reference §3.4). Each kind's loop adds its own
// validation, batch datums and update after it.
import { SpanTimer } from '../runs/spanTimer';
import { serverGoneSignal, type LoopIo } from '../runs/loopRuntime';
import { METRIC } from '../../protocol/metricKeys';
import { batchAt } from './batches';
import { learningRateAt, type LrSchedule } from './lr';

/** A supervised kind's loop settings that every such kind has. */
export interface SupervisedLoopConfig {
  model: string;
  loadCheckpointPath?: string;
  loraRank: number;
  learningRate: number;
  lrSchedule: LrSchedule;
  /** steps of linear warmup before the schedule (none when left out) */
  warmupSteps?: number;
  batchSize: number;
  numEpochs?: number;
  maxSteps?: number;
  maxLength?: number;
  evalEvery: number;
  saveEvery: number;
  seed: number;
  ttlSeconds?: number;
}

/** The spec fields a supervised kind's spec has (resolved). */
export interface SupervisedSpecFields {
  model: string;
  load_checkpoint_path?: string | undefined;
  lora_rank: number;
  lr_schedule: LrSchedule;
  batch_size: number;
  num_epochs?: number | undefined;
  max_steps?: number | undefined;
  max_length?: number | undefined;
  eval_every: number;
  save_every: number;
  seed: number;
  ttl_seconds?: number | undefined;
}

/** The shared settings of a supervised spec and its resolved learning rate; the kind adds its own. */
export function supervisedLoopConfig(spec: SupervisedSpecFields, learningRate: number): SupervisedLoopConfig {
  return {
    model: spec.model,
    ...(spec.load_checkpoint_path ? { loadCheckpointPath: spec.load_checkpoint_path } : {}),
    loraRank: spec.lora_rank,
    learningRate,
    lrSchedule: spec.lr_schedule,
    batchSize: spec.batch_size,
    ...(spec.num_epochs !== undefined ? { numEpochs: spec.num_epochs } : {}),
    ...(spec.max_steps !== undefined ? { maxSteps: spec.max_steps } : {}),
    ...(spec.max_length !== undefined ? { maxLength: spec.max_length } : {}),
    evalEvery: spec.eval_every,
    saveEvery: spec.save_every,
    seed: spec.seed,
    ...(spec.ttl_seconds !== undefined ? { ttlSeconds: spec.ttl_seconds } : {}),
  };
}

/** A supervised step as it opens. */
export interface StepOpening<T> {
  /** aborts only when the server went away: a user cancel lets the request in flight finish */
  gone: AbortSignal | undefined;
  timer: SpanTimer;
  /** when the step began (performance.now()), for time/total */
  t0: number;
  /** the step's examples (chats, pairs) */
  items: T[];
  lr: number;
  /** the step's metrics row so far: epoch, progress, the learning rate */
  metrics: Record<string, number>;
}

/** Opens step `s` of `endStep` over the train examples: its batch (shuffled per epoch by the seed), learning rate and first metrics. */
export function openSupervisedStep<T>(s: number, endStep: number, train: readonly T[], c: SupervisedLoopConfig, signal: AbortSignal): StepOpening<T> {
  const gone = serverGoneSignal(signal);
  const timer = new SpanTimer();
  const t0 = performance.now();
  const { epoch, items } = batchAt(train, s, c.batchSize, c.seed);
  const lr = learningRateAt(c.learningRate, c.lrSchedule, s, endStep, c.warmupSteps);
  const metrics: Record<string, number> = { epoch, progress: Math.min((s + 1) / endStep, 1), learning_rate: lr, [METRIC.lr]: lr };
  return { gone, timer, t0, items, lr, metrics };
}

/**
 * The validation that opens step `s` when due (eval_every > 0, s a multiple of it, something to
 * validate): timed as evaluation; `record` takes its value before a cancel is honoured, so a
 * cancelled step still reports what it measured.
 */
export async function validateWhenDue<V>(
  s: number,
  o: { evalEvery: number; count: number; timer: SpanTimer; io: LoopIo },
  validate: () => Promise<V>,
  record: (v: V) => void,
): Promise<void> {
  if (!(o.evalEvery > 0 && s % o.evalEvery === 0 && o.count > 0)) return;
  record(await o.timer.time('evaluation', validate));
  o.io.checkCancel();
}
