// The trajectory metrics of a batch under the cookbook's names (grpo-reference §3.1), for training
// (`env/all/…`) and for the holdout evaluation (`test/env/all/…`), plus `env/all/frac_truncated`: the
// fraction of samples cut off by max_tokens (stop reason "length"), which the cookbook does not log.
import { groupBreakdown } from './advantages';
import type { RolloutGroup, ScoredRollout } from './rollout';

/** What the metrics need of one single-turn trajectory. */
export interface TrajectoryStats {
  /** prompt length (the observation of its only turn) */
  obTokens: number;
  /** sampled tokens */
  acTokens: number;
  reward: number;
  /** stop reason "length" */
  truncated: boolean;
  /** per-transition metrics (e.g. format, correct) */
  metrics: Record<string, number>;
}

/** The stats of every trajectory of scored rollout groups, group by group. */
export function trajectoryStats(groups: readonly RolloutGroup<ScoredRollout>[]): TrajectoryStats[][] {
  return groups.map((g) => g.rollouts.map((r) => ({ obTokens: g.promptTokens.length, acTokens: r.tokens.length, reward: r.reward, truncated: r.stopReason === 'length', metrics: r.metrics })));
}

/** What the batch metrics need of one episode, single-turn or multi-turn. */
export interface EpisodeStats {
  turns: number;
  /** Σ observation lengths (the whole prompt of each turn) */
  obTokens: number;
  /** Σ sampled tokens */
  acTokens: number;
  /** the episode's total reward (step rewards plus its group reward) */
  reward: number;
  /** cut off by max_tokens; single-turn loops know it, environment episodes leave it out */
  truncated?: boolean;
  /** each turn's metrics */
  stepMetrics: ReadonlyArray<Record<string, number>>;
}

export interface EpisodeGroupStats {
  episodes: readonly EpisodeStats[];
  /** compute_group_rewards' metrics of each episode */
  groupMetrics?: ReadonlyArray<Record<string, number>>;
}

/**
 * The one definition of the env/all/… batch metrics (grpo-reference §3.1), under `prefix`:
 * per-turn figures are Σ over turns of all episodes / Σ turns, turns_per_episode Σ turns / episodes,
 * reward/total the mean total reward over episodes, `<k>` the mean over the dicts holding k (step
 * metrics, then the group's), frac_truncated when every episode says, then by_group (threshold 0.5).
 */
export function episodeBatchMetrics(groups: readonly EpisodeGroupStats[], prefix = 'env/all'): Record<string, number> {
  let episodes = 0;
  let turns = 0;
  let ac = 0;
  let ob = 0;
  let reward = 0;
  let truncated = 0;
  let truncationKnown = true;
  const metrics: Array<Record<string, number>> = [];
  for (const g of groups) {
    for (const e of g.episodes) {
      episodes++;
      turns += e.turns;
      ac += e.acTokens;
      ob += e.obTokens;
      reward += e.reward;
      if (e.truncated === undefined) truncationKnown = false;
      else if (e.truncated) truncated++;
      metrics.push(...e.stepMetrics);
    }
    metrics.push(...(g.groupMetrics ?? []));
  }
  // An empty denominator (no episodes, or episodes without a turn) has no mean: NaN, as numpy's mean
  // of nothing, rather than a 0 that charts and sweeps would take for a measured value. The metrics
  // file keeps NaN; trackers and summaries skip non-finite values.
  const div = (a: number, b: number) => (b > 0 ? a / b : NaN);
  const out: Record<string, number> = {
    [`${prefix}/ac_tokens_per_turn`]: div(ac, turns),
    [`${prefix}/ob_tokens_per_turn`]: div(ob, turns),
    [`${prefix}/turns_per_episode`]: div(turns, episodes),
    [`${prefix}/total_episodes`]: episodes,
    [`${prefix}/total_turns`]: turns,
    [`${prefix}/total_ac_tokens`]: ac,
    [`${prefix}/total_ob_tokens`]: ob,
    [`${prefix}/reward/total`]: div(reward, episodes),
  };
  Object.assign(out, meanByKey(metrics, prefix));
  if (truncationKnown) out[`${prefix}/frac_truncated`] = div(truncated, episodes);
  const bg = groupBreakdown(groups.map((g) => g.episodes.map((e) => e.reward)));
  out[`${prefix}/by_group/frac_mixed`] = bg.frac_mixed;
  out[`${prefix}/by_group/frac_all_good`] = bg.frac_all_good;
  out[`${prefix}/by_group/frac_all_bad`] = bg.frac_all_bad;
  return out;
}

/** Metrics of single-turn `groups` (each a list of trajectories) under `prefix` (e.g. "env/all"). */
export function trajectoryMetrics(groups: readonly (readonly TrajectoryStats[])[], prefix = 'env/all'): Record<string, number> {
  const asEpisode = (t: TrajectoryStats): EpisodeStats => ({ turns: 1, obTokens: t.obTokens, acTokens: t.acTokens, reward: t.reward, truncated: t.truncated, stepMetrics: [t.metrics] });
  return episodeBatchMetrics(groups.map((g) => ({ episodes: g.map(asEpisode) })), prefix);
}

/**
 * The mean of each key over the dicts that contain it (a missing key is not a zero), as `prefix/key`:
 * the per-step metrics of single-turn and multi-turn episodes alike.
 */
export function meanByKey(dicts: Iterable<Record<string, number>>, prefix: string): Record<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const m of dicts)
    for (const [k, v] of Object.entries(m)) {
      const s = sums.get(k) ?? { sum: 0, n: 0 };
      s.sum += v;
      s.n++;
      sums.set(k, s);
    }
  return Object.fromEntries([...sums].map(([k, s]) => [`${prefix}/${k}`, s.sum / s.n]));
}

/** Adds `prefix/` in front of every key (the evaluator's `test/`). */
export function prefixKeys(metrics: Record<string, number>, prefix: string): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${prefix}/${k}`, v]));
}
