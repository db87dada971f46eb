// The one definition of the env/all/… batch metrics (grpo-reference §3.1) on crafted episodes: the
// single-turn loop and the environment loop give the same figures for the same episodes, and an
// empty denominator gives NaN in both (not a 0 that reads as a measurement).
import * as assert from 'assert';
import { episodeMetrics, type TrajectoryGroup, type Transition } from '../../../src/core/env/trajectory';
import { trajectoryMetrics } from '../../../src/core/rollouts/metrics';

const turn = (ob: number, ac: number, reward: number, metrics: Record<string, number> = {}): Transition => ({
  ob: Array.from({ length: ob }, (_, i) => i),
  acTokens: Array.from({ length: ac }, (_, i) => 100 + i),
  acLogprobs: Array.from({ length: ac }, () => -1),
  reward,
  episodeDone: true,
  metrics,
});

describe('episode batch metrics: one definition', () => {
  it('per-turn figures over all turns, reward/total the mean total reward per episode, group rewards included', () => {
    // problem 1: a 2-turn episode (rewards 0 + 0.5, group reward 0.5) and a 1-turn episode (reward 0, group 0)
    // problem 2: two 1-turn episodes of reward 1
    const groups: TrajectoryGroup[] = [
      { trajectories: [{ transitions: [turn(4, 2, 0, { correct: 0 }), turn(9, 3, 0.5, { correct: 1 })] }, { transitions: [turn(4, 1, 0)] }], finalRewards: [0.5, 0], groupMetrics: [{ judged: 1 }, {}] },
      { trajectories: [{ transitions: [turn(6, 5, 1, { correct: 1 })] }, { transitions: [turn(6, 1, 1, { correct: 1 })] }], finalRewards: [0, 0], groupMetrics: [{}, {}] },
    ];
    const m = episodeMetrics(groups);
    assert.deepStrictEqual(m, {
      'env/all/ac_tokens_per_turn': 12 / 5,
      'env/all/ob_tokens_per_turn': 29 / 5,
      'env/all/turns_per_episode': 5 / 4,
      'env/all/total_episodes': 4,
      'env/all/total_turns': 5,
      'env/all/total_ac_tokens': 12,
      'env/all/total_ob_tokens': 29,
      // totals per episode: 1, 0, 1, 1 (not the mean of the step rewards)
      'env/all/reward/total': 3 / 4,
      'env/all/correct': 3 / 4,
      'env/all/judged': 1,
      'env/all/by_group/frac_mixed': 0.5,
      'env/all/by_group/frac_all_good': 0.5,
      'env/all/by_group/frac_all_bad': 0,
    });
  });

  it('single-turn trajectories and one-turn episodes give the same figures', () => {
    const env = episodeMetrics([
      { trajectories: [{ transitions: [turn(7, 2, 1, { format: 1 })] }, { transitions: [turn(7, 4, 0, { format: 0 })] }], finalRewards: [0, 0], groupMetrics: [{}, {}] },
    ]);
    const single = trajectoryMetrics([
      [
        { obTokens: 7, acTokens: 2, reward: 1, truncated: false, metrics: { format: 1 } },
        { obTokens: 7, acTokens: 4, reward: 0, truncated: true, metrics: { format: 0 } },
      ],
    ]);
    const { 'env/all/frac_truncated': truncated, ...rest } = single;
    assert.strictEqual(truncated, 0.5);
    assert.deepStrictEqual(rest, env);
  });

  it('an empty denominator gives NaN, not 0, in both loops', () => {
    // every episode failed before its first turn: no turns, so no per-turn figure
    const noTurns = episodeMetrics([{ trajectories: [{ transitions: [] }, { transitions: [] }], finalRewards: [0, 0], groupMetrics: [{}, {}] }]);
    assert.ok(Number.isNaN(noTurns['env/all/ac_tokens_per_turn']));
    assert.ok(Number.isNaN(noTurns['env/all/ob_tokens_per_turn']));
    assert.strictEqual(noTurns['env/all/turns_per_episode'], 0);
    assert.strictEqual(noTurns['env/all/total_turns'], 0);
    assert.strictEqual(noTurns['env/all/reward/total'], 0);
    // no episodes at all: no mean of anything, in either loop
    for (const m of [episodeMetrics([]), trajectoryMetrics([])]) {
      for (const k of ['ac_tokens_per_turn', 'ob_tokens_per_turn', 'turns_per_episode', 'reward/total']) assert.ok(Number.isNaN(m[`env/all/${k}`]), k);
      assert.strictEqual(m['env/all/total_episodes'], 0);
    }
    assert.ok(Number.isNaN(trajectoryMetrics([])['env/all/frac_truncated']));
  });
});
