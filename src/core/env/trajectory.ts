// Episodes as the trainer sees them, and how they become training datums, as the cookbook's
// rl/types.py and rl/data_processing.py define them (read for the rules, written anew here):
//  - a Transition is one turn: the observation the model saw (the whole rendered prompt of that
//    turn), the action it sampled (tokens and their log-probs), the step's reward, metrics and logs;
//  - a Trajectory is one episode's transitions; a TrajectoryGroup the G episodes of one problem, with
//    the reward and metrics `compute_group_rewards` gave each;
//  - the total reward of an episode is the sum of its step rewards plus its group reward; the
//    advantage is the total minus the group's mean (computeAdvantages, float32 as the single-turn
//    loop), the same for every sampled token of every turn;
//  - turns stay in one datum while each observation extends the sequence so far (the previous
//    observation and action are its prefix); an observation that does not starts a new datum;
//    observation tokens are targets with weight/mask 0, advantage 0 and log-prob 0.
import { computeAdvantages } from '../rollouts/advantages';
import { episodeBatchMetrics } from '../rollouts/metrics';
import type { RLDatum } from '../rollouts/datums';

/** The cookbook's PARSE_ERROR_MASKED_METRIC_KEY: a turn carrying it (≥ 1) trains nothing. */
export const PARSE_ERROR_MASKED_METRIC = 'parse_error_masked';

export interface Transition {
  /** the observation: every token of the prompt this turn was sampled from */
  ob: readonly number[];
  /** the sampled tokens (the stop token included when sampling stopped on it) */
  acTokens: readonly number[];
  /** the sampler's log-prob of each sampled token */
  acLogprobs: ArrayLike<number>;
  reward: number;
  episodeDone: boolean;
  metrics: Record<string, number>;
  logs?: Record<string, string | number>;
}

export interface Trajectory {
  transitions: readonly Transition[];
}

export interface TrajectoryGroup {
  trajectories: readonly Trajectory[];
  /** compute_group_rewards' reward of each trajectory (0 without it) */
  finalRewards: readonly number[];
  /** compute_group_rewards' metrics of each trajectory */
  groupMetrics: ReadonlyArray<Record<string, number>>;
}

/** Each trajectory's total reward: its step rewards plus its group reward (get_total_rewards). */
export function totalRewards(group: TrajectoryGroup): number[] {
  if (group.finalRewards.length !== group.trajectories.length) throw new Error(`${group.trajectories.length} trajectories but ${group.finalRewards.length} group rewards`);
  return group.trajectories.map((t, i) => t.transitions.reduce((s, tr) => s + tr.reward, 0) + group.finalRewards[i]!);
}

/** The group-centred advantage of every trajectory of every group (compute_advantages). */
export function trajectoryAdvantages(groups: readonly TrajectoryGroup[]): number[][] {
  return computeAdvantages(groups.map(totalRewards));
}

/** Whether `prefix` is a prefix of `seq`. */
function isPrefix(prefix: readonly number[], seq: readonly number[]): boolean {
  if (prefix.length > seq.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== seq[i]) return false;
  return true;
}

/**
 * The datums of one trajectory (trajectory_to_data): one while observations extend the sequence,
 * a new one whenever an observation does not. Each datum is the sequence shifted by one: inputs are
 * all tokens but the last, targets all but the first; the per-token log-probs, advantages and mask
 * drop their first entry likewise. A sequence of fewer than two tokens (an empty episode) makes no
 * datum (the cookbook asserts it never happens).
 */
export function trajectoryToData(traj: Trajectory, advantage: number): RLDatum[] {
  const data: RLDatum[] = [];
  let seq: number[] = [];
  let logprobs: number[] = [];
  let advantages: number[] = [];
  let mask: number[] = [];
  const flush = () => {
    if (seq.length >= 2) {
      data.push({
        modelInput: seq.slice(0, -1),
        targetTokens: seq.slice(1),
        logprobs: Float32Array.from(logprobs.slice(1)),
        advantages: Float32Array.from(advantages.slice(1)),
        mask: Float32Array.from(mask.slice(1)),
      });
    }
    seq = [];
    logprobs = [];
    advantages = [];
    mask = [];
  };
  for (const t of traj.transitions) {
    if (t.acLogprobs.length !== t.acTokens.length) throw new Error(`a turn has ${t.acTokens.length} sampled tokens but ${t.acLogprobs.length} log-probs`);
    let delta: readonly number[];
    if (seq.length === 0) delta = t.ob;
    else if (isPrefix(seq, t.ob)) delta = t.ob.slice(seq.length);
    else {
      flush();
      delta = t.ob;
    }
    const masked = (t.metrics[PARSE_ERROR_MASKED_METRIC] ?? 0) >= 1;
    const acMask = masked ? 0 : 1;
    const acAdvantage = masked ? 0 : advantage;
    for (const tok of delta) {
      seq.push(tok);
      logprobs.push(0);
      advantages.push(0);
      mask.push(0);
    }
    for (let j = 0; j < t.acTokens.length; j++) {
      seq.push(t.acTokens[j]!);
      logprobs.push(t.acLogprobs[j]!);
      advantages.push(acAdvantage);
      mask.push(acMask);
    }
  }
  flush();
  return data;
}

export interface AssembledData {
  datums: RLDatum[];
  /** the group and trajectory of each datum */
  origin: Array<{ group: number; traj: number }>;
}

/** Every trajectory's datums, group by group (assemble_training_data). */
export function assembleTrainingData(groups: readonly TrajectoryGroup[], advantages_P_G: readonly (readonly number[])[]): AssembledData {
  if (groups.length !== advantages_P_G.length) throw new Error(`${groups.length} groups but ${advantages_P_G.length} advantage lists`);
  const datums: RLDatum[] = [];
  const origin: AssembledData['origin'] = [];
  groups.forEach((g, p) => {
    const adv = advantages_P_G[p]!;
    if (adv.length !== g.trajectories.length) throw new Error(`group ${p}: ${g.trajectories.length} trajectories but ${adv.length} advantages`);
    g.trajectories.forEach((t, i) => {
      for (const d of trajectoryToData(t, adv[i]!)) {
        datums.push(d);
        origin.push({ group: p, traj: i });
      }
    });
  });
  return { datums, origin };
}

/** Drops the groups whose total rewards are all equal; if every group is, keeps the first (as the cookbook). */
export function removeConstantTrajectoryGroups<G extends TrajectoryGroup>(groups: readonly G[]): G[] {
  const kept = groups.filter((g) => {
    const r = totalRewards(g);
    return !r.every((v) => v === r[0]);
  });
  return kept.length > 0 ? kept : groups.slice(0, 1);
}

/** The env/all/… metrics of a batch of groups (episodeBatchMetrics: one definition for both loops). */
export function episodeMetrics(groups: readonly TrajectoryGroup[], prefix = 'env/all'): Record<string, number> {
  return episodeBatchMetrics(
    groups.map((g) => {
      const rewards = totalRewards(g);
      return {
        episodes: g.trajectories.map((t, i) => ({
          turns: t.transitions.length,
          obTokens: t.transitions.reduce((s, tr) => s + tr.ob.length, 0),
          acTokens: t.transitions.reduce((s, tr) => s + tr.acTokens.length, 0),
          reward: rewards[i]!,
          stepMetrics: t.transitions.map((tr) => tr.metrics),
        })),
        groupMetrics: g.groupMetrics,
      };
    }),
    prefix,
  );
}
