// The one-line description and the baseline lines of an eval results folder (the Runs view's row).
import * as assert from 'assert';
import { EvalSummary, TargetSummary } from '../../../src/core/evals/results';
import { baselineComparisonLines, describeEvalResults } from '../../../src/core/evals/table';

function target(id: string, label: string): TargetSummary {
  const e = { value: 0.5, lo: 0.4, hi: 0.6 };
  return { id, label, source: { kind: 'base', model: label }, model: label, problems: 1029, samples: 4116, n: 4, metrics: { reward: e, pass_at: { 'pass@1': e }, stop_rate: e, completion_tokens: e }, reward_errors: 0 };
}

function summary(over: Partial<EvalSummary> = {}): EvalSummary {
  return EvalSummary.parse({
    kind: 'eval',
    version: 1,
    name: 'holdout',
    spec_file: '/w/holdout.eval.json',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    complete: true,
    n: 4,
    correct_threshold: 0.5,
    bootstrap: { resamples: 1000, seed: 0 },
    baseline: 'base',
    targets: [target('base', 'arith-gpt'), target('c40', 'demo/000040'), target('c80', 'demo/000080')],
    comparisons: [
      { target: 'c40', baseline: 'base', problems: 1029, diff: { value: 0.1234, lo: 0.1, hi: 0.15 }, p_value: 0.0004, permutations: 10000, exact: false, wins: 200, losses: 31, ties: 798 },
      { target: 'c80', baseline: 'base', problems: 1029, diff: { value: -0.01, lo: -0.03, hi: 0.011 }, p_value: 0.31, permutations: 10000, exact: false, wins: 40, losses: 52, ties: 937 },
    ],
    problems: Array.from({ length: 1029 }, (_, i) => ({ problem_id: String(i), question: 'q', ground_truth: 'a', targets: {} })),
    ...over,
  });
}

describe('eval results row text', () => {
  it('describes a folder as targets · problems (thousands separated) · n, and says when it is incomplete', () => {
    assert.strictEqual(describeEvalResults(summary()), '3 targets · 1,029 problems · n=4');
    assert.strictEqual(describeEvalResults(summary({ complete: false, targets: [target('base', 'm')], problems: [{ problem_id: '1', question: 'q', ground_truth: 'a', targets: {} }], n: 1 })), '1 target · 1 problem · n=1 · incomplete');
  });

  it('gives one line per target against the baseline, with the interval, p-value and wins/losses/ties', () => {
    assert.deepStrictEqual(baselineComparisonLines(summary()), [
      'demo/000040 vs arith-gpt: reward +0.123 [0.100, 0.150] on 1029 problems, p < 0.001; 200 better, 31 worse, 798 tied',
      'demo/000080 vs arith-gpt: reward -0.010 [-0.030, 0.011] on 1029 problems, p = 0.310; 40 better, 52 worse, 937 tied',
    ]);
  });
});
