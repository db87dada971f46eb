// The SFT loop (grpo-reference §3.4), on the same run directory, checkpoints and events as GRPO runs.
// Step s (0-based, epoch = ⌊s / batches per epoch⌋):
//   1. validation NLL first when eval_every > 0 and s % eval_every == 0 (forward only, the weights
//      after s updates), as `test/nll`;
//   2. the batch's datums, then forward_backward (cross_entropy) and optim_step submitted back to back
//      (the service runs them in order), lr from the schedule;
//   3. a state+sampler checkpoint named s+1 when (s+1) % save_every == 0, recorded with batch = s+1
//      (the next step to run) and the epoch; 4. one metrics.jsonl line, then the checkpoint record.
// A `final` checkpoint follows the last step. Cancelling stops between steps; a state checkpoint at the
// next step is saved so a resume repeats and loses nothing. With a teacher (top-K soft-target
// distillation, topK.ts), each chat's targets become the teacher's top K next tokens per position the
// first time the chat is trained (the teacher is asked once per chat; the datums stay for later epochs);
// validation and NLL evaluators keep the chats' own tokens. As GRPO's, the loop is a run object
// (SftRun) advanced N steps at a time; runSft advances it to the end in one call.
import { COOKBOOK_ADAM } from '../tinker/adam';
import type { SftRunResult } from '../runs/runEvents';
import type { Renderer, TrainOnWhat } from '../render/types';
import { LoopIo, RunCore, RunCoreParts } from '../runs/loopRuntime';
import type { SamplingClient, TrainingClient } from '../tinker/client';
import type { Chat } from '../training/chats';
import { batchesPerEpoch, totalSteps } from '../training/batches';
import { openSupervisedStep, validateWhenDue, type SupervisedLoopConfig } from '../training/stepOpening';
import { chatToDatum, meanNll, SftDatum, toWireSftDatum } from './datums';
import { DatasetError } from '../data/problem';
import { RendererError } from '../render/errors';
import { softTargetDatums } from './topK';
import { METRIC } from '../../protocol/metricKeys';
import { dueAt, runSamplingEvaluator, type InlineEvaluator } from '../evals/inline';
import { inlineEvalKeys } from '../evals/inlineSpec';

export interface SftLoopConfig extends SupervisedLoopConfig {
  warmupSteps: number;
  trainOnWhat: TrainOnWhat;
  /** the spec's checkpoint_metadata: user_metadata of every checkpoint the run saves */
  checkpointMetadata?: Record<string, string>;
  /** with a teacher: K, the soft targets per position (n_teacher_targets) */
  nTeacherTargets?: number;
}

export interface RunSftOptions extends RunCoreParts {
  config: SftLoopConfig;
  renderer: Renderer;
  train: readonly Chat[];
  validation: readonly Chat[];
  /** the spec's inline evaluators (evals/inline.ts): NLL on chat files, sampling with a grader */
  evals?: readonly InlineEvaluator[];
  /** top-K soft-target distillation: the teacher's sampler (its top-k prompt log-probs) */
  teacher?: Pick<SamplingClient, 'sample'>;
}

/** min(batches per epoch × epochs, max_steps); epochs default to 1 when max_steps is absent. */
/**
 * A chat's datum through the run's renderer; a chat the renderer cannot render (reasoning or tool
 * calls for a family without them, a bad `trainable` flag) fails naming the chat's file and line.
 */
export function renderedChat(renderer: Renderer, chat: Chat, trainOnWhat: TrainOnWhat, maxLength?: number): SftDatum | undefined {
  try {
    return chatToDatum(renderer, chat.messages, trainOnWhat, maxLength);
  } catch (err) {
    if (err instanceof RendererError) throw new DatasetError(`${chat.id}: ${err.message}`);
    throw err;
  }
}

/** A whole run in one call: create → advance to the end → `final` (or a resume point on cancel). */
export function runSft(o: RunSftOptions): Promise<SftRunResult> {
  return new SftRun(o).advance(undefined, { signal: o.signal, onEvent: o.onEvent, toEnd: true });
}

/** An SFT run that lives between calls: advanced N steps at a time on one training client. */
export class SftRun extends RunCore<SftRunResult> {
  readonly kind = 'sft';
  readonly unit = 'steps';
  private readonly nBatches: number;
  // datums are built once per chat; a chat with nothing to train (cut before its answer) is skipped
  private readonly datumCache = new Map<string, SftDatum | null>();
  // with a teacher: each chat's soft-target datum, once the teacher has scored it
  private readonly softCache = new Map<string, SftDatum>();
  private truncatedCount = 0;
  private readonly validationDatums: SftDatum[];
  private tally: Pick<SftRunResult, 'firstTestNll' | 'lastTestNll' | 'firstTrainNll' | 'lastTrainNll'> = {};

  constructor(private readonly o: RunSftOptions) {
    super(o, { ...o.config, rendererName: o.renderer.name }, totalSteps(o.train.length, o.config));
    this.nBatches = batchesPerEpoch(o.train.length, o.config.batchSize);
    this.validationDatums = o.validation.map((c) => this.datumOf(c)).filter((d): d is SftDatum => d !== undefined);
    const c = o.config;
    for (const e of o.evals ?? []) {
      if (e.kind !== 'nll') continue;
      const datums = e.chats.map((chat) => renderedChat(o.renderer, chat, c.trainOnWhat, c.maxLength)).filter((d): d is SftDatum => d !== undefined);
      if (datums.length === 0) throw new Error(`evaluator ${e.name}: none of its ${e.chats.length} chats has a token to score`);
      this.evalDatums.set(e.name, datums);
    }
  }

  /** the datums of each NLL evaluator, by name */
  private readonly evalDatums = new Map<string, SftDatum[]>();

  get trainCount(): number {
    return this.o.train.length;
  }

  get validationCount(): number {
    return this.o.validation.length;
  }

  private datumOf(chat: Chat): SftDatum | undefined {
    const c = this.o.config;
    let d = this.datumCache.get(chat.id);
    if (d === undefined) {
      d = renderedChat(this.o.renderer, chat, c.trainOnWhat, c.maxLength) ?? null;
      if (d?.truncated || (d === null && c.maxLength !== undefined)) this.truncatedCount++;
      this.datumCache.set(chat.id, d);
    }
    return d ?? undefined;
  }

  protected override startLine(): string {
    const c = this.o.config;
    return `${c.model}, batch ${c.batchSize}, ${this.nBatches} batches per epoch, lr ${c.learningRate} (${c.lrSchedule}, warmup ${c.warmupSteps})`;
  }

  protected override beginStretch(): void {
    this.tally = {};
  }

  protected override endOfStretch(io: LoopIo): void {
    if (this.truncatedCount > 0) io.log(`max_length ${this.o.config.maxLength}: ${this.truncatedCount} chats were cut`);
  }

  /** SFT checkpoints also record the epoch of their batch */
  protected override extra(batch: number): Record<string, unknown> {
    return { epoch: Math.floor(batch / this.nBatches) };
  }

  protected override result(base: Omit<SftRunResult, 'kind' | 'firstTestNll' | 'lastTestNll' | 'firstTrainNll' | 'lastTrainNll'>): SftRunResult {
    return { kind: 'sft', ...base, ...this.tally };
  }

  /** NLL of `validationDatums` (the validation chats, an NLL evaluator's) under the current weights (forward only, batch_size chats per call). */
  private async validationNll(step: number, trainer: TrainingClient, io: LoopIo, gone: AbortSignal | undefined, validationDatums: readonly SftDatum[] = this.validationDatums): Promise<number> {
    const c = this.o.config;
    const logprobs: ArrayLike<number>[] = [];
    io.emit({ type: 'phase', step, phase: 'eval', done: 0, total: validationDatums.length });
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
      io.emit({ type: 'phase', step, phase: 'eval', done: logprobs.length, total: validationDatums.length });
      io.checkCancel();
    }
    return meanNll(validationDatums, logprobs);
  }

  protected override async step_(s: number, io: LoopIo, signal: AbortSignal): Promise<void> {
    const c = this.o.config;
    const trainer = this.trainer!;
    const endStep = this.endStep;
    const { emit, log, checkCancel } = io;
    const { gone, timer, t0, items, lr, metrics } = openSupervisedStep(s, endStep, this.o.train, c, signal);

    await validateWhenDue(
      s,
      { evalEvery: c.evalEvery, count: this.validationDatums.length, timer, io },
      () => this.validationNll(s, trainer, io, gone),
      (nll) => {
        metrics[METRIC.testNll] = nll;
        this.tally.firstTestNll ??= nll;
        this.tally.lastTestNll = nll;
      },
    );

    // inline evaluators due at s, on the same weights (after s updates)
    for (const e of dueAt(this.o.evals ?? [], s)) {
      if (e.kind === 'nll') {
        metrics[inlineEvalKeys.nll(e.name)] = await timer.time('evaluation', () => this.validationNll(s, trainer, io, gone, this.evalDatums.get(e.name)!));
      } else {
        this.sampler ??= await trainer.saveWeightsAndGetSamplingClient(gone);
        const sampler = this.sampler;
        const r = await timer.time('evaluation', () =>
          runSamplingEvaluator(e, { step: s, sampler, renderer: this.o.renderer, writer: this.o.writer, signal, onProgress: (done, total) => emit({ type: 'phase', step: s, phase: 'eval', done, total }) }),
        );
        if (r.rewardErrors > 0) emit({ type: 'warning', step: s, message: `evaluator ${e.name}: ${r.rewardErrors} rewards failed and scored 0` });
        Object.assign(metrics, r.metrics);
      }
      checkCancel();
    }

    const trainable = items.map((chat) => [chat.id, this.datumOf(chat)] as const).filter((x): x is readonly [string, SftDatum] => x[1] !== undefined);
    if (trainable.length === 0) throw new Error(`step ${s}: no chat of the batch has a token to train on (max_length ${c.maxLength ?? 'unset'} cuts them before the answer?)`);
    let datums = trainable.map(([, d]) => d);
    if (this.o.teacher) {
      const K = c.nTeacherTargets ?? 20;
      const missing = trainable.filter(([id]) => !this.softCache.has(id));
      if (missing.length > 0) {
        emit({ type: 'phase', step: s, phase: 'teacher', done: 0, total: missing.length });
        const soft = await timer.time('teacher', () =>
          softTargetDatums(this.o.teacher!, missing.map(([, d]) => d), K, { signal, onDone: (done) => emit({ type: 'phase', step: s, phase: 'teacher', done, total: missing.length }) }),
        );
        missing.forEach(([id], i) => this.softCache.set(id, soft[i]!));
        checkCancel();
      }
      datums = trainable.map(([id]) => this.softCache.get(id)!);
    }
    emit({ type: 'phase', step: s, phase: 'training' });
    // From here the update is submitted: the step is finished and written even if cancelled.
    const trained = await timer.time('train_step', async () => {
      const fbSubmitted = trainer.forwardBackward(datums.map(toWireSftDatum), 'cross_entropy', undefined, gone);
      const optSubmitted = trainer.optimStep({ learning_rate: lr, ...COOKBOOK_ADAM }, gone);
      const [fb, opt] = await Promise.all([fbSubmitted, optSubmitted]);
      return Promise.all([fb.result(gone), opt.result(gone)]);
    });
    // the weights changed: a sampler of the old ones is stale
    this.sampler = undefined;
    const [fbOut, optOut] = trained;
    const trainLogprobs = fbOut.loss_fn_outputs.map((x, i) => {
      const lp = x['logprobs'];
      if (!lp) throw new Error(`forward_backward returned no logprobs for datum ${i}`);
      return lp.data;
    });
    Object.assign(metrics, optOut.metrics ?? {});
    metrics.num_sequences = datums.length;
    metrics.num_tokens = datums.reduce((n, d) => n + d.modelInput.length, 0);
    metrics[METRIC.tokensTrained] = this.tokensTrainedAfter(s, metrics.num_tokens);
    metrics.num_loss_tokens = datums.reduce((n, d) => n + d.weights.reduce((a, b) => a + b, 0), 0);
    metrics.train_mean_nll = meanNll(datums, trainLogprobs);
    this.tally.firstTrainNll ??= metrics.train_mean_nll;
    this.tally.lastTrainNll = metrics.train_mean_nll;

    await this.finishSupervisedStep(s, metrics, io, { timer, t0 }, { trainer, saveEvery: c.saveEvery, ttlSeconds: c.ttlSeconds, signal: gone });
    log(`step ${s}/${endStep}: train_mean_nll ${metrics.train_mean_nll.toFixed(4)}${metrics[METRIC.testNll] !== undefined ? `, test/nll ${metrics[METRIC.testNll].toFixed(4)}` : ''}, lr ${lr.toExponential(2)}, ${metrics[METRIC.timeTotal].toFixed(2)} s`);
  }
}
