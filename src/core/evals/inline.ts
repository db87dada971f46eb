// Inline evaluators at run time (the spec side is inlineSpec.ts). A GRPO or SFT run prepares them
// once (problems or chats loaded, graders started: a GRPO evaluator without a grader shares the run's
// reward runner), then at each step i with i % every == 0, before the update, a sampling evaluator
// samples its problems n times with the run's sampler of that step (the rollout code the holdout
// uses: one request of n samples per problem, graded by the SAME reward runner as training), and
// reports the holdout's trajectory metrics under test/<name>/env/all/… plus the unbiased pass@1 …
// pass@n of the eval core (stats.ts). An NLL evaluator's chats are scored by the SFT loop (forward only).
import { renderedPrompt } from '../data/problem';
import type { Problem } from '../data/types';
import { prefixKeys, trajectoryMetrics, trajectoryStats } from '../rollouts/metrics';
import { computeAdvantages } from '../rollouts/advantages';
import { writeGroupRecords } from '../rollouts/records';
import { sampleGroup, scoreGroups, stopParam, type RolloutGroup, type ScoredRollout } from '../rollouts/rollout';
import { fmix32, requestSeed } from '../rollouts/samplingSeed';
import type { Renderer } from '../render/types';
import { createRewardRunner } from '../reward';
import type { RewardRunner } from '../reward/types';
import type { RunWriter } from '../runs/runWriter';
import { loadChats, type Chat } from '../training/chats';
import type { SamplingClient } from '../tinker/client';
import type { NetworkOptions } from '../tinker/proxy';
import { inlineEvalKeys, inlineEvalKind, inlineEvalMaxProblems, type InlineEvalRun, type InlineEvalSpec } from './inlineSpec';
import { loadEvalProblems } from './runEval';
import { benchmarkDefinition } from './benchmarks/registry';
import { loadBenchmarkProblems } from './benchmarks/load';
import type { BenchmarkDefinition, BenchmarkProblem } from './benchmarks/contract';
import { mean, passAtK } from './stats';

export interface SamplingEvaluator {
  kind: 'sampling';
  name: string;
  every: number;
  n: number;
  temperature: number;
  maxTokens: number;
  /** a sample is correct (pass@k) when its reward is at least this */
  correctThreshold: number;
  problems: Problem[];
  grader: RewardRunner;
  /** rendered prompts by problem id (the renderer is the run's, fixed for its life) */
  prompts: Map<string, number[]>;
}

export interface NllEvaluator {
  kind: 'nll';
  name: string;
  every: number;
  chats: Chat[];
}

export type InlineEvaluator = SamplingEvaluator | NllEvaluator;

/** The evaluators of a run, ready; close() stops the graders they started (not the run's own). */
export interface InlineEvaluators {
  list: InlineEvaluator[];
  close(): Promise<void>;
}

export interface PrepareInlineEvalsOptions {
  /** what the run's kind gives its evaluators (its spec module's) */
  kind: InlineEvalRun;
  /** the spec's folder (the spec's paths are absolute already; relative ones resolve here) */
  specDir: string;
  /** GRPO: the run's reward runner, the default grader (shared, not closed here) */
  runReward?: RewardRunner;
  /** GRPO: the run's max_tokens, the default of a sampling evaluator's */
  runMaxTokens?: number;
  log?: (line: string) => void;
}

/** What the run's start options (startGrpoRun's, startSftRun's) give the evaluators. */
export interface InlineEvalsEnvironment {
  cacheDir: string;
  network?: NetworkOptions;
  python?: string;
  rewardEnvironment?: readonly string[];
  signal?: AbortSignal;
}

export const NO_INLINE_EVALS: InlineEvaluators = { list: [], close: async () => undefined };

/** Loads every evaluator's data and starts the graders it names; rejects (closing what it started) naming the evaluator. */
export async function prepareInlineEvals(specs: readonly InlineEvalSpec[] | undefined, run: PrepareInlineEvalsOptions, env: InlineEvalsEnvironment): Promise<InlineEvaluators> {
  if (!specs?.length) return NO_INLINE_EVALS;
  const o = { ...run, ...env };
  const started: RewardRunner[] = [];
  const close = async () => {
    await Promise.all(started.map((r) => r.close().catch(() => undefined)));
  };
  const list: InlineEvaluator[] = [];
  try {
    for (const [i, e] of specs.entries()) {
      const where = `evals.${i} (${e.name})`;
      const max = inlineEvalMaxProblems(e);
      if (inlineEvalKind(e, o.kind) === 'nll') {
        if (!e.dataset) throw new Error(`${where}: dataset: required (the chats to score)`);
        const { max_problems: _max, prompt_field: _p, ground_truth_field: _g, ...source } = e.dataset;
        const chats = await loadChats(
          { ...source, messages_field: 'messages', prompt_field: 'prompt', completion_field: 'completion' },
          { specDir: o.specDir, seed: 0, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}), ...(o.signal ? { signal: o.signal } : {}) },
        ).catch((err: unknown) => rethrow(err, where));
        list.push({ kind: 'nll', name: e.name, every: e.every, chats: max !== undefined ? chats.train.slice(0, max) : chats.train });
        o.log?.(`evaluator ${e.name}: NLL of ${Math.min(chats.train.length, max ?? Infinity)} chats every ${e.every} steps`);
        continue;
      }
      if (e.benchmark) {
        const def = benchmarkDefinition(e.benchmark);
        const b = await loadBenchmarkProblems(def, {
          cacheDir: o.cacheDir,
          ...(max !== undefined ? { maxProblems: max } : {}),
          ...(def.defaults.system_prompt ? { systemPrompt: def.defaults.system_prompt } : {}),
          ...(o.network ? { network: o.network } : {}),
          ...(o.signal ? { signal: o.signal } : {}),
        }).catch((err: unknown) => rethrow(err, where));
        // the run's max_tokens before the benchmark's (the cookbook's 32k is an eval's, not a step's)
        const maxTokens = e.max_tokens ?? o.runMaxTokens ?? def.defaults.max_tokens;
        const temperature = e.temperature ?? def.defaults.temperature;
        // correct = the grade's score is 1 (all of IFEval's instructions met), as in a benchmark eval
        list.push({ kind: 'sampling', name: e.name, every: e.every, n: e.n, temperature, maxTokens, correctThreshold: 1, problems: b.problems, grader: benchmarkRewardRunner(def, b.byId.values()), prompts: new Map() });
        o.log?.(`evaluator ${e.name}: ${def.title}, ${b.problems.length} of ${b.available} problems × n=${e.n} every ${e.every} steps`);
        continue;
      }
      if (!e.dataset) throw new Error(`${where}: dataset: required (or "benchmark")`);
      const problems = await loadEvalProblems(e.dataset, { specDir: o.specDir, cacheDir: o.cacheDir, ...(max !== undefined ? { maxProblems: max } : {}), ...(o.network ? { network: o.network } : {}), ...(o.signal ? { signal: o.signal } : {}) }).catch((err: unknown) => rethrow(err, where));
      if (problems.length === 0) throw new Error(`${where}: dataset: no problems`);
      let grader = o.runReward;
      if (e.grader) {
        grader = await createRewardRunner({ file: e.grader.file, python: o.python, environment: o.rewardEnvironment, workers: e.grader.workers, timeoutMs: e.grader.timeout_ms, ...(o.signal ? { signal: o.signal } : {}) });
        started.push(grader);
      }
      if (!grader) throw new Error(`${where}: grader: is required (this run has no reward file)`);
      const maxTokens = e.max_tokens ?? o.runMaxTokens;
      if (maxTokens === undefined) throw new Error(`${where}: max_tokens: is required`);
      list.push({ kind: 'sampling', name: e.name, every: e.every, n: e.n, temperature: e.temperature ?? 1, maxTokens, correctThreshold: e.grader?.correct_threshold ?? 0.5, problems, grader, prompts: new Map() });
      o.log?.(`evaluator ${e.name}: ${problems.length} problems × n=${e.n} every ${e.every} steps`);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { list, close };
}

/**
 * A benchmark's grader as the rollouts' reward runner: a case carries the problem's ground truth, which
 * is its answer's text (benchmarks/load.ts), so the problem is found by it; the graders read the
 * response and the answer only, so two problems of one answer grade alike. Nothing to start or close.
 */
export function benchmarkRewardRunner(def: BenchmarkDefinition, problems: Iterable<BenchmarkProblem>): RewardRunner {
  const byAnswer = new Map<string, BenchmarkProblem>();
  for (const p of problems) {
    const key = typeof p.answer === 'string' ? p.answer : JSON.stringify(p.answer);
    if (!byAnswer.has(key)) byAnswer.set(key, p);
  }
  return {
    file: `benchmark ${def.name}`,
    score: async (cases) =>
      cases.map((c) => {
        const started = performance.now();
        const p = byAnswer.get(c.groundTruth);
        if (!p) return { ok: false as const, reward: 0 as const, error: { kind: 'exception' as const, message: `benchmark ${def.name}: no problem with the answer ${JSON.stringify(c.groundTruth).slice(0, 80)}` }, durationMs: 0 };
        try {
          return { ok: true as const, reward: def.grade(c.completion, p).score, durationMs: performance.now() - started };
        } catch (err) {
          return { ok: false as const, reward: 0 as const, error: { kind: 'exception' as const, message: `benchmark ${def.name}: ${err instanceof Error ? err.message : String(err)}` }, durationMs: performance.now() - started };
        }
      }),
    close: async () => undefined,
  };
}

function rethrow(err: unknown, where: string): never {
  if (err instanceof Error) {
    err.message = `${where}: ${err.message}`;
    throw err;
  }
  throw new Error(`${where}: ${String(err)}`);
}

/** The evaluators due at step i (i % every == 0, as the holdout's eval_every). */
export function dueAt<E extends InlineEvaluator>(list: readonly E[], i: number): E[] {
  return list.filter((e) => i % e.every === 0);
}

/** pass@1 … pass@n over problems (mean of the unbiased per-problem estimates) under test/<name>/env/all/. */
export function passAtKMetrics(name: string, rewards: readonly (readonly number[])[], n: number, threshold: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let k = 1; k <= n; k++) out[inlineEvalKeys.passAt(name, k)] = mean(rewards.map((rs) => passAtK(n, rs.filter((r) => r >= threshold).length, k)));
  return out;
}

function nameSeed(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return fmix32(h);
}

export interface SamplingEvalContext {
  step: number;
  sampler: SamplingClient;
  renderer: Renderer;
  /** the run's sampling_seed: requests are seeded from it, the evaluator's name, the step and the problem */
  samplingSeed?: number;
  /** stop strings replacing the renderer's */
  stop?: string[];
  writer?: RunWriter;
  signal: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** Samples and grades a sampling evaluator's problems; returns its metrics (and writes its samples as `eval_<name>_*.jsonl` of the iteration). */
export async function runSamplingEvaluator(e: SamplingEvaluator, c: SamplingEvalContext): Promise<{ metrics: Record<string, number>; groups: RolloutGroup<ScoredRollout>[]; rewardErrors: number }> {
  const stop = c.stop?.length ? c.stop : stopParam(c.renderer.stopSequences());
  let done = 0;
  const total = e.problems.length * e.n;
  c.onProgress?.(done, total);
  const groups = await Promise.all(
    e.problems.map(async (p, j) => {
      const params = {
        max_tokens: e.maxTokens,
        temperature: e.temperature,
        stop,
        ...(c.samplingSeed !== undefined ? { seed: requestSeed((c.samplingSeed ^ nameSeed(e.name)) >>> 0, c.step, 'eval', j) } : {}),
      };
      let prompt = e.prompts.get(p.id);
      if (!prompt) e.prompts.set(p.id, (prompt = renderedPrompt(c.renderer, p)));
      const g = await sampleGroup(c.sampler, c.renderer, p, prompt, e.n, params, c.signal);
      done += e.n;
      c.onProgress?.(done, total);
      return g;
    }),
  );
  const scored = await scoreGroups(groups, e.grader, c.signal);
  if (c.writer) await writeGroupRecords(c.writer, c.renderer, c.step, { name: `eval/${e.name}`, prefix: `eval_${e.name}` }, scored, computeAdvantages(scored.map((g) => g.rollouts.map((r) => r.reward))));
  const rewards = scored.map((g) => g.rollouts.map((r) => r.reward));
  const metrics = { ...prefixKeys(trajectoryMetrics(trajectoryStats(scored)), `test/${e.name}`), ...passAtKMetrics(e.name, rewards, e.n, e.correctThreshold) };
  return { metrics, groups: scored, rewardErrors: scored.reduce((s, g) => s + g.rollouts.filter((r) => r.rewardError).length, 0) };
}
