// What one iteration leaves on disk besides metrics: the cookbook's rollout summaries
// (grpo-reference §4.4, no text or token ids) and Tinker Studio's samples file with every sample of
// every group (text, tokens, reward, advantage, stop reason, log-probs) for the group and diff panels.
import { questionOf } from '../../protocol/promptQuestion';
import type { Renderer } from '../render/types';
import type { SampleRecord } from '../runs/sampleRecord';
import { parsedMessageFields, recordedRewardError } from '../../protocol/sampleSchema';
import type { RunWriter } from '../runs/runWriter';
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
        ...parsedMessageFields(r.response.message),
        ground_truth: g.problem.groundTruth,
        completion_tokens: r.tokens,
        logprobs: r.logprobs,
        reward: r.reward,
        advantage: advantages_P_G[p]?.[t] ?? 0,
        stop_reason: r.stopReason,
        termination: r.response.termination,
      };
      if (r.rewardError) rec.reward_error = recordedRewardError(r.rewardError);
      if (r.graderFormat !== undefined) rec.format = r.graderFormat;
      if (r.teacherLogprobs) rec.teacher_logprobs = r.teacherLogprobs;
      return rec;
    });
  });
}

/** samples serialised per slice of the records phase (a few ms each at 256 tokens on an idle core) */
export const RECORDS_PER_SLICE = 32;

/**
 * Writes an iteration's rollout summaries and samples of one split (`train`, the holdout's
 * `eval/test`, an inline evaluator's `eval/<name>`) as `<prefix>_rollout_summaries.jsonl` and
 * `<prefix>_samples.jsonl`, a few groups at a time so the event loop stays free.
 */
export async function writeGroupRecords(
  w: RunWriter,
  renderer: Renderer,
  i: number,
  split: { name: string; prefix: string },
  groups: readonly RolloutGroup<ScoredRollout>[],
  advantages: readonly (readonly number[])[],
): Promise<void> {
  const perSlice = Math.max(1, Math.floor(RECORDS_PER_SLICE / Math.max(1, groups[0]?.rollouts.length ?? 1)));
  await w.writeIterationFileInSlices(i, `${split.prefix}_rollout_summaries.jsonl`, groups.length, (a, b) => rolloutSummaries(split.name, i, groups.slice(a, b), a), perSlice);
  await w.writeIterationFileInSlices(i, `${split.prefix}_samples.jsonl`, groups.length, (a, b) => sampleRecords(renderer, groups.slice(a, b), advantages.slice(a, b), a), perSlice);
}
