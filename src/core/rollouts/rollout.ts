// One GRPO rollout group: a problem's prompt, rendered once, sampled `group_size` times by the current
// sampler, each completion parsed by the renderer and scored by the reward runner. Single-turn, like
// the cookbook's ProblemEnv: one transition per trajectory, episode done after it.
import type { Problem } from '../data/types';
import type { ParsedResponse, Renderer, StopSequences } from '../render/types';
import type { RewardError, RewardOutcome, RewardRunner } from '../reward/types';
import type { SamplingClient } from '../tinker/client';
import { ContextWindowError } from '../tinker/errors';
import { SamplingParams, StopReason, textInput } from '../tinker/types';

export interface Rollout {
  /** sampled ids; the stop token is included when sampling stopped on it */
  tokens: number[];
  /** the sampler's log-prob of each sampled token */
  logprobs: number[];
  stopReason: StopReason;
  response: ParsedResponse;
}

export interface ScoredRollout extends Rollout {
  reward: number;
  rewardError?: RewardError;
  /** per-transition metrics (the cookbook's env.step metrics): `format`, `correct` */
  metrics: Record<string, number>;
  /** the grader's own `format`, when the reward function returned one */
  graderFormat?: number;
  /** a distillation run's teacher log-prob of each sampled token */
  teacherLogprobs?: number[];
}

export interface RolloutGroup<R extends Rollout = Rollout> {
  problem: Problem;
  promptTokens: number[];
  rollouts: R[];
  /** the dataset (and teacher) the problem came from, in a multi-teacher run */
  dataset?: number;
}

/** The `stop` sampling parameter for a renderer's stop sequences (strings or token ids). */
export function stopParam(stop: StopSequences): string[] | number[] {
  return stop.kind === 'strings' ? stop.strings : stop.tokens;
}

/** Samples `numSamples` completions of one problem with a single request (`num_samples = G`). */
export async function sampleGroup(
  sampler: SamplingClient,
  renderer: Renderer,
  problem: Problem,
  promptTokens: number[],
  numSamples: number,
  params: SamplingParams,
  signal?: AbortSignal,
): Promise<RolloutGroup> {
  const r = await sampler.sample(textInput(promptTokens), params, { numSamples, signal }).catch((e: unknown) => {
    throw e instanceof ContextWindowError ? e.about(`problem ${problem.id}`) : e;
  });
  if (r.sequences.length !== numSamples) throw new Error(`asked for ${numSamples} samples of ${problem.id}, the server returned ${r.sequences.length}`);
  const rollouts = r.sequences.map((s): Rollout => {
    if (!s.logprobs || s.logprobs.length !== s.tokens.length) {
      throw new Error(`the sampler returned no per-token log-probs for ${problem.id} (needed for the importance-sampling loss)`);
    }
    return { tokens: s.tokens, logprobs: s.logprobs, stopReason: s.stop_reason, response: renderer.parseResponse(s.tokens) };
  });
  return { problem, promptTokens, rollouts };
}

/**
 * The cookbook's ProblemEnv step metrics for a user reward: `format` = the grader's format when the
 * reward function returned one ({"reward", "format"}), else whether the completion ended on the
 * renderer's stop sequence; `correct` = the reward reached 0.5 (the by_group good/bad threshold).
 */
export function stepMetrics(response: ParsedResponse, reward: number, graderFormat?: number): Record<string, number> {
  return { format: graderFormat ?? (response.termination === 'stop_sequence' ? 1 : 0), correct: reward >= 0.5 ? 1 : 0 };
}

/** Attaches the reward outcomes (in rollout order across the groups) to the rollouts. */
export function attachRewards(groups: readonly RolloutGroup[], outcomes: readonly RewardOutcome[]): RolloutGroup<ScoredRollout>[] {
  let k = 0;
  const scored = groups.map((g) => ({
    ...g,
    rollouts: g.rollouts.map((r): ScoredRollout => {
      const o = outcomes[k++];
      if (!o) throw new Error('the reward runner returned fewer outcomes than cases');
      const format = o.ok ? o.format : undefined;
      const base = { ...r, reward: o.reward, metrics: stepMetrics(r.response, o.reward, format), ...(format !== undefined ? { graderFormat: format } : {}) };
      return o.ok ? base : { ...base, rewardError: o.error };
    }),
  }));
  if (k !== outcomes.length) throw new Error('the reward runner returned more outcomes than cases');
  return scored;
}

/** Prompt-only data (distillation without a reward): every rollout scores 0, so the KL to the teacher is the whole signal. */
export function zeroRewards(groups: readonly RolloutGroup[]): RolloutGroup<ScoredRollout>[] {
  return groups.map((g) => ({ ...g, rollouts: g.rollouts.map((r): ScoredRollout => ({ ...r, reward: 0, metrics: stepMetrics(r.response, 0) })) }));
}

/** Scores every rollout of every group in one batch through the reward runner. */
export async function scoreGroups(groups: readonly RolloutGroup[], reward: RewardRunner, signal?: AbortSignal): Promise<RolloutGroup<ScoredRollout>[]> {
  const cases = groups.flatMap((g) => g.rollouts.map((r) => ({ completion: r.response.message.content, groundTruth: g.problem.groundTruth })));
  return attachRewards(groups, await reward.score(cases, signal));
}
