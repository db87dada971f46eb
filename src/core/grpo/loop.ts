// The GRPO loop (grpo-reference §1.2), synchronous and on-policy. Iteration i:
//   1. metrics progress/batch, optim/lr, progress/done_frac;
//   2. holdout evaluation first when eval_every > 0 and i % eval_every == 0 (group size 1, temperature
//      1.0, `test/` metrics) with the current sampler — the weights after i updates;
//   3. all groups sampled concurrently, one request per group with num_samples = group_size (the
//      cookbook's rl/train.py sends G requests of one sample: same distribution, fewer round trips);
//   4. completions parsed by the renderer, scored by the reward runner (a reward error scores 0 and is
//      reported, never fatal); rollout summaries and every sample written;
//   5. constant-reward groups kept with zero advantage unless remove_constant_reward_groups;
//   6. datums, then forward_backward + optim_step submitted back to back; KL/entropy metrics;
//   7. a fresh sampler: from the checkpoint saved at s = i+1 when s % save_every == 0, else an
//      ephemeral snapshot; 8. one metrics.jsonl line, then the checkpoint record.
// A `final` checkpoint follows the last iteration. Cancelling (the signal) stops between phases: a
// step whose update was not submitted is dropped whole; a step whose update was submitted is finished
// and written. Then a state checkpoint at the current step is saved so a resume repeats nothing.
import type { PromptPool, Problem } from '../data/types';
import type { Renderer } from '../render/types';
import type { RewardRunner } from '../reward/types';
import type { CheckpointRecord } from '../runs/runDirectory';
import type { RunWriter } from '../runs/runWriter';
import { checkpointName, endAfterThrow, endStretch, loopIo, openTrainingClient, recordStep, saveCheckpoint, serverGoneSignal, withInnerSignal } from '../runs/loopRuntime';
import type { SamplingClient, ServiceClient, TrainingClient } from '../tinker/client';
import type { LossFnType, SamplingParams } from '../tinker/types';
import { prefixKeys, trajectoryMetrics, trajectoryStats } from './metrics';
import { rolloutSummaries, sampleRecords } from './records';
import { RolloutGroup, sampleGroup, ScoredRollout, scoreGroups, stopParam } from './rollout';
import { SpanTimer } from './spanTimer';
import { buildDatums, removeConstantRewardGroups, trainStep } from './trainStep';
import type { GrpoEvent, GrpoRunResult, GrpoRunStatus } from './types';
import { computeAdvantages } from './advantages';
import { requestSeed, SeedPurpose } from './samplingSeed';
import { METRIC } from '../../protocol/metricKeys';
import { AutoCheckpointConfig, AutoCheckpointTracker } from './autoCheckpoint';

/** samples serialised per slice of the records phase (a few ms each at 256 tokens on an idle core) */
export const RECORDS_PER_SLICE = 32;

/** The resolved settings of a run (the spec after defaults: learning rate, renderer, …). */
export interface GrpoLoopConfig {
  model: string;
  /** a tinker:// state path to start from (weights only, fresh optimizer) */
  loadCheckpointPath?: string;
  loraRank: number;
  learningRate: number;
  groupsPerBatch: number;
  groupSize: number;
  maxTokens: number;
  temperature: number;
  iterations: number;
  saveEvery: number;
  evalEvery: number;
  lossFn: LossFnType;
  lossFnConfig?: Record<string, number>;
  removeConstantRewardGroups: boolean;
  /** TTL of periodic checkpoints (the final one has none) */
  ttlSeconds?: number;
  /** LoRA initialisation seed */
  seed?: number;
  /** fixes every sampling request's seed (see samplingSeed.ts); absent: unseeded, as the cookbook */
  samplingSeed?: number;
  /** stop strings replacing the renderer's stop sequences */
  stop?: string[];
  /** save the best policy as it is reached (autoCheckpoint.ts) */
  autoCheckpoint?: AutoCheckpointConfig;
}

export interface RunGrpoOptions {
  service: ServiceClient;
  config: GrpoLoopConfig;
  renderer: Renderer;
  pool: PromptPool;
  reward: RewardRunner;
  writer: RunWriter;
  /** the checkpoint to resume from (the last record with a state_path) */
  resumeFrom?: CheckpointRecord;
  /**
   * Run at most this many iterations in this call, then pause: a state + sampler checkpoint at the
   * step reached (no `final`), status 'paused', so a later call resumes exactly there. Agents train
   * a few iterations at a time this way.
   */
  stopAfter?: number;
  signal?: AbortSignal;
  onEvent?: (e: GrpoEvent) => void;
  log?: (line: string) => void;
}

/** Problems of batch i: the train pool read cyclically, P at a time (deterministic, so resume reuses it). */
export function batchProblems(train: readonly Problem[], i: number, groupsPerBatch: number): Problem[] {
  if (train.length === 0) throw new Error('the train split is empty');
  return Array.from({ length: groupsPerBatch }, (_, k) => train[(i * groupsPerBatch + k) % train.length]!);
}

export function runGrpo(o: RunGrpoOptions): Promise<GrpoRunResult> {
  return withInnerSignal(o.signal, (signal) => runLoop({ ...o, signal }));
}

async function runLoop(o: RunGrpoOptions): Promise<GrpoRunResult> {
  const c = o.config;
  const io = loopIo(o);
  const { log, emit, checkCancel } = io;
  const signal = o.signal;
  const gone = serverGoneSignal(signal);
  const startStep = o.resumeFrom?.batch ?? 0;
  const endStep = c.iterations;
  const stopStep = o.stopAfter !== undefined ? Math.min(endStep, startStep + Math.max(1, o.stopAfter)) : endStep;
  const promptCache = new Map<string, number[]>();
  const promptOf = (p: Problem) => {
    let t = promptCache.get(p.id);
    if (!t) promptCache.set(p.id, (t = o.renderer.buildGenerationPrompt(p.messages)));
    return t;
  };
  const stop = c.stop?.length ? c.stop : stopParam(o.renderer.stopSequences());
  const trainParams: SamplingParams = { max_tokens: c.maxTokens, temperature: c.temperature, stop };
  const evalParams: SamplingParams = { max_tokens: c.maxTokens, temperature: 1, stop };
  const seeded = (params: SamplingParams, i: number, purpose: SeedPurpose, index: number): SamplingParams =>
    c.samplingSeed === undefined ? params : { ...params, seed: requestSeed(c.samplingSeed, i, purpose, index) };

  let status: GrpoRunStatus = 'completed';
  let error: string | undefined;
  let iterationsRun = 0;
  let lastStep = startStep - 1;
  let firstTestReward: number | undefined;
  let lastTestReward: number | undefined;
  let lastSavedBatch = startStep;
  let tc: TrainingClient | undefined;

  emit({ type: 'started', runDir: o.writer.dir, runName: o.writer.name, model: c.model, startStep, endStep, resumed: o.resumeFrom !== undefined });
  log(`${o.resumeFrom ? `resuming at step ${startStep} from ${o.resumeFrom.state_path}` : 'starting'}: ${c.model}, ${c.groupsPerBatch} groups × ${c.groupSize}, lr ${c.learningRate}, steps ${startStep}..${endStep - 1}`);

  /** Samples the holdout (one sample per problem) and returns its test/ metrics. */
  const evaluate = async (i: number, sampler: SamplingClient): Promise<Record<string, number>> => {
    const problems = o.pool.holdout;
    let done = 0;
    emit({ type: 'phase', step: i, phase: 'eval', done, total: problems.length });
    const groups = await Promise.all(
      problems.map(async (p, j) => {
        const g = await sampleGroup(sampler, o.renderer, p, promptOf(p), 1, seeded(evalParams, i, 'eval', j), signal);
        emit({ type: 'phase', step: i, phase: 'eval', done: ++done, total: problems.length });
        return g;
      }),
    );
    const scored = await scoreGroups(groups, o.reward, signal);
    reportRewardErrors(i, scored, 'eval');
    await writeRecords(i, 'eval/test', scored, computeAdvantages(scored.map((g) => g.rollouts.map((r) => r.reward))));
    return prefixKeys(trajectoryMetrics(trajectoryStats(scored)), 'test');
  };

  /** Rollout summaries and every sample of a split, a few groups at a time so the event loop stays free. */
  const writeRecords = async (i: number, split: 'train' | 'eval/test', groups: readonly RolloutGroup<ScoredRollout>[], advantages: readonly (readonly number[])[]) => {
    const prefix = split === 'train' ? 'train' : 'eval_test';
    const perSlice = Math.max(1, Math.floor(RECORDS_PER_SLICE / Math.max(1, groups[0]?.rollouts.length ?? 1)));
    await o.writer.writeIterationFileInSlices(i, `${prefix}_rollout_summaries.jsonl`, groups.length, (a, b) => rolloutSummaries(split, i, groups.slice(a, b), a), perSlice);
    await o.writer.writeIterationFileInSlices(i, `${prefix}_samples.jsonl`, groups.length, (a, b) => sampleRecords(o.renderer, groups.slice(a, b), advantages.slice(a, b), a), perSlice);
  };

  const reportRewardErrors = (i: number, groups: readonly RolloutGroup<ScoredRollout>[], what: string) => {
    const failed = groups.flatMap((g) => g.rollouts.filter((r) => r.rewardError).map((r) => ({ g, e: r.rewardError! })));
    if (failed.length === 0) return;
    const first = failed[0]!;
    const where = first.e.line ? ` (line ${first.e.line})` : '';
    const message = `${failed.length} of ${groups.reduce((n, g) => n + g.rollouts.length, 0)} ${what} rewards failed and scored 0; first (${first.g.problem.id}): ${first.e.kind}${where}: ${first.e.message}`;
    emit({ type: 'warning', step: i, message });
    log(`${message}${first.e.traceback ? `\n${first.e.traceback}` : ''}`);
  };

  try {
    if (startStep >= endStep) {
      log(`nothing to run: the run is at step ${startStep} of ${endStep}`);
      emit({ type: 'finished', runDir: o.writer.dir, status, lastStep });
      return { runDir: o.writer.dir, status, iterationsRun };
    }
    const userMetadata = { renderer_name: o.renderer.name };
    tc = await openTrainingClient(o.service, c, o.resumeFrom, userMetadata, signal);
    const trainer = tc;
    let sampler = await trainer.saveWeightsAndGetSamplingClient(signal);
    const auto = c.autoCheckpoint ? new AutoCheckpointTracker(c.autoCheckpoint, o.writer.readCheckpoints()) : undefined;

    for (let i = startStep; i < stopStep; i++) {
      checkCancel();
      const timer = new SpanTimer();
      const t0 = performance.now();
      const metrics: Record<string, number> = { 'progress/batch': i, [METRIC.lr]: c.learningRate, 'progress/done_frac': (i + 1) / endStep };

      if (c.evalEvery > 0 && i % c.evalEvery === 0 && o.pool.holdout.length > 0) {
        const test = await timer.time('run_evaluations_parallel', () => evaluate(i, sampler));
        Object.assign(metrics, test);
        const r = test[METRIC.testReward];
        if (r !== undefined) {
          firstTestReward ??= r;
          lastTestReward = r;
        }
        checkCancel();
      }

      const problems = batchProblems(o.pool.train, i, c.groupsPerBatch);
      const total = problems.length * c.groupSize;
      let sampled = 0;
      emit({ type: 'phase', step: i, phase: 'sampling', done: 0, total });
      const current = sampler;
      const groups = await timer.time('sampling', () =>
        Promise.all(
          problems.map(async (p, k) => {
            const g = await sampleGroup(current, o.renderer, p, promptOf(p), c.groupSize, seeded(trainParams, i, 'train', k), signal);
            sampled += g.rollouts.length;
            emit({ type: 'phase', step: i, phase: 'sampling', done: sampled, total });
            return g;
          }),
        ),
      );
      checkCancel();
      emit({ type: 'phase', step: i, phase: 'rewards', done: 0, total });
      const scored = await timer.time('rewards', () => scoreGroups(groups, o.reward, signal));
      emit({ type: 'phase', step: i, phase: 'rewards', done: total, total });
      reportRewardErrors(i, scored, 'train');
      checkCancel();

      // rollout summaries and samples of every group, before constant-group removal (as the cookbook)
      const allAdvantages = computeAdvantages(scored.map((g) => g.rollouts.map((r) => r.reward)));
      await timer.time('records', () => writeRecords(i, 'train', scored, allAdvantages));

      const kept = c.removeConstantRewardGroups ? removeConstantRewardGroups(scored) : scored;
      if (kept.length < scored.length) log(`step ${i}: ${scored.length - kept.length} constant-reward groups removed`);
      Object.assign(metrics, trajectoryMetrics(trajectoryStats(kept)));
      const { datums } = buildDatums(kept);

      // The rewards of step i were earned by the weights after i updates: a new best is saved now,
      // before this step's update changes them.
      let autoRecord: CheckpointRecord | undefined;
      const best = auto?.observe(i, { train: metrics[METRIC.reward], holdout: metrics[METRIC.testReward] });
      if (best) {
        emit({ type: 'phase', step: i, phase: 'checkpoint' });
        autoRecord = await timer.time('save_checkpoint', () => saveCheckpoint(trainer, best.name, i, 'both', { extra: best.extra }));
        log(`step ${i}: new best ${c.autoCheckpoint!.metric} reward ${fmt(best.value)}: saved checkpoint ${best.name}`);
      }

      // From here the update is submitted: the step is finished and written even if cancelled.
      emit({ type: 'phase', step: i, phase: 'training' });
      Object.assign(metrics, await timer.time('train_step', () => trainStep(trainer, datums, { lossFn: c.lossFn, lossFnConfig: c.lossFnConfig, learningRate: c.learningRate, signal: gone }, timer)));

      const s = i + 1;
      let record: CheckpointRecord | undefined;
      emit({ type: 'phase', step: i, phase: 'checkpoint' });
      sampler = await timer.time('save_checkpoint_and_get_sampling_client', async () => {
        if (c.saveEvery > 0 && s % c.saveEvery === 0) {
          record = await timer.time('save_checkpoint', () => saveCheckpoint(trainer, checkpointName(s), s, 'both', { ttlSeconds: c.ttlSeconds, signal: gone }));
          return o.service.createSamplingClient({ modelPath: record.sampler_path! });
        }
        return trainer.saveWeightsAndGetSamplingClient(gone);
      });

      recordStep(o.writer, io, i, metrics, { timer, t0 }, [autoRecord, record]);
      if (record) lastSavedBatch = s;
      iterationsRun++;
      lastStep = i;
      log(`step ${i}/${endStep}: reward ${fmt(metrics[METRIC.reward])}, frac_mixed ${fmt(metrics[METRIC.fracMixed])}, truncated ${fmt(metrics[METRIC.fracTruncated])}, kl_v1 ${exp(metrics[METRIC.klV1])}, entropy ${fmt(metrics[METRIC.entropy])}${metrics[METRIC.testReward] !== undefined ? `, test reward ${fmt(metrics[METRIC.testReward])}` : ''}, ${fmt(metrics[METRIC.timeTotal])} s`);
    }

    status = await endStretch({ trainer, writer: o.writer, io, stopStep, endStep, lastSavedBatch, ttlSeconds: c.ttlSeconds, unit: 'iterations', done: iterationsRun });
  } catch (err) {
    ({ status, error } = await endAfterThrow(err, signal, { trainer: tc, writer: o.writer, io, batch: lastStep + 1, lastSavedBatch, ttlSeconds: c.ttlSeconds, unit: 'iterations', done: iterationsRun }));
  }
  emit({ type: 'finished', runDir: o.writer.dir, status, lastStep });
  return { runDir: o.writer.dir, status, iterationsRun, ...(error ? { error } : {}), ...(firstTestReward !== undefined ? { firstTestReward, lastTestReward } : {}) };
}

function exp(v: number | undefined): string {
  return v === undefined ? '-' : v.toExponential(2);
}

function fmt(v: number | undefined): string {
  return v === undefined ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(3);
}
