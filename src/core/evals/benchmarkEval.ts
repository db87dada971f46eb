// What a benchmark eval adds to the eval runner: its grader in place of a reward file (pure, in
// TypeScript: nothing to start), and before sampling, the tokens it is expected to cost — prompt
// tokens exact through the renderer, sampled tokens at most max_tokens each, as clamped to what the
// model's context leaves (the cookbook's context_window) — so the cost estimate can price it first.
import type { BenchmarkDefinition, BenchmarkProblem } from './benchmarks/contract';
import type { RewardOutcome } from '../reward/types';
import type { Problem } from '../data/types';
import { renderedPrompt } from '../data/problem';
import type { Renderer } from '../render/types';
import type { SamplingClient } from '../tinker/client';

export interface BenchmarkGrader {
  def: BenchmarkDefinition;
  /** a response to problem `problemId` → the outcome the eval records (reward = the grade's score) and what the grader read */
  grade(problemId: string, response: string): { outcome: RewardOutcome; extracted?: string };
}

export function benchmarkGrader(def: BenchmarkDefinition, byId: ReadonlyMap<string, BenchmarkProblem>): BenchmarkGrader {
  return {
    def,
    grade(problemId, response) {
      const p = byId.get(problemId);
      if (!p) throw new Error(`benchmark ${def.name}: no problem ${problemId}`);
      const started = performance.now();
      const g = def.grade(response, p);
      return { outcome: { ok: true, reward: g.score, durationMs: performance.now() - started }, ...(g.extracted !== undefined ? { extracted: g.extracted } : {}) };
    },
  };
}

export interface ExpectedTokens {
  problems: number;
  /** samples to draw: problems × n × targets */
  samples: number;
  /** prefill: every sample's prompt (exact, through the renderer) */
  prompt_tokens: number;
  /** sampled: at most this many (each sample's max_tokens after the context clamp) */
  max_sampled_tokens: number;
  /** max_tokens after the clamp, per problem: the smallest and largest */
  max_tokens_range: [number, number];
  /** problems whose max_tokens the context clamps */
  clamped: number;
}

/**
 * The tokens an eval is expected to cost before it starts. `promptTokens` holds each problem's
 * rendered prompt length; `contextLength` the model's (undefined: no clamp); every sample of a
 * problem costs its prompt (prefill) and at most min(max_tokens, context − prompt) sampled tokens.
 */
export function expectedTokens(promptTokens: readonly number[], o: { n: number; maxTokens: number; targets?: number; contextLength?: number }): ExpectedTokens {
  const per = o.n * (o.targets ?? 1);
  let prompt = 0;
  let sampled = 0;
  let clamped = 0;
  let lo = Infinity;
  let hi = 0;
  for (const len of promptTokens) {
    const room = o.contextLength !== undefined ? Math.max(0, o.contextLength - len) : Infinity;
    const max = Math.min(o.maxTokens, room);
    if (max < o.maxTokens) clamped++;
    lo = Math.min(lo, max);
    hi = Math.max(hi, max);
    prompt += len * per;
    sampled += max * per;
  }
  return { problems: promptTokens.length, samples: promptTokens.length * per, prompt_tokens: prompt, max_sampled_tokens: sampled, max_tokens_range: [lo === Infinity ? 0 : lo, hi], clamped };
}

/** The line the runner logs: the expected tokens, and the clamp when there is one. */
export function expectedTokensLine(e: ExpectedTokens, maxTokens: number, model: string, contextLength?: number): string {
  const tokens = `expected tokens: ${e.prompt_tokens.toLocaleString('en-US')} prompt (exact) + at most ${e.max_sampled_tokens.toLocaleString('en-US')} sampled, ${e.samples} samples`;
  if (e.clamped === 0 || contextLength === undefined) return tokens;
  const [lo, hi] = e.max_tokens_range;
  return `${tokens}; max_tokens ${maxTokens} clamped to ${lo === hi ? lo : `${lo}–${hi}`} on ${e.clamped} of ${e.problems} problems: what the context of ${model} (${contextLength} tokens) leaves after the prompt`;
}

/** Before sampling a benchmark: the expected tokens of the missing samples per model, and the max_tokens clamp (logged). */
export async function logExpectedTokens<T extends { model: string }>(
  problems: readonly Problem[],
  missing: ReadonlyArray<{ target: T; p: number }>,
  targets: readonly T[],
  o: { n: number; maxTokens: number; rendererFor: (model: string) => Promise<Renderer>; samplerFor: (t: T) => Promise<SamplingClient>; log: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  for (const model of new Set(targets.map((t) => t.model))) {
    const mine = missing.filter((m) => m.target.model === model);
    if (mine.length === 0) continue;
    const renderer = await o.rendererFor(model);
    const ctx = await (await o.samplerFor(mine[0]!.target)).contextLength(o.signal);
    const lengths = mine.map((m) => renderedPrompt(renderer, problems[m.p]!).length);
    const e = expectedTokens(lengths, { n: 1, maxTokens: o.maxTokens, ...(ctx ? { contextLength: ctx.length } : {}) });
    o.log(`${model}: ${expectedTokensLine(e, o.maxTokens, model, ctx?.length)}`);
  }
}
