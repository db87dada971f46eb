// The DPO loop (the cookbook's preference/train_dpo.py), on the same run directory, checkpoints and
// events as GRPO and SFT runs. Before the first step the weights are saved as a sampler named
// `reference` (recorded in checkpoints.jsonl with batch 0 and `dpo_reference: true`): the reference
// model π_ref. A resumed run keeps using that same reference (the cookbook snapshots the resumed
// weights instead; Tinker Studio deliberately keeps the step-0 reference, as docs/run-specs.md says).
// Step s (0-based, epoch = ⌊s / batches per epoch⌋):
//   1. validation first when eval_every > 0 and s % eval_every == 0 (forward only, the weights after s
//      updates): the validation pairs' DPO loss, accuracy, margin and rewards (test/…), and the NLL of
//      their chosen completions (test/nll);
//   2. the batch's pairs as interleaved datums [chosen, rejected, …], the reference's sequence log-probs
//      (computed once per pair by the reference sampler's prompt log-probs), then forwardBackwardCustom
//      with the DPO loss and optim_step, the lr on a schedule (linear by default);
//   3. a state+sampler checkpoint named s+1 when (s+1) % save_every == 0; one metrics.jsonl line with the
//      cookbook's dpo_loss, accuracy, margin, chosen_reward, rejected_reward, num_pairs, and each
//      pair's implicit reward margin in iteration_NNNNNN/pairs.jsonl (the pairs panel reads them).
import { setMaxListeners } from 'node:events';
import { COOKBOOK_ADAM } from '../tinker/adam';
import type { DpoRunResult } from '../runs/runEvents';
import type { Renderer } from '../render/types';
import { LoopIo, RunCore, RunCoreParts } from '../runs/loopRuntime';
import type { CheckpointRecord } from '../runs/runDirectory';
import type { SamplingClient, TrainingClient } from '../tinker/client';
import { logprobsOf } from '../tinker/customLoss';
import { batchesPerEpoch, totalSteps } from '../training/batches';
import { openSupervisedStep, validateWhenDue, type SupervisedLoopConfig } from '../training/stepOpening';
import { METRIC } from '../../protocol/metricKeys';
import { DPO_METRIC_KEYS, dpoCustomLoss, dpoLoss, targetLogprobsFromPrompt, weightedSum } from './loss';
import { fullSequence, pairDatums, PairDatums, SideDatum, toWireDatum } from './datums';
import type { PreferencePair } from './pairs';
import { textInput } from '../tinker/types';

export interface DpoLoopConfig extends SupervisedLoopConfig {
  beta: number;
  /** α of the chosen-NLL term added to the DPO loss (0: DPO alone, the cookbook's) */
  nllWeight: number;
}

export interface RunDpoOptions extends RunCoreParts {
  config: DpoLoopConfig;
  renderer: Renderer;
  train: readonly PreferencePair[];
  validation: readonly PreferencePair[];
}

/** The checkpoint record of a DPO run's reference model (the weights at step 0). */
export const REFERENCE_CHECKPOINT = 'reference';

/** The name of the per-step file of pair margins in iteration_NNNNNN/. */
export const PAIR_MARGINS_FILE = 'pairs.jsonl';

/** One line of iteration_NNNNNN/pairs.jsonl: a pair of the step's batch (or of the validation set) and its implicit reward margin β·(ρ_c − ρ_r). */
export interface PairMarginRecord {
  pair: string;
  split: 'train' | 'validation';
  margin: number;
}

/** A whole run in one call: create → advance to the end → `final` (or a resume point on cancel). */
export function runDpo(o: RunDpoOptions): Promise<DpoRunResult> {
  return new DpoRun(o).advance(undefined, { signal: o.signal, onEvent: o.onEvent, toEnd: true });
}

interface ScoredPair {
  pair: PreferencePair;
  datums: PairDatums;
}

export class DpoRun extends RunCore<DpoRunResult> {
  readonly kind = 'dpo';
  readonly unit = 'steps';
  private readonly nBatches: number;
  private readonly datumCache = new Map<string, PairDatums | string>();
  private readonly validationPairs: ScoredPair[];
  /** the reference's sequence log-prob of each pair's chosen and rejected side, by pair id */
  private readonly refSums = new Map<string, [number, number]>();
  private reference: SamplingClient | undefined;
  /** the reference's sampler path */
  referencePath: string | undefined;
  private tally: Pick<DpoRunResult, 'firstTestNll' | 'lastTestNll' | 'firstAccuracy' | 'lastAccuracy' | 'firstDpoLoss' | 'lastDpoLoss'> = {};
  private unusable = 0;

  constructor(private readonly o: RunDpoOptions) {
    super(o, { ...o.config, rendererName: o.renderer.name }, totalSteps(o.train.length, o.config));
    this.nBatches = batchesPerEpoch(o.train.length, o.config.batchSize);
    this.validationPairs = o.validation.flatMap((pair) => {
      const d = this.datumsOf(pair);
      return d ? [{ pair, datums: d }] : [];
    });
  }

  get trainCount(): number {
    return this.o.train.length;
  }

  get validationCount(): number {
    return this.o.validation.length;
  }

  private datumsOf(pair: PreferencePair): PairDatums | undefined {
    let d = this.datumCache.get(pair.id);
    if (d === undefined) {
      d = pairDatums(this.o.renderer, pair, this.o.config.maxLength);
      if (typeof d === 'string') {
        this.unusable++;
        this.o.log?.(`pair ${pair.id} left out: ${d}`);
      }
      this.datumCache.set(pair.id, d);
    }
    return typeof d === 'string' ? undefined : d;
  }

  /** The reference: saved at step 0 by a new run, found in checkpoints.jsonl by a resumed one. */
  protected override async opened(signal?: AbortSignal): Promise<void> {
    const recorded = this.o.writer.readCheckpoints().find((r) => r.name === REFERENCE_CHECKPOINT && typeof r.sampler_path === 'string');
    if (recorded) this.referencePath = recorded.sampler_path;
    else if (this.step > 0 || this.o.resumeFrom) throw new Error(`${this.o.writer.dir}: checkpoints.jsonl has no "${REFERENCE_CHECKPOINT}" record (the step-0 weights the DPO loss compares against); the run cannot resume without it`);
    else {
      // no TTL: the reference is needed as long as the run can resume
      const r = await (await this.trainer!.saveWeightsForSampler(REFERENCE_CHECKPOINT, {}, signal)).result(signal);
      if (!r.path) throw new Error('save_weights_for_sampler returned no path for the reference');
      const rec: CheckpointRecord = { name: REFERENCE_CHECKPOINT, batch: 0, sampler_path: r.path, dpo_reference: true };
      this.o.writer.appendCheckpoint(rec);
      this.referencePath = r.path;
    }
    this.reference = await this.o.service.createSamplingClient({ modelPath: this.referencePath!, baseModel: this.o.config.model }, signal);
  }

  protected override startLine(): string {
    const c = this.o.config;
    return `${c.model}, ${this.o.train.length} pairs, batch ${c.batchSize} pairs, ${this.nBatches} batches per epoch, β ${c.beta}${c.nllWeight > 0 ? `, chosen NLL weight ${c.nllWeight}` : ''}, lr ${c.learningRate} (${c.lrSchedule})`;
  }

  protected override beginStretch(): void {
    this.tally = {};
  }

  protected override endOfStretch(io: LoopIo): void {
    if (this.unusable > 0) io.log(`${this.unusable} pairs had nothing to train (see above) and were left out`);
  }

  protected override extra(batch: number): Record<string, unknown> {
    return { epoch: Math.floor(batch / this.nBatches) };
  }

  protected override result(base: Omit<DpoRunResult, 'kind' | 'firstTestNll' | 'lastTestNll' | 'firstAccuracy' | 'lastAccuracy' | 'firstDpoLoss' | 'lastDpoLoss'>): DpoRunResult {
    return { kind: 'dpo', ...base, ...this.tally };
  }

  /** The reference's sequence log-probs of the pairs' sides, computed once per pair. */
  private async referenceSums(pairs: readonly ScoredPair[], signal: AbortSignal | undefined): Promise<number[]> {
    const ref = this.reference!;
    const side = async (d: SideDatum) => weightedSum(targetLogprobsFromPrompt(await ref.computeLogprobs(textInput(fullSequence(d)), signal), d.targetTokens.length), d.weights);
    await Promise.all(
      pairs
        .filter((p) => !this.refSums.has(p.pair.id))
        .map(async (p) => {
          const [c, r] = await Promise.all([side(p.datums.chosen), side(p.datums.rejected)]);
          this.refSums.set(p.pair.id, [c, r]);
        }),
    );
    return pairs.flatMap((p) => this.refSums.get(p.pair.id)!);
  }

  /** The validation pairs under the current weights (forward only): DPO metrics and the chosen completions' NLL. */
  private async validate(step: number, trainer: TrainingClient, io: LoopIo, gone: AbortSignal | undefined): Promise<{ metrics: Record<string, number>; margins: PairMarginRecord[] }> {
    const c = this.o.config;
    const pairs = this.validationPairs;
    io.emit({ type: 'phase', step, phase: 'eval', done: 0, total: pairs.length });
    const logprobs: Float64Array[] = [];
    for (let k = 0; k < pairs.length; k += c.batchSize) {
      const chunk = pairs.slice(k, k + c.batchSize);
      const data = chunk.flatMap((p) => [toWireDatum(p.datums.chosen), toWireDatum(p.datums.rejected)]);
      const out = await (await trainer.forward(data, 'cross_entropy', undefined, gone)).result(gone);
      logprobs.push(...logprobsOf(out, data));
      io.emit({ type: 'phase', step, phase: 'eval', done: Math.min(k + c.batchSize, pairs.length), total: pairs.length });
      io.checkCancel();
    }
    const refs = await this.referenceSums(pairs, gone);
    const out = dpoLoss(
      pairs.map((p, i) => ({
        chosenLogprobs: logprobs[2 * i]!,
        chosenWeights: p.datums.chosen.weights,
        rejectedLogprobs: logprobs[2 * i + 1]!,
        rejectedWeights: p.datums.rejected.weights,
        refChosen: refs[2 * i]!,
        refRejected: refs[2 * i + 1]!,
      })),
      c.beta,
      c.nllWeight,
    );
    let nll = 0;
    let tokens = 0;
    pairs.forEach((p, i) => {
      nll -= weightedSum(logprobs[2 * i]!, p.datums.chosen.weights);
      tokens += p.datums.chosen.weights.reduce((a, b) => a + b, 0);
    });
    const metrics: Record<string, number> = { [METRIC.testNll]: nll / tokens };
    for (const [k, v] of Object.entries(out.metrics)) metrics[`test/${k}`] = v;
    return { metrics, margins: pairs.map((p, i) => ({ pair: p.pair.id, split: 'validation', margin: out.margins[i]! })) };
  }

  protected override async step_(s: number, io: LoopIo, signal: AbortSignal): Promise<void> {
    const c = this.o.config;
    const trainer = this.trainer!;
    const endStep = this.endStep;
    const { emit, log, checkCancel } = io;
    const { gone, timer, t0, items, lr, metrics } = openSupervisedStep(s, endStep, this.o.train, c, signal);
    // the reference's log-probs are many concurrent requests, each listening to it
    if (gone) setMaxListeners(0, gone);
    const margins: PairMarginRecord[] = [];

    await validateWhenDue(
      s,
      { evalEvery: c.evalEvery, count: this.validationPairs.length, timer, io },
      () => this.validate(s, trainer, io, gone),
      (v) => {
        Object.assign(metrics, v.metrics);
        margins.push(...v.margins);
        this.tally.firstTestNll ??= v.metrics[METRIC.testNll];
        this.tally.lastTestNll = v.metrics[METRIC.testNll];
      },
    );

    const pairs = items.flatMap((pair) => {
      const d = this.datumsOf(pair);
      return d ? [{ pair, datums: d }] : [];
    });
    if (pairs.length === 0) throw new Error(`step ${s}: no pair of the batch has a token to train on (max_length ${c.maxLength ?? 'unset'} cuts them before the completion?)`);
    emit({ type: 'phase', step: s, phase: 'training' });
    const refs = await timer.time('reference_logprobs', () => this.referenceSums(pairs, gone));
    checkCancel();
    const data = pairs.flatMap((p) => [toWireDatum(p.datums.chosen), toWireDatum(p.datums.rejected)]);
    // From here the update is submitted: the step is finished and written even if cancelled.
    let batchMargins: number[] = [];
    const [fb, opt] = await timer.time('train_step', async () => {
      const fbOut = await trainer.forwardBackwardCustom(data, dpoCustomLoss(refs, c.beta, (m) => (batchMargins = m), c.nllWeight), gone);
      const optOut = await (await trainer.optimStep({ learning_rate: lr, ...COOKBOOK_ADAM }, gone)).result(gone);
      return [fbOut, optOut] as const;
    });
    this.sampler = undefined;
    for (const k of DPO_METRIC_KEYS) metrics[k] = fb.metrics[k]!;
    if (c.nllWeight > 0) metrics.loss = fb.loss;
    Object.assign(metrics, opt.metrics ?? {});
    metrics.num_tokens = pairs.reduce((n, p) => n + p.datums.chosen.modelInput.length + p.datums.rejected.modelInput.length, 0);
    metrics[METRIC.tokensTrained] = this.tokensTrainedAfter(s, metrics.num_tokens);
    pairs.forEach((p, i) => margins.push({ pair: p.pair.id, split: 'train', margin: batchMargins[i]! }));
    this.o.writer.writeIterationFile(s, PAIR_MARGINS_FILE, margins);
    this.tally.firstAccuracy ??= metrics.accuracy;
    this.tally.lastAccuracy = metrics.accuracy;
    this.tally.firstDpoLoss ??= metrics.dpo_loss;
    this.tally.lastDpoLoss = metrics.dpo_loss;

    await this.finishSupervisedStep(s, metrics, io, { timer, t0 }, { trainer, saveEvery: c.saveEvery, ttlSeconds: c.ttlSeconds, signal: gone });
    log(
      `step ${s}/${endStep}: dpo_loss ${metrics.dpo_loss!.toFixed(4)}, accuracy ${metrics.accuracy!.toFixed(3)}, margin ${metrics.margin!.toFixed(4)}${metrics['test/dpo_loss'] !== undefined ? `, test/accuracy ${metrics['test/accuracy']!.toFixed(3)}` : ''}, lr ${lr.toExponential(2)}, ${metrics[METRIC.timeTotal]!.toFixed(2)} s`,
    );
  }
}
