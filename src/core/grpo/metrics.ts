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

/** Metrics of `groups` (each a list of trajectories) under `prefix` (e.g. "env/all"). */
export function trajectoryMetrics(groups: readonly (readonly TrajectoryStats[])[], prefix = 'env/all'): Record<string, number> {
  const all = groups.flat();
  const episodes = all.length;
  const turns = episodes; // single-turn: one transition per trajectory
  let ac = 0;
  let ob = 0;
  let reward = 0;
  let truncated = 0;
  for (const t of all) {
    ac += t.acTokens;
    ob += t.obTokens;
    reward += t.reward;
    if (t.truncated) truncated++;
  }
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
  Object.assign(out, meanByKey(all.map((t) => t.metrics), prefix));
  out[`${prefix}/frac_truncated`] = div(truncated, episodes);
  const bg = groupBreakdown(groups.map((g) => g.map((t) => t.reward)));
  out[`${prefix}/by_group/frac_mixed`] = bg.frac_mixed;
  out[`${prefix}/by_group/frac_all_good`] = bg.frac_all_good;
  out[`${prefix}/by_group/frac_all_bad`] = bg.frac_all_bad;
  return out;
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
