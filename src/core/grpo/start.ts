// The one entry point that starts (or resumes) a GRPO run; the CLI and the VS Code command both call
// it. Keep this signature stable:
//
//   startGrpoRun({
//     specFile?: string,              // a *.grpo.json file …
//     spec?: ResolvedGrpoSpec,        // … or a spec already parsed (paths absolute; with specFile,
//                                     //   the spec read from it, so it is not parsed again)
//     runsDir: string,                // the run directory is created here: <name>-YYYYMMDD-HHMMSS
//     connect: (spec) => Promise<ServiceClient>,  // opens the backend the spec names (the caller owns
//                                     //   engines/keys; the ServiceClient is closed when the run ends)
//     cacheDir: string,               // tokenizer files, Hugging Face dataset pages
//     python?: string,                // interpreter for Python reward files (default python3)
//     resumeDir?: string,             // an existing run directory to resume (spec from its config.json
//                                     //   unless specFile/spec is given)
//     signal?: AbortSignal,           // cancel: the run stops cleanly, status 'cancelled'
//     onEvent?: (e: RunEvent) => void,
//     log?: (line: string) => void,   // human-readable progress lines (no secrets)
//   }): Promise<GrpoRunResult>
//
// It rejects only for problems found before the run directory exists (invalid spec, dataset, reward
// file that does not load, renderer, connection); once the directory exists it always resolves, with
// status 'completed' | 'cancelled' | 'failed' and the error in words. Resuming a directory whose last
// state checkpoint is `final` resolves at once as completed.
import * as path from 'node:path';
import { loadPromptPool } from '../data/pool';
import { createRewardRunner } from '../reward';
import { createEnvRunner, type EnvRunner } from '../env/runner';
import { envRunnerOptions, episodeLimits } from '../env/spec';
import type { RewardRunner } from '../reward/types';
import { prepareInlineEvals, type InlineEvaluators } from '../evals/inline';
import { GRPO_INLINE_EVALS, GRPO_SPEC, isDistillation, parseGrpoSpecFile, specDatasets, type ResolvedGrpoSpec } from './spec';
import { checkSameTokenizer, resolveModelSource, samplerOf, scorerOf, type ResolvedModelSource, type SequenceScorer } from '../training/teachers';
import type { PromptPool } from '../data/types';
import type { RunWriter } from '../runs/runWriter';
import { logSkipped, resolveLearningRate, type PreparedRun, type RunStartOptions } from '../runs/startParts';
import { prepareRun, startRun, type KindStarter } from '../runs/prepareRun';
import type { ServiceClient } from '../tinker/client';
import type { NetworkOptions } from '../tinker/proxy';
import { GrpoLoopConfig, GrpoRun } from './loop';
import type { GrpoRunResult } from '../runs/runEvents';

export type StartGrpoRunOptions = RunStartOptions<ResolvedGrpoSpec>;

/** The loop's settings from a spec and the resolved learning rate. */
export function loopConfig(spec: ResolvedGrpoSpec, learningRate: number): GrpoLoopConfig {
  return {
    model: spec.model,
    loadCheckpointPath: spec.load_checkpoint_path,
    loraRank: spec.lora_rank,
    learningRate,
    groupsPerBatch: spec.groups_per_batch,
    groupSize: spec.group_size,
    maxTokens: spec.max_tokens,
    temperature: spec.temperature,
    iterations: spec.iterations,
    saveEvery: spec.save_every,
    evalEvery: spec.eval_every,
    lossFn: spec.loss_fn,
    lossFnConfig: spec.loss_fn_config,
    removeConstantRewardGroups: spec.remove_constant_reward_groups,
    ttlSeconds: spec.ttl_seconds,
    ...(spec.checkpoint_metadata ? { checkpointMetadata: spec.checkpoint_metadata } : {}),
    seed: spec.seed,
    samplingSeed: spec.sampling_seed,
    stop: spec.stop,
    ...(isDistillation(spec)
      ? { kl: { mode: 'teacher' as const, coef: spec.kl_penalty_coef ?? 1, discount: spec.kl_discount_factor } }
      : (spec.kl_penalty_coef ?? 0) > 0
        ? { kl: { mode: 'reference' as const, coef: spec.kl_penalty_coef!, discount: spec.kl_discount_factor } }
        : {}),
    ...(spec.auto_checkpoint
      ? {
          autoCheckpoint: {
            metric: spec.auto_checkpoint.metric,
            threshold: spec.auto_checkpoint.threshold,
            minIterations: spec.auto_checkpoint.min_iterations,
            smoothing: spec.auto_checkpoint.smoothing,
            prefix: spec.auto_checkpoint.name,
          },
        }
      : {}),
  };
}

/** The spec stored in a run's config.json (its spec keys; the resolved extras are left out). */
export const specFromConfig = GRPO_SPEC.fromConfig;

/** What a GRPO run carries from one part of the start sequence to the next. */
interface GrpoStartData {
  pools: PromptPool[];
  pool: PromptPool;
  env?: EnvRunner;
  reward?: RewardRunner;
  evals?: InlineEvaluators;
  models?: { teachers: ResolvedModelSource[]; reference?: ResolvedModelSource };
  teachers?: SequenceScorer[];
  reference?: SequenceScorer;
}

/** GRPO's parts of the start sequence (runs/prepareRun.ts): prompt pools, reward and environment workers, teachers. */
const GRPO_START: KindStarter<ResolvedGrpoSpec, GrpoRunResult, GrpoRun, GrpoStartData, { reward?: RewardRunner }> = {
  kind: 'grpo',
  starter: 'startGrpoRun',
  read: { file: parseGrpoSpecFile, config: specFromConfig, resumable: GRPO_SPEC.resumable },
  steps: (spec) => spec.iterations,
  learningRate: resolveLearningRate,
  async load({ spec, o, specDir, log }) {
    const pools: PromptPool[] = [];
    for (const d of specDatasets(spec)) {
      const p = await loadPromptPool(d.dataset, { specDir, seed: spec.seed, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}), ...(spec.reward ? {} : { groundTruthOptional: true }), ...(spec.env ? { environment: true } : {}) });
      logSkipped(p.skipped, log);
      pools.push(p);
    }
    const pool: PromptPool = pools.length === 1 ? pools[0]! : { train: pools.flatMap((p) => p.train), holdout: pools.flatMap((p) => p.holdout), skipped: pools.flatMap((p) => p.skipped) };
    return { data: { pools, pool }, sizes: `${pool.train.length} train problems, ${pool.holdout.length} holdout problems` };
  },
  async open(c, data) {
    const { spec, o, log } = c;
    let env: EnvRunner | undefined;
    let reward: RewardRunner | undefined;
    if (spec.env) {
      const started = await createEnvRunner(envRunnerOptions(spec.env, { python: o.python, environment: o.rewardEnvironment }));
      c.hold(() => started.close().catch(() => undefined));
      env = started;
      log(`environment: ${env.className} (${path.basename(env.file)})${env.hasGroupRewards ? ', with compute_group_rewards' : ''}`);
    }
    if (spec.reward) {
      const started = await createRewardRunner({ file: spec.reward.file, python: o.python, environment: o.rewardEnvironment, workers: spec.reward.workers, timeoutMs: spec.reward.timeout_ms });
      c.hold(() => started.close().catch(() => undefined));
      reward = started;
    }
    const evals = await prepareInlineEvals(spec.evals, { kind: GRPO_INLINE_EVALS, specDir: c.specDir, ...(reward ? { runReward: reward } : {}), runMaxTokens: spec.max_tokens, log }, o);
    c.hold(() => evals.close());
    return { ...data, ...(env ? { env } : {}), ...(reward ? { reward } : {}), evals };
  },
  async connected({ spec, o, specDir, resume, log }, service, data) {
    const models = await resolveSecondModels(spec, service, { specDir, runsDir: o.runsDir, cacheDir: o.cacheDir, network: o.network, stored: resume?.readConfig(), signal: o.signal });
    for (const t of models.teachers) log(`teacher: ${t.label} (${t.model})`);
    if (models.reference) log(`KL reference: ${models.reference.label} (${models.reference.model})`);
    const teachers: SequenceScorer[] = [];
    for (const t of models.teachers) teachers.push(scorerOf(await samplerOf(service, t, o.signal)));
    const reference = models.reference ? scorerOf(await samplerOf(service, models.reference, o.signal)) : undefined;
    return { ...data, models, teachers, ...(reference ? { reference } : {}) };
  },
  config: ({ models }) => ({
    ...(models?.teachers.length ? { teachers_resolved: models.teachers } : {}),
    ...(models?.reference ? { kl_reference_resolved: models.reference } : {}),
  }),
  run({ spec, renderer, learningRate, log }, d, { service, writer, resumeFrom }) {
    const datasets = specDatasets(spec);
    return new GrpoRun({
      service,
      config: loopConfig(spec, learningRate),
      renderer,
      pool: d.pool,
      ...(d.reward ? { reward: d.reward } : {}),
      ...(d.env && spec.env
        ? {
            env: d.env,
            envLimits: episodeLimits(spec.env),
          }
        : {}),
      ...(d.pools.length > 1 ? { sources: d.pools.map((p, i) => ({ train: p.train, groupsPerBatch: datasets[i]!.groups_per_batch })) } : {}),
      ...(d.teachers?.length ? { teachers: d.teachers } : {}),
      ...(d.reference ? { reference: d.reference } : {}),
      evals: d.evals!.list.filter((e) => e.kind === 'sampling'),
      writer,
      resumeFrom,
      log,
    });
  },
  held: (d) => (d.reward ? { reward: d.reward } : {}),
};

export function startGrpoRun(o: StartGrpoRunOptions): Promise<GrpoRunResult> {
  return startRun(GRPO_START, o);
}

/** A GRPO run ready to advance (its service client connected, its reward workers started), or the answer for a finished one. */
export type PreparedGrpoRun = PreparedRun<GrpoRunResult, GrpoRun, ResolvedGrpoSpec, { reward?: RewardRunner }>;

/**
 * Everything startGrpoRun does before the loop: the spec, renderer, prompt pool, reward runner, the
 * connection and the run directory (new, or `resume`). An agent session keeps what it returns for its
 * whole life and advances the run a few iterations per call.
 */
export function prepareGrpoRun(o: StartGrpoRunOptions, resume: RunWriter | undefined, writers: RunWriter[]): Promise<PreparedGrpoRun> {
  return prepareRun(GRPO_START, o, resume, writers);
}

/**
 * The run's teachers (one per dataset) and KL reference, resolved — or, on resume, as config.json
 * stored them, so "latest" keeps naming the run it named — and each teacher's tokenizer checked
 * against the student's. Runs before the run directory exists: a problem leaves nothing behind.
 */
export async function resolveSecondModels(
  spec: ResolvedGrpoSpec,
  service: ServiceClient,
  o: { specDir: string; runsDir: string; cacheDir: string; network?: NetworkOptions | undefined; stored?: unknown; signal?: AbortSignal | undefined },
): Promise<{ teachers: ResolvedModelSource[]; reference?: ResolvedModelSource }> {
  const stored = (typeof o.stored === 'object' && o.stored !== null ? o.stored : {}) as { teachers_resolved?: ResolvedModelSource[]; kl_reference_resolved?: ResolvedModelSource };
  const where = { specDir: o.specDir, runsDirs: [o.runsDir], service, ...(o.signal ? { signal: o.signal } : {}) };
  const net = { cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}) };
  const teachers: ResolvedModelSource[] = [];
  if (isDistillation(spec)) {
    const datasets = specDatasets(spec);
    for (const [i, d] of datasets.entries()) {
      const field = spec.dataset_configs ? `dataset_configs.${i}.teacher` : 'teacher';
      const t = stored.teachers_resolved?.[i] ?? (await resolveModelSource(d.teacher!, { field, ...where }));
      await checkSameTokenizer(spec.model, t, field, net);
      teachers.push(t);
    }
  }
  let reference: ResolvedModelSource | undefined;
  if (!isDistillation(spec) && (spec.kl_penalty_coef ?? 0) > 0 && spec.kl_reference) {
    reference = stored.kl_reference_resolved ?? (await resolveModelSource(spec.kl_reference, { field: 'kl_reference', ...where }));
    await checkSameTokenizer(spec.model, reference, 'kl_reference', net);
  }
  return { teachers, ...(reference ? { reference } : {}) };
}
