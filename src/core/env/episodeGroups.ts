// A GRPO iteration's episodes: G episodes of each problem, all run concurrently, then the
// module-level compute_group_rewards of each group (when the file has one), then the cookbook's
// trajectory groups, and the sample records that keep each episode's transcript.
import { questionOf } from '../../protocol/promptQuestion';
import { recordedRewardError, type SampleRecord } from '../../protocol/sampleSchema';
import type { Problem } from '../data/types';
import type { Renderer } from '../render/types';
import type { SamplingClient } from '../tinker/client';
import type { SamplingParams } from '../tinker/types';
import { runEpisode, type Episode, type EpisodeLimits } from './episode';
import type { EnvRunner } from './runner';
import type { TrajectoryGroup } from './trajectory';
import type { EnvCallError } from './types';

export interface EpisodeGroup extends TrajectoryGroup {
  problem: Problem;
  episodes: Episode[];
  /** compute_group_rewards failed: every group reward is 0 */
  groupError?: EnvCallError;
}

/** The dataset line an episode's environment is constructed from. */
export function problemLine(p: Problem): unknown {
  return p.row ?? { messages: p.messages, answer: p.groundTruth };
}

export async function runEpisodeGroups(
  env: EnvRunner,
  problems: readonly Problem[],
  groupSize: number,
  sampler: SamplingClient,
  renderer: Renderer,
  /** each episode's sampling parameters (its own seed when the run is seeded): group k, episode j */
  params: (group: number, episode: number) => SamplingParams,
  limits: EpisodeLimits,
  signal: AbortSignal | undefined,
  onEpisode: () => void,
): Promise<EpisodeGroup[]> {
  return Promise.all(
    problems.map(async (problem, k) => {
      const episodes = await Promise.all(
        Array.from({ length: groupSize }, async (_, j) => {
          const e = await runEpisode(env, problemLine(problem), sampler, renderer, params(k, j), limits, signal);
          onEpisode();
          return e;
        }),
      );
      let finalRewards = episodes.map(() => 0);
      let groupMetrics: Array<Record<string, number>> = episodes.map(() => ({}));
      let groupError: EnvCallError | undefined;
      if (env.hasGroupRewards) {
        const g = await env.groupRewards(episodes.map(() => problemLine(problem)), episodes.map((e) => e.messages));
        if (g.ok) {
          // an episode whose env failed keeps its 0
          finalRewards = g.value.map((r, i) => (episodes[i]!.error ? 0 : r.reward));
          groupMetrics = g.value.map((r) => r.metrics);
        } else groupError = g.error;
      }
      const trajectories = episodes.map((e) => ({ transitions: e.transitions }));
      return { problem, episodes, trajectories, finalRewards, groupMetrics, ...(groupError ? { groupError } : {}) };
    }),
  );
}

/** The sample records of episode groups: each episode's transcript, and its actions as the completion. */
export function episodeRecords(renderer: Renderer, groups: readonly EpisodeGroup[], totals: readonly (readonly number[])[], advantages: readonly (readonly number[])[], firstGroup = 0): SampleRecord[] {
  return groups.flatMap((g, p) => {
    const question = questionOf(g.problem.messages);
    return g.episodes.map((e, t): SampleRecord => {
      const first = e.transitions[0];
      const last = e.transitions.at(-1);
      const lastTurn = e.turns.at(-1);
      const rec: SampleRecord = {
        group_idx: firstGroup + p,
        traj_idx: t,
        problem_id: g.problem.id,
        prompt: first ? renderer.tokenizer.decode(first.ob) : '',
        ...(question !== undefined ? { question } : {}),
        completion: last ? renderer.tokenizer.decode(last.acTokens) : '',
        content: lastTurn?.reply.content ?? '',
        ground_truth: g.problem.groundTruth,
        completion_tokens: e.transitions.flatMap((tr) => [...tr.acTokens]),
        logprobs: e.transitions.flatMap((tr) => Array.from(tr.acLogprobs)),
        reward: totals[p]?.[t] ?? 0,
        advantage: advantages[p]?.[t] ?? 0,
        stop_reason: lastTurn?.stop_reason ?? 'stop',
        termination: e.stop,
        transcript: { turns: e.turns, ...(e.tools ? { tools: e.tools } : {}), stop: e.stop, group_reward: g.finalRewards[t] ?? 0, group_metrics: g.groupMetrics[t] ?? {} },
      };
      const err = e.error ?? (g.groupError ? { ...g.groupError, where: 'compute_group_rewards' } : undefined);
      if (err) rec.reward_error = recordedRewardError({ ...err, message: `${err.where}: ${err.message}` });
      return rec;
    });
  });
}
