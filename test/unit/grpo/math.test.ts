import * as assert from 'assert';
import { computeAdvantages, groupBreakdown, isConstantGroup } from '../../../src/core/rollouts/advantages';
import { sampleTrainKl, trajectoryToDatum } from '../../../src/core/rollouts/datums';

describe('GRPO advantages', () => {
  it('centres rewards within each group, without dividing by the standard deviation', () => {
    assert.deepStrictEqual(computeAdvantages([[1, 0, 0, 1], [0.5, 0.5], [1, 0, 0, 0]]), [
      [0.5, -0.5, -0.5, 0.5],
      [0, 0],
      [0.75, -0.25, -0.25, -0.25],
    ]);
  });

  it('computes in float32 like the cookbook', () => {
    const [a] = computeAdvantages([[0.1, 0.2, 0.3]]);
    // mean of float32(0.1, 0.2, 0.3) in float32, subtracted in float32
    assert.strictEqual(a![0], Math.fround(Math.fround(0.1) - Math.fround(Math.fround(Math.fround(Math.fround(0.1) + Math.fround(0.2)) + Math.fround(0.3)) / 3)));
  });

  it('classifies groups as mixed, all good (≥ 0.5) or all bad', () => {
    assert.ok(isConstantGroup([0.9, 0.9]));
    assert.ok(!isConstantGroup([0.9, 1]));
    assert.deepStrictEqual(groupBreakdown([[1, 1], [0, 0], [0, 1], [0.5, 0.5]]), { frac_mixed: 0.25, frac_all_good: 0.5, frac_all_bad: 0.25 });
    assert.deepStrictEqual(groupBreakdown([]), { frac_mixed: 0, frac_all_good: 0, frac_all_bad: 0 });
  });
});

describe('GRPO datums', () => {
  it("matches the cookbook's worked example: prompt [1,2,3], action [10,11,12]", () => {
    const d = trajectoryToDatum([1, 2, 3], [10, 11, 12], [-0.1, -0.2, -0.3], 0.5);
    assert.deepStrictEqual(d.modelInput, [1, 2, 3, 10, 11]);
    assert.deepStrictEqual(d.targetTokens, [2, 3, 10, 11, 12]);
    assert.deepStrictEqual(Array.from(d.mask), [0, 0, 1, 1, 1]);
    assert.deepStrictEqual(Array.from(d.advantages), [0, 0, 0.5, 0.5, 0.5]);
    assert.deepStrictEqual(Array.from(d.logprobs), [0, 0, Math.fround(-0.1), Math.fround(-0.2), Math.fround(-0.3)]);
  });

  it('a one-token prompt and a one-token action give a one-position datum', () => {
    const d = trajectoryToDatum([7], [8], [-1], -0.25);
    assert.deepStrictEqual(d.modelInput, [7]);
    assert.deepStrictEqual(d.targetTokens, [8]);
    assert.deepStrictEqual(Array.from(d.advantages), [-0.25]);
  });

  it('refuses mismatched or empty inputs with a message that says what is wrong', () => {
    assert.throws(() => trajectoryToDatum([1], [2, 3], [-1], 0), /2 tokens, 1 log-probs/);
    assert.throws(() => trajectoryToDatum([], [2], [-1], 0), /prompt token/);
    assert.throws(() => trajectoryToDatum([1], [], [], 0), /sampled token/);
  });

  it('KL sample/train and entropy are token-weighted over action tokens only', () => {
    const a = trajectoryToDatum([1, 2], [3, 4], [-1, -2], 1); // positions: [prompt, act, act]
    const b = trajectoryToDatum([1], [5], [-0.5], -1);
    // trainer log-probs: prompt position of `a` is ignored whatever its value
    const kl = sampleTrainKl([a, b], [[-9, -1.5, -2], [-0.25]]);
    // diffs on action tokens: 0.5, 0, -0.25 → v1 = 0.25/3, v2 = 0.5·(0.25+0+0.0625)/3, entropy = 3.5/3
    assert.ok(Math.abs(kl.kl_sample_train_v1 - 0.25 / 3) < 1e-7);
    assert.ok(Math.abs(kl.kl_sample_train_v2 - (0.5 * 0.3125) / 3) < 1e-7);
    assert.ok(Math.abs(kl.entropy - 3.5 / 3) < 1e-6);
    assert.throws(() => sampleTrainKl([a], [[-1]]), /3 positions but 1/);
  });
});
