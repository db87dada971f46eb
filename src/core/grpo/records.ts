// What one iteration leaves on disk besides metrics: the cookbook's rollout summaries
// (grpo-reference §4.4, no text or token ids) and Tinker Studio's samples file with every sample of
// every group (text, tokens, reward, advantage, stop reason, log-probs) for the group and diff panels.
import { questionOf } from '../../protocol/promptQuestion';
import type { Renderer } from '../render/types';
import type { SampleRecord } from '../runs/sampleRecord';
import { recordedRewardError } from '../../protocol/sampleSchema';
import type { RolloutGroup, ScoredRollout } from './rollout';

export type { SampleRecord };

/** One line of `<base>_rollout_summaries.jsonl` (schema_version 1). */
export interface RolloutSummary {
  schema_version: 1;
  split: string;
  iteration: number;
  group_idx: number;
  traj_idx: number;
  tags: string[];
  sampling_client_step: number;
  total_reward: number;
  final_reward: number;
  trajectory_metrics: Record<string, number>;
  steps: Array<{ step_idx: number; ob_len: number; ac_len: number; reward: number; episode_done: boolean; metrics: Record<string, number>; logs: Record<string, string> }>;
  final_ob_len: number;
}

export const PROBLEM_TAGS = ['problems'];

/** `firstGroup`: the index of groups[0] in the batch, when writing a slice of it. */
export function rolloutSummaries(split: string, iteration: number, groups: readonly RolloutGroup<ScoredRollout>[], firstGroup = 0): RolloutSummary[] {
  return groups.flatMap((g, p) =>
    g.rollouts.map((r, t) => ({
      schema_version: 1 as const,
      split,
      iteration,
      group_idx: firstGroup + p,
      traj_idx: t,
      tags: PROBLEM_TAGS,
      sampling_client_step: iteration,
      total_reward: r.reward,
      final_reward: 0,
      trajectory_metrics: {},
      steps: [{ step_idx: 0, ob_len: g.promptTokens.length, ac_len: r.tokens.length, reward: r.reward, episode_done: true, metrics: r.metrics, logs: {} }],
      final_ob_len: 0,
    })),
  );
}

/** `advantages_P_G` aligned with `groups`; `firstGroup`: the index of groups[0] in the batch. */
export function sampleRecords(renderer: Renderer, groups: readonly RolloutGroup<ScoredRollout>[], advantages_P_G: readonly (readonly number[])[], firstGroup = 0): SampleRecord[] {
  return groups.flatMap((g, p) => {
    const prompt = renderer.tokenizer.decode(g.promptTokens);
    const question = questionOf(g.problem.messages);
    return g.rollouts.map((r, t) => {
      const rec: SampleRecord = {
        group_idx: firstGroup + p,
        traj_idx: t,
        problem_id: g.problem.id,
        prompt,
        ...(question !== undefined ? { question } : {}),
        completion: renderer.tokenizer.decode(r.tokens),
        content: r.response.message.content,
        ground_truth: g.problem.groundTruth,
        completion_tokens: r.tokens,
        logprobs: r.logprobs,
        reward: r.reward,
        advantage: advantages_P_G[p]?.[t] ?? 0,
        stop_reason: r.stopReason,
        termination: r.response.termination,
      };
      if (r.rewardError) rec.reward_error = recordedRewardError(r.rewardError);
      return rec;
    });
  });
}
