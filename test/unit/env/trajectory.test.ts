// The datum construction of multi-turn episodes against datums computed by hand with the cookbook's
// trajectory_to_data rule (tinker_cookbook/rl/data_processing.py): each observation that extends the
// sequence so far adds only its new tokens; one that does not starts a new datum.
import * as assert from 'assert';
import { trajectoryToDatum } from '../../../src/core/rollouts/datums';
import type { RLDatum } from '../../../src/core/rollouts/datums';
import {
  assembleTrainingData,
  episodeMetrics,
  removeConstantTrajectoryGroups,
  totalRewards,
  trajectoryAdvantages,
  trajectoryToData,
  type Transition,
  type TrajectoryGroup,
} from '../../../src/core/env/trajectory';

const f = Math.fround;
const turn = (ob: number[], ac: number[], lp: number[], reward = 0, metrics: Record<string, number> = {}, episodeDone = false): Transition => ({ ob, acTokens: ac, acLogprobs: lp, reward, metrics, episodeDone });
const plain = (d: RLDatum) => ({ input: d.modelInput, targets: d.targetTokens, logprobs: Array.from(d.logprobs), advantages: Array.from(d.advantages), mask: Array.from(d.mask) });

describe('env: trajectories to datums', () => {
  it('a two-turn episode whose second observation extends the first is exactly one datum', () => {
    // O1 = [1, 2], A1 = [10, 11]; O2 = O1 + A1 + [3, 4] (the user's reply), A2 = [12]
    const data = trajectoryToData({ transitions: [turn([1, 2], [10, 11], [-0.1, -0.2]), turn([1, 2, 10, 11, 3, 4], [12], [-0.3], 1, {}, true)] }, 0.5);
    assert.strictEqual(data.length, 1);
    // full sequence [1,2,10,11,3,4,12]; per-token lp [0,0,-.1,-.2,0,0,-.3], adv [0,0,.5,.5,0,0,.5], mask [0,0,1,1,0,0,1]; all shifted by one
    assert.deepStrictEqual(plain(data[0]!), {
      input: [1, 2, 10, 11, 3, 4],
      targets: [2, 10, 11, 3, 4, 12],
      logprobs: [0, f(-0.1), f(-0.2), 0, 0, f(-0.3)],
      advantages: [0, 0.5, 0.5, 0, 0, 0.5],
      mask: [0, 1, 1, 0, 0, 1],
    });
  });

  it("the cookbook's docstring example (O1,A1), (O1+A1+O2,A2), (O3,A3): two datums", () => {
    const data = trajectoryToData(
      { transitions: [turn([1, 2], [10], [-1]), turn([1, 2, 10, 3], [20, 21], [-2, -3]), turn([7, 8], [30], [-4], 0, {}, true)] },
      -0.25,
    );
    assert.strictEqual(data.length, 2);
    assert.deepStrictEqual(plain(data[0]!), {
      input: [1, 2, 10, 3, 20],
      targets: [2, 10, 3, 20, 21],
      logprobs: [0, -1, 0, -2, -3],
      advantages: [0, -0.25, 0, -0.25, -0.25],
      mask: [0, 1, 0, 1, 1],
    });
    assert.deepStrictEqual(plain(data[1]!), { input: [7, 8], targets: [8, 30], logprobs: [0, -4], advantages: [0, -0.25], mask: [0, 1] });
  });

  it('an observation that repeats the previous one but drops the action is not an extension', () => {
    // O2 = O1 + [5] (the action [10] left out of the history): not a prefix match → a new datum
    const data = trajectoryToData({ transitions: [turn([1, 2], [10], [-1]), turn([1, 2, 5], [11], [-2])] }, 1);
    assert.deepStrictEqual(data.map(plain), [
      { input: [1, 2], targets: [2, 10], logprobs: [0, -1], advantages: [0, 1], mask: [0, 1] },
      { input: [1, 2, 5], targets: [2, 5, 11], logprobs: [0, 0, -2], advantages: [0, 0, 1], mask: [0, 0, 1] },
    ]);
  });

  it('an observation equal to the sequence so far adds no observation tokens', () => {
    const data = trajectoryToData({ transitions: [turn([1], [2], [-1]), turn([1, 2], [3], [-2])] }, 2);
    assert.deepStrictEqual(data.map(plain), [{ input: [1, 2], targets: [2, 3], logprobs: [-1, -2], advantages: [2, 2], mask: [1, 1] }]);
  });

  it('a one-turn episode gives the single-turn loop\'s datum', () => {
    const [d] = trajectoryToData({ transitions: [turn([1, 2, 3], [10, 11, 12], [-0.1, -0.2, -0.3], 1, {}, true)] }, 0.5);
    assert.deepStrictEqual(plain(d!), plain(trajectoryToDatum([1, 2, 3], [10, 11, 12], [-0.1, -0.2, -0.3], 0.5)));
  });

  it('a turn flagged parse_error_masked trains nothing (mask and advantage 0); the others train', () => {
    const [d] = trajectoryToData({ transitions: [turn([1], [10], [-1], 0, { parse_error_masked: 1 }), turn([1, 10, 2], [11], [-2])] }, 0.75);
    assert.deepStrictEqual(plain(d!), { input: [1, 10, 2], targets: [10, 2, 11], logprobs: [-1, 0, -2], advantages: [0, 0, 0.75], mask: [0, 0, 1] });
  });

  it('an empty episode (empty observation and action) makes no datum', () => {
    assert.deepStrictEqual(trajectoryToData({ transitions: [turn([], [], [], -0.1, {}, true)] }, 0), []);
    assert.deepStrictEqual(trajectoryToData({ transitions: [] }, 0), []);
  });

  it('refuses a turn whose log-probs do not match its tokens', () => {
    assert.throws(() => trajectoryToData({ transitions: [turn([1], [2, 3], [-1])] }, 0), /2 sampled tokens but 1 log-probs/);
  });
});

describe('env: group rewards and advantages', () => {
  const group = (stepRewards: number[][], finals: number[], groupMetrics: Array<Record<string, number>> = finals.map(() => ({}))): TrajectoryGroup => ({
    trajectories: stepRewards.map((rs) => ({ transitions: rs.map((r, i) => turn([1, 2], [3], [-1], r, {}, i === rs.length - 1)) })),
    finalRewards: finals,
    groupMetrics,
  });

  it('the total reward is the sum of the step rewards plus the group reward', () => {
    assert.deepStrictEqual(totalRewards(group([[0, 1], [0.5], [0, 0, 0]], [0, 0.25, -1])), [1, 0.75, -1]);
  });

  it('advantages are per trajectory: total minus the group mean, applied to every sampled token of every turn', () => {
    const g: TrajectoryGroup = {
      trajectories: [
        { transitions: [turn([1], [2], [-1], 0), turn([1, 2, 3], [4], [-1], 1, {}, true)] },
        { transitions: [turn([1], [5], [-1], 0, {}, true)] },
      ],
      finalRewards: [0, 0],
      groupMetrics: [{}, {}],
    };
    const adv = trajectoryAdvantages([g]);
    assert.deepStrictEqual(adv, [[0.5, -0.5]]);
    const { datums, origin } = assembleTrainingData([g], adv);
    assert.deepStrictEqual(origin, [{ group: 0, traj: 0 }, { group: 0, traj: 1 }]);
    assert.deepStrictEqual(Array.from(datums[0]!.advantages), [0.5, 0, 0.5]);
    assert.deepStrictEqual(Array.from(datums[1]!.advantages), [-0.5]);
  });

  it('group rewards change the advantages (a pairwise judge)', () => {
    assert.deepStrictEqual(trajectoryAdvantages([group([[0], [0]], [1, 0])]), [[0.5, -0.5]]);
  });

  it('constant-total groups are removed; all constant keeps the first', () => {
    const a = group([[1], [1]], [0, 0]);
    const b = group([[1], [0]], [0, 1]);
    const c = group([[0], [1]], [0, 0]);
    assert.deepStrictEqual(removeConstantTrajectoryGroups([a, b, c]), [c]);
    assert.deepStrictEqual(removeConstantTrajectoryGroups([a, b]), [a]);
  });

  it("the cookbook's env/all metrics, per-step and group metrics averaged over the dicts that hold them", () => {
    const g1: TrajectoryGroup = {
      trajectories: [
        { transitions: [turn([1, 2], [3, 4], [-1, -1], 0, { first_try_correct: 0 }), turn([1, 2, 3, 4, 5], [6], [-1], 0.5, { second_try_correct: 1 }, true)] },
        { transitions: [turn([1, 2], [7], [-1], 1, { first_try_correct: 1 }, true)] },
      ],
      finalRewards: [0, 0],
      groupMetrics: [{ judged: 1 }, { judged: 0 }],
    };
    const g2: TrajectoryGroup = { trajectories: [{ transitions: [turn([9], [8], [-1], 0, { first_try_correct: 0 }, true)] }, { transitions: [turn([9], [8], [-1], 0, {}, true)] }], finalRewards: [0, 0], groupMetrics: [{}, {}] };
    assert.deepStrictEqual(episodeMetrics([g1, g2]), {
      'env/all/ac_tokens_per_turn': (2 + 1 + 1 + 1 + 1) / 5,
      'env/all/ob_tokens_per_turn': (2 + 5 + 2 + 1 + 1) / 5,
      'env/all/turns_per_episode': 5 / 4,
      'env/all/total_episodes': 4,
      'env/all/total_turns': 5,
      'env/all/total_ac_tokens': 6,
      'env/all/total_ob_tokens': 11,
      'env/all/reward/total': (0.5 + 1 + 0 + 0) / 4,
      'env/all/first_try_correct': 1 / 3,
      'env/all/second_try_correct': 1,
      'env/all/judged': 0.5,
      'env/all/by_group/frac_mixed': 0.5,
      'env/all/by_group/frac_all_good': 0,
      'env/all/by_group/frac_all_bad': 0.5,
    });
  });
});
