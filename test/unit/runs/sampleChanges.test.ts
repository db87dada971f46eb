// Pairing samples across evaluations and runs, and the order of "What changed": improved first, then
// regressed, the largest change first; unchanged and unpaired samples left out and counted.
import * as assert from 'assert';
import type { SampleRecord } from '../../../src/protocol/sampleSchema';
import { changeTitle, describeChanges, evaluationPair, formatReward, latestSampled, pairSamples, rewardChanges } from '../../../src/core/runs/sampleChanges';

function rec(problem: string, reward: number, group: number, traj = 0, prompt = `user: ${problem}?\n`): SampleRecord {
  return {
    group_idx: group,
    traj_idx: traj,
    problem_id: problem,
    prompt,
    completion: `answer ${reward}`,
    content: `answer ${reward}`,
    ground_truth: '1',
    completion_tokens: [1, 2],
    logprobs: [-0.5, -0.5],
    reward,
    advantage: 0,
    stop_reason: 'stop',
    termination: 'eos',
  };
}

describe('sample changes across evaluations and runs', () => {
  it('pairs holdout problems by id whatever their group order, and names the unpaired ones', () => {
    const before = [rec('a', 0, 0), rec('b', 1, 1), rec('c', 0, 2), rec('gone', 1, 3)];
    const after = [rec('c', 1, 0), rec('a', 0, 1), rec('b', 0, 2), rec('new', 1, 3)];
    const p = pairSamples(before, after);
    assert.deepStrictEqual(
      p.pairs.map((x) => [x.problemId, x.before.group_idx, x.after.group_idx]),
      [['c', 2, 0], ['a', 0, 1], ['b', 1, 2]],
    );
    assert.deepStrictEqual(p.onlyBefore.map((s) => s.problem_id), ['gone']);
    assert.deepStrictEqual(p.onlyAfter.map((s) => s.problem_id), ['new']);
  });

  it('pairs a problem listed twice first with first, and the samples of a group sample by sample', () => {
    const before = [rec('a', 0, 0), rec('a', 1, 5), rec('g', 0, 7, 1), rec('g', 1, 7, 0)];
    const after = [rec('a', 1, 2), rec('a', 0, 3), rec('g', 1, 1, 0), rec('g', 1, 1, 1)];
    const p = pairSamples(before, after);
    assert.deepStrictEqual(
      p.pairs.map((x) => [x.problemId, `${x.before.group_idx}/${x.before.traj_idx}`, `${x.after.group_idx}/${x.after.traj_idx}`]),
      [['g', '7/0', '1/0'], ['g', '7/1', '1/1'], ['a', '0/0', '2/0'], ['a', '5/0', '3/0']],
    );
    assert.strictEqual(p.onlyBefore.length + p.onlyAfter.length, 0);
  });

  it('pairs by the rendered prompt across runs (problem ids may differ)', () => {
    const before = [rec('run1:0', 0, 0, 0, 'user: 2+2?\n'), rec('run1:1', 1, 1, 0, 'user: 3+3?\n')];
    const after = [rec('x', 1, 0, 0, 'user: 3+3?\n'), rec('y', 1, 1, 0, 'user: 2+2?\n')];
    const p = pairSamples(before, after, 'prompt');
    assert.deepStrictEqual(p.pairs.map((x) => [x.before.problem_id, x.after.problem_id]), [['run1:1', 'x'], ['run1:0', 'y']]);
    assert.strictEqual(pairSamples(before, after, 'problem').pairs.length, 0);
  });

  it('orders changes improved first, then regressed, the largest change first; unchanged are left out', () => {
    const before = [rec('p0', 0, 0), rec('p1', 1, 1), rec('p2', 0.5, 2), rec('p3', 0, 3), rec('p4', 1, 4), rec('p5', 0.25, 5)];
    const after = [rec('p0', 1, 0), rec('p1', 0.5, 1), rec('p2', 0.75, 2), rec('p3', 0, 3), rec('p4', 0, 4), rec('p5', 0.25 + 1e-12, 5)];
    const pairing = pairSamples(before, after);
    const changes = rewardChanges(pairing.pairs);
    assert.deepStrictEqual(
      changes.map((c) => [c.problemId, c.direction, c.delta]),
      [['p0', 'improved', 1], ['p2', 'improved', 0.25], ['p4', 'regressed', -1], ['p1', 'regressed', -0.5]],
    );
    assert.strictEqual(describeChanges(pairing, changes), '2 improved, 2 regressed, 2 unchanged of 6 paired samples');
  });

  it('equal changes keep sample order', () => {
    const before = [rec('b', 0, 1), rec('a', 0, 0), rec('c', 1, 2)];
    const after = [rec('b', 1, 1), rec('a', 1, 0), rec('c', 0, 2)];
    assert.deepStrictEqual(rewardChanges(pairSamples(before, after).pairs).map((c) => c.problemId), ['a', 'b', 'c']);
  });

  it('titles each entry with the problem and the reward before → after', () => {
    assert.strictEqual(changeTitle({ problemId: 'arith:12', before: rec('arith:12', 0, 0), after: rec('arith:12', 1, 0) }), 'arith:12 · reward 0 → 1');
    assert.strictEqual(formatReward(0.33333), '0.333');
    assert.strictEqual(formatReward(-0.5), '-0.5');
  });

  it('compares the first and the latest evaluation by default; one given pairs with the latest (or the first)', () => {
    assert.deepStrictEqual(evaluationPair([6, 0, 2, 4]), { before: 0, after: 6 });
    assert.deepStrictEqual(evaluationPair([0, 2, 4, 6], { after: 4 }), { before: 0, after: 4 });
    assert.deepStrictEqual(evaluationPair([0, 2, 4, 6], { after: 0 }), { before: 0, after: 6 });
    assert.deepStrictEqual(evaluationPair([0, 2, 4, 6], { before: 2 }), { before: 2, after: 6 });
    assert.deepStrictEqual(evaluationPair([0, 2, 4, 6], { before: 6 }), { before: 0, after: 6 });
    assert.deepStrictEqual(evaluationPair([0, 2, 4, 6], { before: 4, after: 2 }), { before: 4, after: 2 });
    assert.strictEqual(evaluationPair([3]), undefined);
    assert.strictEqual(evaluationPair([]), undefined);
  });

  it('a run is compared by its latest evaluation, else its latest training iteration', () => {
    assert.deepStrictEqual(latestSampled({ train: [0, 1, 2], eval: [0, 2] }), { iteration: 2, split: 'eval' });
    assert.deepStrictEqual(latestSampled({ train: [0, 1], eval: [] }), { iteration: 1, split: 'train' });
    assert.strictEqual(latestSampled({ train: [], eval: [] }), undefined);
  });
});
