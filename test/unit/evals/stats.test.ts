// Evaluation statistics against brute force and hand-computed tables (docs/experiments-reference.md).
import * as assert from 'assert';
import { bootstrapMean, bootstrapMeans, mean, compareWithTolerance, FLOAT_TOLERANCE, mcnemarExact, pairedComparison, passAtK, signFlipTest, winsLossesTies } from '../../../src/core/evals/stats';
import type { EvalSummary } from '../../../src/core/evals/results';
import { regressedProblems } from '../../../src/core/evals/table';

/** pass@k by enumeration: the share of k-subsets of n samples (c correct) holding at least one correct sample. */
function bruteForcePassAtK(n: number, c: number, k: number): number {
  let subsets = 0;
  let hit = 0;
  for (let mask = 0; mask < 1 << n; mask++) {
    let bits = 0;
    let anyCorrect = false;
    for (let i = 0; i < n; i++) if (mask & (1 << i)) { bits++; if (i < c) anyCorrect = true; }
    if (bits !== k) continue;
    subsets++;
    if (anyCorrect) hit++;
  }
  return hit / subsets;
}

describe('eval statistics', () => {
  it('pass@k equals the brute-force share of k-subsets with a correct sample, for every n ≤ 10, c, k', () => {
    for (let n = 1; n <= 10; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++) {
          const want = bruteForcePassAtK(n, c, k);
          assert.ok(Math.abs(passAtK(n, c, k) - want) < 1e-12, `n=${n} c=${c} k=${k}: ${passAtK(n, c, k)} vs ${want}`);
        }
    assert.strictEqual(passAtK(4, 1, 1), 0.25, 'pass@1 is the fraction correct');
    assert.throws(() => passAtK(4, 1, 5), /k ≤ n/);
  });

  it('bootstrap: a constant has a zero-width interval; {0, 1} resampled gives the 0..1 interval; seeded and repeatable', () => {
    assert.deepStrictEqual(bootstrapMean([0.3, 0.3, 0.3]), { value: 0.3, lo: 0.3, hi: 0.3 });
    // means of 2 draws from {0, 1} are 0, ½, 1 with probabilities ¼, ½, ¼: the 2.5th and 97.5th percentiles are 0 and 1
    const two = bootstrapMean([0, 1], { resamples: 4000, seed: 7 });
    assert.deepStrictEqual(two, { value: 0.5, lo: 0, hi: 1 });
    const xs = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 1 : 0));
    const a = bootstrapMean(xs, { seed: 3 });
    assert.deepStrictEqual(a, bootstrapMean(xs, { seed: 3 }));
    // 0/1 values with p = ¼ over 200 problems: standard error √(¼·¾/200) ≈ 0.0306, so the interval is about ±0.06
    assert.ok(a.lo! < 0.25 && a.hi! > 0.25 && a.hi! - a.lo! > 0.09 && a.hi! - a.lo! < 0.15, JSON.stringify(a));
    assert.deepStrictEqual(bootstrapMean([1]), { value: 1 }, 'no interval from one problem');
  });

  it('sign-flip test: exact tables by hand, and the random draw near the exact value', () => {
    // ±1 ±2 ±3: sums 6 4 2 0 0 −2 −4 −6; |s| ≥ 6 in 2 of 8
    assert.deepStrictEqual(signFlipTest([1, 2, 3]), { p: 0.25, permutations: 8, exact: true });
    // four ±1 with observed sum 2: |s| ≥ 2 for 1 + 4 + 4 + 1 of 16 sign vectors
    assert.deepStrictEqual(signFlipTest([1, 1, 1, -1]), { p: 10 / 16, permutations: 16, exact: true });
    assert.strictEqual(signFlipTest([0, 0]).p, 1);
    const d = [0.5, 0.25, -0.25, 0.75, 1, 0.5, -0.5, 0.25, 0.75, 0, 0.5, 1, -0.25, 0.5];
    const exact = signFlipTest(d, { permutations: 2 ** 14 });
    assert.ok(exact.exact);
    const drawn = signFlipTest(d, { permutations: 10000, seed: 1 });
    assert.ok(!drawn.exact && drawn.permutations === 10000);
    assert.ok(Math.abs(drawn.p - exact.p) < 0.01, `${drawn.p} vs exact ${exact.p}`);
    // twelve equal differences: only the all-same-sign vectors reach it, 2/4096; drawn with M = 1000 < 4096
    const twelve = signFlipTest(Array(12).fill(1), { permutations: 1000, seed: 2 });
    assert.ok(twelve.p >= 1 / 1001 && twelve.p <= 6 / 1001, String(twelve.p));
  });

  it('exact McNemar against hand-computed binomial tails', () => {
    assert.ok(Math.abs(mcnemarExact(5, 1) - 14 / 64) < 1e-15); // 2·(1 + 6)/2^6
    assert.ok(Math.abs(mcnemarExact(10, 2) - 158 / 4096) < 1e-15); // 2·(1 + 12 + 66)/2^12
    assert.strictEqual(mcnemarExact(3, 3), 1);
    assert.strictEqual(mcnemarExact(0, 0), 1);
    assert.ok(Math.abs(mcnemarExact(0, 7) - 2 / 128) < 1e-15);
  });

  it('paired comparison: per-problem differences, wins/losses/ties, McNemar from correctness', () => {
    const a = [1, 1, 0.5, 0, 1];
    const b = [0, 1, 0, 0.5, 0];
    const r = pairedComparison(a, b, { seed: 1, correct: { a: [true, true, true, false, true], b: [false, true, false, true, false] } });
    assert.strictEqual(r.diff.value, (1 + 0 + 0.5 - 0.5 + 1) / 5);
    assert.deepStrictEqual(winsLossesTies(a, b), { wins: 3, losses: 1, ties: 1 });
    assert.deepStrictEqual([r.wins, r.losses, r.ties], [3, 1, 1]);
    assert.strictEqual(r.mcnemar_p, mcnemarExact(3, 1));
    assert.ok(r.exact && r.permutations === 32);
    assert.throws(() => pairedComparison([1], [1, 2]), /same problems/);
  });

  it('equal values summed in another order are ties, not wins or losses, nor regressed problems (one tolerance, the permutation test\'s)', () => {
    const x = (0.1 + 0.2 + 0.3) / 3; // 0.20000000000000004
    const y = (0.3 + 0.2 + 0.1) / 3; // 0.19999999999999998
    assert.notStrictEqual(x, y, 'the premise: the two orders differ in the last bit');
    const summary = {
      baseline: 'base',
      problems: [
        { problem_id: 'p0', question: '', ground_truth: '', targets: { base: { reward: x, correct: 0, samples: 3 }, tuned: { reward: y, correct: 0, samples: 3 } } },
        { problem_id: 'p1', question: '', ground_truth: '', targets: { base: { reward: 1, correct: 1, samples: 3 }, tuned: { reward: 0.5, correct: 1, samples: 3 } } },
      ],
    } as unknown as EvalSummary;
    const r = pairedComparison([x, y, 1], [y, x, 0], { seed: 1 });
    assert.deepStrictEqual([r.wins, r.losses, r.ties], [1, 0, 2]);
    assert.deepStrictEqual(regressedProblems(summary, 'tuned').map((p) => p.row.problem_id), ['p1']);
    assert.strictEqual(compareWithTolerance(x, y), 0);
    assert.strictEqual(compareWithTolerance(y, x), 0);
    assert.strictEqual(compareWithTolerance(0.5, 0.4), 1);
    assert.ok(FLOAT_TOLERANCE > 0 && FLOAT_TOLERANCE < 1e-9);
  });

  it('one resampling of the problems serves every statistic: equal columns get equal intervals; one column equals bootstrapMean', () => {
    const xs = [0, 1, 1, 0, 1, 0.5, 0, 1, 1, 1];
    const [a, b, c] = bootstrapMeans([xs, xs, xs.map((x) => 2 * x)], { seed: 5, resamples: 3000 });
    assert.deepStrictEqual(a, b);
    assert.deepStrictEqual(a, bootstrapMean(xs, { seed: 5, resamples: 3000 }));
    assert.ok(Math.abs(c!.lo! - 2 * a!.lo!) < 1e-12 && Math.abs(c!.hi! - 2 * a!.hi!) < 1e-12, 'the same draws: a scaled column gets the scaled interval');
    // a column without a value on some problems (NaN): its mean over the problems that have one
    const partial = bootstrapMeans([xs, xs.map((x, i) => (i < 3 ? NaN : x))], { seed: 5 })[1]!;
    assert.strictEqual(partial.value, mean(xs.slice(3)));
    assert.ok(partial.lo! <= partial.value && partial.value <= partial.hi!);
    assert.deepStrictEqual(bootstrapMeans([[1], [2]]), [{ value: 1 }, { value: 2 }]);
  });
});
