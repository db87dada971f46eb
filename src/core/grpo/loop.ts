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
// On-policy distillation (a teacher) and the KL penalty to a reference model (grpo-reference §1.7)
// score the sampled tokens with a second sampler after the rewards (klAdvantages.ts): the teacher's
// log-probs of every sample are kept in the samples file; the per-token KL advantage is added to
// the datums' advantages before the update.
// A `final` checkpoint follows the last iteration. Cancelling (the signal) stops between phases: a
// step whose update was not submitted is dropped whole; a step whose update was submitted is finished
// and written. Then a state checkpoint at the current step is saved so a resume repeats nothing.
// The loop is a run object (GrpoRun): it holds its training client, current sampler, step counter and
// auto-checkpoint state, and is advanced N iterations at a time — by runGrpo to the end in one go (the
// CLI, the editor's command), or a few per call by an agent session that keeps it between calls.
import { renderedPrompt } from '../data/problem';
import type { PromptPool, Problem } from '../data/types';
import type { Renderer } from '../render/types';
import type { RewardRunner } from '../reward/types';
import type { CheckpointRecord } from '../runs/runDirectory';
import { checkpointName, LoopIo, recordStep, RunCore, RunCoreParts, saveCheckpoint, serverGoneSignal } from '../runs/loopRuntime';
import type { SamplingClient } from '../tinker/client';
import type { LossFnType, SamplingParams } from '../tinker/types';
import { prefixKeys, trajectoryMetrics, trajectoryStats } from '../rollouts/metrics';
import { writeGroupRecords } from '../rollouts/records';
import { RolloutGroup, sampleGroup, ScoredRollout, scoreGroups, stopParam, zeroRewards } from '../rollouts/rollout';
import { alignToDatum, applyReferenceKlPenalty, applyTeacherKl, KL_METRIC, scoreSampled } from './klAdvantages';
import type { SequenceScorer } from '../training/teachers';
import { SpanTimer } from '../runs/spanTimer';
import { buildDatums, removeConstantRewardGroups, trainStep } from './trainStep';
import type { GrpoRunResult } from '../runs/runEvents';
import { computeAdvantages } from '../rollouts/advantages';
import { requestSeed, SeedPurpose } from '../rollouts/samplingSeed';
import { METRIC } from '../../protocol/metricKeys';
import { AutoCheckpointConfig, AutoCheckpointTracker } from './autoCheckpoint';
import { dueAt, runSamplingEvaluator, type SamplingEvaluator } from '../evals/inline';
import type { RLDatum } from '../rollouts/datums';
import type { EnvRunner } from '../env/runner';
import type { EpisodeLimits } from '../env/episode';
import { episodeRecords, runEpisodeGroups, type EpisodeGroup } from '../env/episodeGroups';
import { assembleTrainingData, episodeMetrics, removeConstantTrajectoryGroups, totalRewards, trajectoryAdvantages } from '../env/trajectory';

export { RECORDS_PER_SLICE } from '../rollouts/records';

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
  /** the spec's checkpoint_metadata: user_metadata of every checkpoint the run saves */
  checkpointMetadata?: Record<string, string>;
  /** LoRA initialisation seed */
  seed?: number;
  /** fixes every sampling request's seed (see samplingSeed.ts); absent: unseeded, as the cookbook */
  samplingSeed?: number;
  /** stop strings replacing the renderer's stop sequences */
  stop?: string[];
  /** save the best policy as it is reached (autoCheckpoint.ts) */
  autoCheckpoint?: AutoCheckpointConfig;
  /**
   * per-token KL advantages: 'teacher' (on-policy distillation, the reverse KL to the dataset's
   * teacher) or 'reference' (§1.7's penalty to a reference model, re-centred on the batch mean)
   */
  kl?: { mode: 'teacher' | 'reference'; coef: number; discount: number };
}

export interface RunGrpoOptions extends RunCoreParts {
  config: GrpoLoopConfig;
  renderer: Renderer;
  pool: PromptPool;
  /** absent: prompt-only distillation, every sample scores 0 */
  reward?: RewardRunner;
  /** the train problems of each dataset and its groups per iteration (multi-teacher); default: pool.train, config.groupsPerBatch */
  sources?: ReadonlyArray<{ train: readonly Problem[]; groupsPerBatch: number }>;
  /** kl.mode 'teacher': the teacher of each source (one per source) */
  teachers?: readonly SequenceScorer[];
  /** kl.mode 'reference': the reference model */
  reference?: SequenceScorer;
  /** the spec's inline evaluators (evals/inline.ts), run next to the holdout */
  evals?: readonly SamplingEvaluator[];
  /** an environment run (instead of `reward`): episodes of the env file, with these limits */
  env?: EnvRunner;
  envLimits?: Omit<EpisodeLimits, 'maxTokens'>;
}

/** Problems of batch i: the train pool read cyclically, P at a time (deterministic, so resume reuses it). */
export function batchProblems(train: readonly Problem[], i: number, groupsPerBatch: number): Problem[] {
  if (train.length === 0) throw new Error('the train split is empty');
  return Array.from({ length: groupsPerBatch }, (_, k) => train[(i * groupsPerBatch + k) % train.length]!);
}

/** The groups of batch i over several datasets: each dataset's problems read cyclically, its share at a time, dataset by dataset. */
export function batchSources(sources: ReadonlyArray<{ train: readonly Problem[]; groupsPerBatch: number }>, i: number): Array<{ problem: Problem; dataset: number }> {
  return sources.flatMap((s, d) => batchProblems(s.train, i, s.groupsPerBatch).map((problem) => ({ problem, dataset: d })));
}

/** A whole run in one call: create → advance to the end → `final` (or a resume point on cancel). */
export function runGrpo(o: RunGrpoOptions): Promise<GrpoRunResult> {
  return new GrpoRun(o).advance(undefined, { signal: o.signal, onEvent: o.onEvent, toEnd: true });
}

/** A GRPO run that lives between calls: advanced N iterations at a time on one training client. */
export class GrpoRun extends RunCore<GrpoRunResult> {
  readonly kind = 'grpo';
  readonly unit = 'iterations';
  private readonly promptCache = new Map<string, number[]>();
  private auto: AutoCheckpointTracker | undefined;
  private tally: { firstTestReward?: number; lastTestReward?: number } = {};

  constructor(private readonly o: RunGrpoOptions) {
    super(o, { ...o.config, rendererName: o.renderer.name }, o.config.iterations);
    const kl = o.config.kl;
    if (kl?.mode === 'teacher' && (o.teachers?.length ?? 0) !== (o.sources?.length ?? 1)) throw new Error(`${o.teachers?.length ?? 0} teachers for ${o.sources?.length ?? 1} datasets`);
    if (kl?.mode === 'reference' && !o.reference) throw new Error('the KL penalty needs a reference model');
    if (o.env && kl) throw new Error('an environment run takes no teacher or KL penalty yet');
    if (o.env && !o.envLimits) throw new Error('an environment run needs its limits (max_turns …)');
  }

  private get sources(): ReadonlyArray<{ train: readonly Problem[]; groupsPerBatch: number }> {
    return this.o.sources ?? [{ train: this.o.pool.train, groupsPerBatch: this.o.config.groupsPerBatch }];
  }

  private score(groups: readonly RolloutGroup[], signal: AbortSignal): Promise<RolloutGroup<ScoredRollout>[]> {
    return this.o.reward ? scoreGroups(groups, this.o.reward, signal) : Promise.resolve(zeroRewards(groups));
  }

  /** Each sample's teacher log-probs (distillation), attached to its rollout. */
  private async scoreWithTeachers(groups: readonly RolloutGroup<ScoredRollout>[], signal: AbortSignal): Promise<void> {
    const teachers = this.o.teachers!;
    await Promise.all(
      groups.flatMap((g) =>
        g.rollouts.map(async (r) => {
          if (r.tokens.length > 0) r.teacherLogprobs = await scoreSampled(teachers[g.dataset ?? 0]!, g.promptTokens, r.tokens, signal);
        }),
      ),
    );
  }

  get pool(): PromptPool {
    return this.o.pool;
  }

  protected override async opened(signal?: AbortSignal): Promise<void> {
    this.sampler = await this.trainer!.saveWeightsAndGetSamplingClient(signal);
    this.auto = this.o.config.autoCheckpoint ? new AutoCheckpointTracker(this.o.config.autoCheckpoint, this.o.writer.readCheckpoints()) : undefined;
  }

  protected override startLine(): string {
    const c = this.o.config;
    return `${c.model}, ${c.groupsPerBatch} groups × ${c.groupSize}, lr ${c.learningRate}`;
  }

  protected override beginStretch(): void {
    this.tally = {};
  }

  protected override result(base: Omit<GrpoRunResult, 'kind' | 'firstTestReward' | 'lastTestReward'>): GrpoRunResult {
    return { kind: 'grpo', ...base, ...(this.tally.firstTestReward !== undefined ? this.tally : {}) };
  }

  private promptOf(p: Problem): number[] {
    let t = this.promptCache.get(p.id);
    if (!t) this.promptCache.set(p.id, (t = renderedPrompt(this.o.renderer, p)));
    return t;
  }

  private params(): { train: SamplingParams; eval: SamplingParams } {
    const c = this.o.config;
    const stop = c.stop?.length ? c.stop : stopParam(this.o.renderer.stopSequences());
    return { train: { max_tokens: c.maxTokens, temperature: c.temperature, stop }, eval: { max_tokens: c.maxTokens, temperature: 1, stop } };
  }

  private seeded(params: SamplingParams, i: number, purpose: SeedPurpose, index: number): SamplingParams {
    const seed = this.o.config.samplingSeed;
    return seed === undefined ? params : { ...params, seed: requestSeed(seed, i, purpose, index) };
  }

  /** Samples the holdout (one sample per problem) and returns its test/ metrics; `tick` counts each sample done. */
  private async evaluate(i: number, sampler: SamplingClient, io: LoopIo, signal: AbortSignal, tick: (k: number) => void): Promise<Record<string, number>> {
    const problems = this.o.pool.holdout;
    const groups = await Promise.all(
      problems.map(async (p, j) => {
        const g = await sampleGroup(sampler, this.o.renderer, p, this.promptOf(p), 1, this.seeded(this.params().eval, i, 'eval', j), signal);
        tick(1);
        return g;
      }),
    );
    const scored = await this.score(groups, signal);
    this.reportRewardErrors(i, scored, 'eval', io);
    await this.writeRecords(i, 'eval/test', scored, computeAdvantages(scored.map((g) => g.rollouts.map((r) => r.reward))));
    return prefixKeys(trajectoryMetrics(trajectoryStats(scored)), 'test');
  }

  private limits(): EpisodeLimits {
    return { ...this.o.envLimits!, maxTokens: this.o.config.maxTokens };
  }

  /** Episode groups' samples (with their transcripts) and rollout summaries of a split. */
  private async writeEpisodeRecords(i: number, split: { name: string; prefix: string }, groups: readonly EpisodeGroup[]): Promise<void> {
    const totals = groups.map(totalRewards);
    const advantages = trajectoryAdvantages(groups);
    const w = this.o.writer;
    await w.writeIterationFileInSlices(i, `${split.prefix}_rollout_summaries.jsonl`, groups.length, (a, b) =>
      groups.slice(a, b).flatMap((g, p) =>
        g.trajectories.map((t, k) => ({
          schema_version: 1 as const,
          split: split.name,
          iteration: i,
          group_idx: a + p,
          traj_idx: k,
          tags: ['env'],
          sampling_client_step: i,
          total_reward: totals[a + p]![k]!,
          final_reward: g.finalRewards[k]!,
          trajectory_metrics: g.groupMetrics[k]!,
          steps: t.transitions.map((tr, j) => ({ step_idx: j, ob_len: tr.ob.length, ac_len: tr.acTokens.length, reward: tr.reward, episode_done: tr.episodeDone, metrics: tr.metrics, logs: Object.fromEntries(Object.entries(tr.logs ?? {}).map(([key, v]) => [key, String(v)])) })),
          final_ob_len: 0,
        })),
      ),
      4,
    );
    await w.writeIterationFileInSlices(i, `${split.prefix}_samples.jsonl`, groups.length, (a, b) => episodeRecords(this.o.renderer, groups.slice(a, b), totals.slice(a, b), advantages.slice(a, b), a), 4);
  }

  private reportEnvErrors(i: number, groups: readonly EpisodeGroup[], what: string, io: LoopIo): void {
    const failed = groups.flatMap((g) => [...g.episodes.filter((e) => e.error).map((e) => ({ g, e: e.error! })), ...(g.groupError ? [{ g, e: { ...g.groupError, where: 'compute_group_rewards' } }] : [])]);
    if (failed.length === 0) return;
    const first = failed[0]!;
    const where = first.e.line ? ` (line ${first.e.line})` : '';
    const message = `${failed.length} of ${groups.reduce((n, g) => n + g.episodes.length, 0)} ${what} episodes failed in the environment and scored 0; first (${first.g.problem.id}, ${first.e.where}): ${first.e.kind}${where}: ${first.e.message}`;
    io.emit({ type: 'warning', step: i, message });
    io.log(`${message}${first.e.traceback ? `\n${first.e.traceback}` : ''}`);
  }

  /** The holdout as episodes (one per problem): test/env/all/… metrics. */
  private async evaluateEpisodes(i: number, sampler: SamplingClient, io: LoopIo, signal: AbortSignal, tick: (k: number) => void): Promise<Record<string, number>> {
    const groups = await runEpisodeGroups(this.o.env!, this.o.pool.holdout, 1, sampler, this.o.renderer, (j) => this.seeded(this.params().eval, i, 'eval', j), this.limits(), signal, () => tick(1));
    this.reportEnvErrors(i, groups, 'eval', io);
    await this.writeEpisodeRecords(i, { name: 'eval/test', prefix: 'eval_test' }, groups);
    return prefixKeys(episodeMetrics(groups), 'test');
  }

  /** An environment run's batch: G episodes per problem, group rewards, records, metrics, datums. */
  private async episodeBatch(i: number, problems: readonly Problem[], io: LoopIo, signal: AbortSignal, timer: SpanTimer, metrics: Record<string, number>): Promise<RLDatum[]> {
    const c = this.o.config;
    const total = problems.length * c.groupSize;
    let done = 0;
    io.emit({ type: 'phase', step: i, phase: 'sampling', done: 0, total });
    const current = this.sampler!;
    const groups = await timer.time('sampling', () =>
      runEpisodeGroups(this.o.env!, problems, c.groupSize, current, this.o.renderer, (k, j) => this.seeded(this.params().train, i, 'train', k * c.groupSize + j), this.limits(), signal, () => io.emit({ type: 'phase', step: i, phase: 'sampling', done: ++done, total })),
    );
    io.checkCancel();
    this.reportEnvErrors(i, groups, 'train', io);
    await timer.time('records', () => this.writeEpisodeRecords(i, { name: 'train', prefix: 'train' }, groups));
    const kept = c.removeConstantRewardGroups ? removeConstantTrajectoryGroups(groups) : groups;
    if (kept.length < groups.length) io.log(`step ${i}: ${groups.length - kept.length} constant-reward groups removed`);
    Object.assign(metrics, episodeMetrics(kept));
    return assembleTrainingData(kept, trajectoryAdvantages(kept)).datums;
  }

  /** Rollout summaries and every sample of a split, a few groups at a time so the event loop stays free. */
  private async writeRecords(i: number, split: 'train' | 'eval/test', groups: readonly RolloutGroup<ScoredRollout>[], advantages: readonly (readonly number[])[]): Promise<void> {
    await writeGroupRecords(this.o.writer, this.o.renderer, i, { name: split, prefix: split === 'train' ? 'train' : 'eval_test' }, groups, advantages);
  }

  private reportRewardErrors(i: number, groups: readonly RolloutGroup<ScoredRollout>[], what: string, io: LoopIo): void {
    const failed = groups.flatMap((g) => g.rollouts.filter((r) => r.rewardError).map((r) => ({ g, e: r.rewardError! })));
    if (failed.length === 0) return;
    const first = failed[0]!;
    const where = first.e.line ? ` (line ${first.e.line})` : '';
    const message = `${failed.length} of ${groups.reduce((n, g) => n + g.rollouts.length, 0)} ${what} rewards failed and scored 0; first (${first.g.problem.id}): ${first.e.kind}${where}: ${first.e.message}`;
    io.emit({ type: 'warning', step: i, message });
    io.log(`${message}${first.e.traceback ? `\n${first.e.traceback}` : ''}`);
  }

  /** One iteration i (the phases listed at the top of this file); returns once its metrics are written. */
  protected override async step_(i: number, io: LoopIo, signal: AbortSignal): Promise<void> {
    const c = this.o.config;
    const trainer = this.trainer!;
    const gone = serverGoneSignal(signal);
    const { checkCancel, emit, log } = io;
    const timer = new SpanTimer();
    const t0 = performance.now();
    const metrics: Record<string, number> = { 'progress/batch': i, [METRIC.lr]: c.learningRate, 'progress/done_frac': (i + 1) / this.endStep };

    // the holdout and the inline evaluators due at i run in parallel, with the sampler of the weights after i updates
    const holdoutDue = c.evalEvery > 0 && i % c.evalEvery === 0 && this.o.pool.holdout.length > 0 && (this.o.reward !== undefined || this.o.env !== undefined);
    const inlineDue = dueAt(this.o.evals ?? [], i);
    if (holdoutDue || inlineDue.length > 0) {
      const sampler = this.sampler!;
      const total = (holdoutDue ? this.o.pool.holdout.length : 0) + inlineDue.reduce((n, e) => n + e.problems.length * e.n, 0);
      let done = 0;
      const tick = (k: number) => emit({ type: 'phase', step: i, phase: 'eval', done: (done += k), total });
      emit({ type: 'phase', step: i, phase: 'eval', done, total });
      const [test, inline] = await timer.time('run_evaluations_parallel', () =>
        Promise.all([
          holdoutDue ? (this.o.env ? this.evaluateEpisodes(i, sampler, io, signal, tick) : this.evaluate(i, sampler, io, signal, tick)) : undefined,
          Promise.all(
            inlineDue.map(async (e) => {
              let reported = 0;
              const onProgress = (d: number) => {
                tick(d - reported);
                reported = d;
              };
              const r = await runSamplingEvaluator(e, { step: i, sampler, renderer: this.o.renderer, samplingSeed: c.samplingSeed, stop: c.stop, writer: this.o.writer, signal, onProgress });
              this.reportRewardErrors(i, r.groups, `evaluator ${e.name}`, io);
              return r.metrics;
            }),
          ),
        ]),
      );
      if (test) {
        Object.assign(metrics, test);
        const r = test[METRIC.testReward];
        if (r !== undefined) {
          this.tally.firstTestReward ??= r;
          this.tally.lastTestReward = r;
        }
      }
      for (const m of inline) Object.assign(metrics, m);
      checkCancel();
    }

    const problems = batchSources(this.sources, i);
    let datums: RLDatum[];
    if (this.o.env) {
      datums = await this.episodeBatch(i, problems.map((p) => p.problem), io, signal, timer, metrics);
    } else {
      const total = problems.length * c.groupSize;
      let sampled = 0;
      emit({ type: 'phase', step: i, phase: 'sampling', done: 0, total });
      const current = this.sampler!;
      const groups = await timer.time('sampling', () =>
        Promise.all(
          problems.map(async ({ problem: p, dataset }, k) => {
            const g = await sampleGroup(current, this.o.renderer, p, this.promptOf(p), c.groupSize, this.seeded(this.params().train, i, 'train', k), signal);
            sampled += g.rollouts.length;
            emit({ type: 'phase', step: i, phase: 'sampling', done: sampled, total });
            return this.o.sources ? { ...g, dataset } : g;
          }),
        ),
      );
      checkCancel();
      emit({ type: 'phase', step: i, phase: 'rewards', done: 0, total });
      const scored = await timer.time('rewards', () => this.score(groups, signal));
      emit({ type: 'phase', step: i, phase: 'rewards', done: total, total });
      this.reportRewardErrors(i, scored, 'train', io);
      checkCancel();
      if (c.kl?.mode === 'teacher') {
        emit({ type: 'phase', step: i, phase: 'teacher', done: 0, total });
        await timer.time('compute_teacher_logprobs', () => this.scoreWithTeachers(scored, signal));
        emit({ type: 'phase', step: i, phase: 'teacher', done: total, total });
        checkCancel();
      }

      // rollout summaries and samples of every group, before constant-group removal (as the cookbook)
      const allAdvantages = computeAdvantages(scored.map((g) => g.rollouts.map((r) => r.reward)));
      await timer.time('records', () => this.writeRecords(i, 'train', scored, allAdvantages));

      const kept = c.removeConstantRewardGroups ? removeConstantRewardGroups(scored) : scored;
      if (kept.length < scored.length) log(`step ${i}: ${scored.length - kept.length} constant-reward groups removed`);
      Object.assign(metrics, trajectoryMetrics(trajectoryStats(kept)));
      const built = buildDatums(kept);
      const origin = built.origin;
      datums = built.datums;
      if (c.kl?.mode === 'teacher') {
        const at = origin.map(({ group, traj }) => ({ g: kept[group]!, r: kept[group]!.rollouts[traj]! }));
        const teacher = at.map(({ g, r }) => alignToDatum(g.promptTokens.length, r.teacherLogprobs!));
        Object.assign(metrics, applyTeacherKl(datums, teacher, at.map(({ g }) => g.dataset ?? 0), c.kl.coef, c.kl.discount));
      } else if (c.kl?.mode === 'reference' && c.kl.coef > 0) {
        const reference = this.o.reference!;
        const ref = await timer.time('compute_kl_penalty', () =>
          Promise.all(origin.map(async ({ group, traj }) => alignToDatum(kept[group]!.promptTokens.length, await scoreSampled(reference, kept[group]!.promptTokens, kept[group]!.rollouts[traj]!.tokens, signal)))),
        );
        checkCancel();
        Object.assign(metrics, applyReferenceKlPenalty(datums, ref, c.kl.coef, c.kl.discount));
      }
    }

    // The rewards of step i were earned by the weights after i updates: a new best is saved now,
    // before this step's update changes them.
    let autoRecord: CheckpointRecord | undefined;
    const best = this.auto?.observe(i, { train: metrics[METRIC.reward], holdout: metrics[METRIC.testReward] });
    if (best) {
      emit({ type: 'phase', step: i, phase: 'checkpoint' });
      autoRecord = await timer.time('save_checkpoint', () => saveCheckpoint(trainer, best.name, i, 'both', { extra: best.extra }));
      log(`step ${i}: new best ${c.autoCheckpoint!.metric} reward ${fmt(best.value)}: saved checkpoint ${best.name}`);
    }

    // From here the update is submitted: the step is finished and written even if cancelled.
    emit({ type: 'phase', step: i, phase: 'training' });
    Object.assign(metrics, await timer.time('train_step', () => trainStep(trainer, datums, { lossFn: c.lossFn, lossFnConfig: c.lossFnConfig, learningRate: c.learningRate, signal: gone }, timer)));
    metrics[METRIC.tokensTrained] = this.tokensTrainedAfter(i, datums.reduce((n, d) => n + d.modelInput.length, 0));

    const s = i + 1;
    let record: CheckpointRecord | undefined;
    emit({ type: 'phase', step: i, phase: 'checkpoint' });
    this.sampler = await timer.time('save_checkpoint_and_get_sampling_client', async () => {
      if (c.saveEvery > 0 && s % c.saveEvery === 0) {
        record = await timer.time('save_checkpoint', () => saveCheckpoint(trainer, checkpointName(s), s, 'both', { ttlSeconds: c.ttlSeconds, signal: gone }));
        return this.o.service.createSamplingClient({ modelPath: record.sampler_path! });
      }
      return trainer.saveWeightsAndGetSamplingClient(gone);
    });

    recordStep(this.o.writer, io, i, metrics, { timer, t0 }, [autoRecord, record], this.cost);
    this.stepDone(i, record);
    log(`step ${i}/${this.endStep}: reward ${fmt(metrics[METRIC.reward])}, frac_mixed ${fmt(metrics[METRIC.fracMixed])}, truncated ${fmt(metrics[METRIC.fracTruncated])}, kl_v1 ${exp(metrics[METRIC.klV1])}, entropy ${fmt(metrics[METRIC.entropy])}${metrics[KL_METRIC.teacher] !== undefined ? `, teacher_kl ${fmt(metrics[KL_METRIC.teacher])}` : ''}${metrics[KL_METRIC.policyBase] !== undefined ? `, kl_policy_base ${fmt(metrics[KL_METRIC.policyBase])}` : ''}${metrics[METRIC.testReward] !== undefined ? `, test reward ${fmt(metrics[METRIC.testReward])}` : ''}, ${fmt(metrics[METRIC.timeTotal])} s`);
  }
}

function exp(v: number | undefined): string {
  return v === undefined ? '-' : v.toExponential(2);
}

function fmt(v: number | undefined): string {
  return v === undefined ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(3);
}
