// The SFT loop (grpo-reference §3.4), on the same run directory, checkpoints and events as GRPO runs.
// Step s (0-based, epoch = ⌊s / batches per epoch⌋):
//   1. validation NLL first when eval_every > 0 and s % eval_every == 0 (forward only, the weights
//      after s updates), as `test/nll`;
//   2. the batch's datums, then forward_backward (cross_entropy) and optim_step submitted back to back
//      (the service runs them in order), lr from the schedule;
//   3. a state+sampler checkpoint named s+1 when (s+1) % save_every == 0, recorded with batch = s+1
//      (the next step to run) and the epoch; 4. one metrics.jsonl line, then the checkpoint record.
// A `final` checkpoint follows the last step. Cancelling stops between steps; a state checkpoint at the
// next step is saved so a resume repeats and loses nothing.
import { SpanTimer } from '../grpo/spanTimer';
import { COOKBOOK_ADAM } from '../grpo/trainStep';
import type { GrpoEvent, GrpoRunResult, GrpoRunStatus } from '../grpo/types';
import type { Renderer, TrainOnWhat } from '../render/types';
import { checkpointName, endAfterThrow, endStretch, loopIo, openTrainingClient, recordStep, saveCheckpoint, serverGoneSignal, withInnerSignal } from '../runs/loopRuntime';
import type { CheckpointRecord } from '../runs/runDirectory';
import type { RunWriter } from '../runs/runWriter';
import type { ServiceClient, TrainingClient } from '../tinker/client';
import { batchAt, batchesPerEpoch, Chat } from './data';
import { chatToDatum, meanNll, SftDatum, toWireSftDatum } from './datums';
import { learningRateAt, LrSchedule } from './lr';
import { METRIC } from '../../protocol/metricKeys';

export interface SftLoopConfig {
  model: string;
  loadCheckpointPath?: string;
  loraRank: number;
  learningRate: number;
  lrSchedule: LrSchedule;
  warmupSteps: number;
  batchSize: number;
  numEpochs?: number;
  maxSteps?: number;
  trainOnWhat: TrainOnWhat;
  maxLength?: number;
  evalEvery: number;
  saveEvery: number;
  seed: number;
  ttlSeconds?: number;
}

export interface RunSftOptions {
  service: ServiceClient;
  config: SftLoopConfig;
  renderer: Renderer;
  train: readonly Chat[];
  validation: readonly Chat[];
  writer: RunWriter;
  resumeFrom?: CheckpointRecord;
  /** run at most this many steps, then pause with a state + sampler checkpoint (see RunGrpoOptions.stopAfter) */
  stopAfter?: number;
  signal?: AbortSignal;
  onEvent?: (e: GrpoEvent) => void;
  log?: (line: string) => void;
}

export interface SftRunResult extends GrpoRunResult {
  /** first and last validation NLL seen in this invocation */
  firstTestNll?: number;
  lastTestNll?: number;
  /** first and last train_mean_nll of this invocation */
  firstTrainNll?: number;
  lastTrainNll?: number;
}

/** min(batches per epoch × epochs, max_steps); epochs default to 1 when max_steps is absent. */
export function totalSteps(nTrain: number, c: Pick<SftLoopConfig, 'batchSize' | 'numEpochs' | 'maxSteps'>): number {
  const byEpochs = c.numEpochs !== undefined || c.maxSteps === undefined ? batchesPerEpoch(nTrain, c.batchSize) * (c.numEpochs ?? 1) : Infinity;
  return Math.min(byEpochs, c.maxSteps ?? Infinity);
}

export function runSft(o: RunSftOptions): Promise<SftRunResult> {
  return withInnerSignal(o.signal, (signal) => runLoop({ ...o, signal }));
}

async function runLoop(o: RunSftOptions): Promise<SftRunResult> {
  const c = o.config;
  const io = loopIo(o);
  const { log, emit, checkCancel } = io;
  const signal = o.signal;
  // a user cancel lets the request in flight finish; a server that went away is not waited for
  const gone = serverGoneSignal(signal);
  const startStep = o.resumeFrom?.batch ?? 0;
  const endStep = totalSteps(o.train.length, c);
  const stopStep = o.stopAfter !== undefined ? Math.min(endStep, startStep + Math.max(1, o.stopAfter)) : endStep;
  const nBatches = batchesPerEpoch(o.train.length, c.batchSize);

  // datums are built once per chat; a chat with nothing to train (cut before its answer) is skipped
  const datumCache = new Map<string, SftDatum | null>();
  let truncatedCount = 0;
  const datumOf = (chat: Chat): SftDatum | undefined => {
    let d = datumCache.get(chat.id);
    if (d === undefined) {
      d = chatToDatum(o.renderer, chat.messages, c.trainOnWhat, c.maxLength) ?? null;
      if (d?.truncated || (d === null && c.maxLength !== undefined)) truncatedCount++;
      datumCache.set(chat.id, d);
    }
    return d ?? undefined;
  };
  const validationDatums = o.validation.map(datumOf).filter((d): d is SftDatum => d !== undefined);

  let status: GrpoRunStatus = 'completed';
  let error: string | undefined;
  let stepsRun = 0;
  let lastStep = startStep - 1;
  let lastSavedBatch = startStep;
  let tc: TrainingClient | undefined;
  const result: Omit<SftRunResult, 'runDir' | 'status' | 'iterationsRun'> = {};

  emit({ type: 'started', runDir: o.writer.dir, runName: o.writer.name, model: c.model, startStep, endStep, resumed: o.resumeFrom !== undefined });
  log(`${o.resumeFrom ? `resuming at step ${startStep} from ${o.resumeFrom.state_path}` : 'starting'}: ${c.model}, batch ${c.batchSize}, ${nBatches} batches per epoch, lr ${c.learningRate} (${c.lrSchedule}, warmup ${c.warmupSteps}), steps ${startStep}..${endStep - 1}`);

  // SFT checkpoints also record the epoch of their batch
  const epochOf = (batch: number) => ({ epoch: Math.floor(batch / nBatches) });

  /** NLL of the validation chats under the current weights (forward only, batch_size chats per call). */
  const validationNll = async (step: number, trainer: TrainingClient): Promise<number> => {
    const logprobs: ArrayLike<number>[] = [];
    emit({ type: 'phase', step, phase: 'eval', done: 0, total: validationDatums.length });
    for (let k = 0; k < validationDatums.length; k += c.batchSize) {
      const chunk = validationDatums.slice(k, k + c.batchSize);
      // only a server gone aborts it: a request abandoned mid-submission would leave a gap in the
      // client's request sequence, and the resume checkpoint saved on cancel could not follow it
      const out = await (await trainer.forward(chunk.map(toWireSftDatum), 'cross_entropy', undefined, gone)).result(gone);
      out.loss_fn_outputs.forEach((x, i) => {
        const lp = x['logprobs'];
        if (!lp) throw new Error(`forward returned no logprobs for validation datum ${k + i}`);
        logprobs.push(lp.data);
      });
      emit({ type: 'phase', step, phase: 'eval', done: logprobs.length, total: validationDatums.length });
      checkCancel();
    }
    return meanNll(validationDatums, logprobs);
  };

  try {
    if (startStep >= endStep) {
      log(`nothing to run: the run is at step ${startStep} of ${endStep}`);
      emit({ type: 'finished', runDir: o.writer.dir, status, lastStep });
      return { runDir: o.writer.dir, status, iterationsRun: 0 };
    }
    const userMetadata = { renderer_name: o.renderer.name };
    tc = await openTrainingClient(o.service, c, o.resumeFrom, userMetadata, signal);
    const trainer = tc;

    for (let s = startStep; s < stopStep; s++) {
      checkCancel();
      const timer = new SpanTimer();
      const t0 = performance.now();
      const { epoch, items } = batchAt(o.train, s, c.batchSize, c.seed);
      const lr = learningRateAt(c.learningRate, c.lrSchedule, s, endStep, c.warmupSteps);
      const metrics: Record<string, number> = { epoch, progress: Math.min((s + 1) / endStep, 1), learning_rate: lr, [METRIC.lr]: lr };

      if (c.evalEvery > 0 && s % c.evalEvery === 0 && validationDatums.length > 0) {
        const nll = await timer.time('evaluation', () => validationNll(s, trainer));
        metrics[METRIC.testNll] = nll;
        result.firstTestNll ??= nll;
        result.lastTestNll = nll;
        checkCancel();
      }

      const datums = items.map(datumOf).filter((d): d is SftDatum => d !== undefined);
      if (datums.length === 0) throw new Error(`step ${s}: no chat of the batch has a token to train on (max_length ${c.maxLength ?? 'unset'} cuts them before the answer?)`);
      emit({ type: 'phase', step: s, phase: 'training' });
      // From here the update is submitted: the step is finished and written even if cancelled.
      const trained = await timer.time('train_step', async () => {
        const fbSubmitted = trainer.forwardBackward(datums.map(toWireSftDatum), 'cross_entropy', undefined, gone);
        const optSubmitted = trainer.optimStep({ learning_rate: lr, ...COOKBOOK_ADAM }, gone);
        const [fb, opt] = await Promise.all([fbSubmitted, optSubmitted]);
        return Promise.all([fb.result(gone), opt.result(gone)]);
      });
      const [fbOut, optOut] = trained;
      const trainLogprobs = fbOut.loss_fn_outputs.map((x, i) => {
        const lp = x['logprobs'];
        if (!lp) throw new Error(`forward_backward returned no logprobs for datum ${i}`);
        return lp.data;
      });
      Object.assign(metrics, optOut.metrics ?? {});
      metrics.num_sequences = datums.length;
      metrics.num_tokens = datums.reduce((n, d) => n + d.modelInput.length, 0);
      metrics.num_loss_tokens = datums.reduce((n, d) => n + d.weights.reduce((a, b) => a + b, 0), 0);
      metrics.train_mean_nll = meanNll(datums, trainLogprobs);
      result.firstTrainNll ??= metrics.train_mean_nll;
      result.lastTrainNll = metrics.train_mean_nll;

      const next = s + 1;
      let record: CheckpointRecord | undefined;
      if (c.saveEvery > 0 && next % c.saveEvery === 0 && next < endStep) {
        emit({ type: 'phase', step: s, phase: 'checkpoint' });
        record = await timer.time('save_checkpoint', () => saveCheckpoint(trainer, checkpointName(next), next, 'both', { ttlSeconds: c.ttlSeconds, extra: epochOf(next), signal: gone }));
      }
      recordStep(o.writer, io, s, metrics, { timer, t0 }, [record]);
      if (record) lastSavedBatch = next;
      stepsRun++;
      lastStep = s;
      log(`step ${s}/${endStep}: train_mean_nll ${metrics.train_mean_nll.toFixed(4)}${metrics[METRIC.testNll] !== undefined ? `, test/nll ${metrics[METRIC.testNll].toFixed(4)}` : ''}, lr ${lr.toExponential(2)}, ${metrics[METRIC.timeTotal].toFixed(2)} s`);
    }
    if (truncatedCount > 0) log(`max_length ${c.maxLength}: ${truncatedCount} chats were cut`);

    status = await endStretch({ trainer, writer: o.writer, io, stopStep, endStep, lastSavedBatch, ttlSeconds: c.ttlSeconds, unit: 'steps', done: stepsRun, extra: epochOf });
  } catch (err) {
    ({ status, error } = await endAfterThrow(err, signal, { trainer: tc, writer: o.writer, io, batch: lastStep + 1, lastSavedBatch, ttlSeconds: c.ttlSeconds, unit: 'steps', done: stepsRun, extra: epochOf }));
  }
  emit({ type: 'finished', runDir: o.writer.dir, status, lastStep });
  return { runDir: o.writer.dir, status, iterationsRun: stepsRun, ...(error ? { error } : {}), ...result };
}
