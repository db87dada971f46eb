// The per-token KL advantages against hand computations: grpo-reference §1.7's penalty to a reference
// model (re-centred on the batch mean, optionally discounted) and on-policy distillation's reverse KL
// to a teacher (not re-centred, per-dataset metrics).
import * as assert from 'assert';
import { trajectoryToDatum } from '../../../src/core/rollouts/datums';
import { alignToDatum, applyReferenceKlPenalty, applyTeacherKl, discountedFutureSum, scoreSampled } from '../../../src/core/grpo/klAdvantages';

const close = (a: ArrayLike<number>, b: readonly number[], eps = 1e-6) => {
  assert.strictEqual(a.length, b.length, `length ${a.length} vs ${b.length}`);
  for (let i = 0; i < b.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) < eps, `at ${i}: ${Array.from(a).join(', ')} vs ${b.join(', ')}`);
};

describe('KL advantages', () => {
  it('discounted future sum: x_t + γ·x_{t+1} + γ²·x_{t+2} …', () => {
    close(discountedFutureSum([1, 2, 3], 0.5), [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3]);
    close(discountedFutureSum([1, 2, 3], 0), [1, 2, 3]);
    close(discountedFutureSum([], 0.9), []);
  });

  it('§1.7: β·mask·(δ̄ − δ_t) over the batch, prompt positions untouched, kl_policy_base = δ̄', () => {
    // a: prompt [1,2] action [3,4] → positions [prompt, act, act]; b: prompt [1] action [5] → [act]
    const a = trajectoryToDatum([1, 2], [3, 4], [-1, -2], 0.5);
    const b = trajectoryToDatum([1], [5], [-0.5], -0.5);
    // reference log-probs aligned with the positions; the prompt position's value must not count
    const refA = [-7, -1.5, -1];
    const refB = [-1.5];
    // δ: a → [0, 0.5, -1], b → [1]; δ̄ = 0.5 / 3
    const m = applyReferenceKlPenalty([a, b], [refA, refB], 2, 0);
    const mean = 0.5 / 3;
    close([m['kl_policy_base']!], [mean]);
    close(a.advantages, [0, 0.5 + 2 * (mean - 0.5), 0.5 + 2 * (mean + 1)]);
    close(b.advantages, [-0.5 + 2 * (mean - 1)]);
    // re-centred: the penalty sums to zero over the batch's action tokens
    const added = [2 * (mean - 0.5), 2 * (mean + 1), 2 * (mean - 1)];
    assert.ok(Math.abs(added.reduce((s, v) => s + v, 0)) < 1e-6);
  });

  it('§1.7 with discounting: the penalty becomes a discounted future sum within each datum', () => {
    const a = trajectoryToDatum([1, 2], [3, 4], [-1, -2], 0);
    const b = trajectoryToDatum([1], [5], [-0.5], 0);
    applyReferenceKlPenalty([a, b], [[0, -1.5, -1], [-1.5]], 1, 0.5);
    const mean = 0.5 / 3;
    const k = [0, mean - 0.5, mean + 1]; // masked position 0 contributes 0 but still receives the future sum
    close(a.advantages, [k[0]! + 0.5 * k[1]! + 0.25 * k[2]!, k[1]! + 0.5 * k[2]!, k[2]!]);
    close(b.advantages, [mean - 1]);
  });

  it('§1.7 on a batch with no action token changes nothing and reports NaN', () => {
    const a = trajectoryToDatum([1, 2], [3], [-1], 0);
    a.mask.fill(0);
    const before = Array.from(a.advantages);
    const m = applyReferenceKlPenalty([a], [[0, -3]], 1, 0);
    assert.ok(Number.isNaN(m['kl_policy_base']));
    assert.deepStrictEqual(Array.from(a.advantages), before);
  });

  it('distillation: −β·mask·(ℓ_samp − ℓ_teacher) added to the reward advantage, not re-centred; teacher_kl per dataset', () => {
    const a = trajectoryToDatum([1, 2], [3, 4], [-1, -2], 0.25);
    const b = trajectoryToDatum([1], [5], [-0.5], 0);
    const c = trajectoryToDatum([9], [6, 7], [-0.1, -0.2], 0);
    const m = applyTeacherKl([a, b, c], [alignToDatum(2, [-1.5, -1]), alignToDatum(1, [-1.5]), alignToDatum(1, [-0.1, -0.4])], [0, 1, 0], 1.5, 0);
    // reverse KL per token: a → [0.5, -1], b → [1], c → [0, 0.2]
    close(a.advantages, [0, 0.25 - 1.5 * 0.5, 0.25 + 1.5 * 1]);
    close(b.advantages, [-1.5 * 1]);
    close(c.advantages, [0, -1.5 * 0.2]);
    close([m['teacher_kl']!], [(0.5 - 1 + 1 + 0 + 0.2) / 5]);
    close([m['teacher_kl/dataset_0']!], [(0.5 - 1 + 0.2) / 4]);
    close([m['teacher_kl/dataset_1']!], [1]);
    assert.deepStrictEqual(Object.keys(m), ['teacher_kl', 'teacher_kl/dataset_0', 'teacher_kl/dataset_1']);
  });

  it('distillation with discounting and a masked-out token', () => {
    const a = trajectoryToDatum([1], [3, 4, 5], [-1, -2, -3], 0);
    a.mask[1] = 0; // e.g. a parse-error token: no KL there, but earlier tokens still see later ones
    applyTeacherKl([a], [[-2, -9, -1]], [0], 1, 0.9);
    const k = [-(-1 - -2), 0, -(-3 - -1)]; // [-1, 0, 2]
    close(a.advantages, [k[0]! + 0.9 * k[1]! + 0.81 * k[2]!, k[1]! + 0.9 * k[2]!, k[2]!]);
  });

  it('refuses arrays that do not line up with the datums', () => {
    const a = trajectoryToDatum([1, 2], [3], [-1], 0);
    assert.throws(() => applyTeacherKl([a], [[-1]], [0], 1, 0), /2 positions but 1 teacher/);
    assert.throws(() => applyReferenceKlPenalty([a], [], 1, 0), /1 datums but 0 reference/);
    assert.throws(() => applyTeacherKl([a], [[0, -1]], [], 1, 0), /dataset indices/);
  });

  it("scoreSampled keeps compute_logprobs' entries of the sampled tokens", async () => {
    const scorer = { computeLogprobs: async (t: readonly number[]) => t.map((x, i) => (i === 0 ? null : -x / 10)) };
    assert.deepStrictEqual(await scoreSampled(scorer, [1, 2, 3], [4, 5]), [-0.4, -0.5]);
    await assert.rejects(scoreSampled({ computeLogprobs: async () => [null, -1] }, [1, 2], [3]), /2 log-probs for 3 tokens/);
  });
});
