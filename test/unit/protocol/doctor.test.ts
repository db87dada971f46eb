// The run doctor's rules on recorded metric series: each finding fires on the evidence it names,
// stays silent when the evidence is thin, and healthy runs get no advice.
import * as assert from 'assert';
import { diagnoseIteration, diagnoseMetrics } from '../../../src/protocol/doctor';

/** Metric series as metrics.jsonl rows would give them. */
function run(rows: Array<Record<string, number>>) {
  const steps = rows.map((_, i) => i);
  return { steps, series: (key: string) => rows.map((r) => (key in r ? r[key]! : null)) };
}

const ids = (f: Array<{ id: string }>) => f.map((x) => x.id).sort();

describe('run doctor', () => {
  it('a healthy run (mixed groups, rising reward, modest KL) gets no findings', () => {
    const r = run(Array.from({ length: 12 }, (_, i) => ({ 'env/all/reward/total': 0.3 + 0.04 * i, 'env/all/by_group/frac_all_bad': 0.2, 'env/all/by_group/frac_all_good': 0.2, 'env/all/frac_truncated': 0.02, 'optim/kl_sample_train_v1': 0.002 + 0.0001 * (i % 3) })));
    assert.deepStrictEqual(diagnoseMetrics(r.steps, r.series), []);
  });

  it('mostly ALL-0 groups, with the truncated fraction as evidence, and many truncated samples', () => {
    const r = run(Array.from({ length: 6 }, () => ({ 'env/all/by_group/frac_all_bad': 0.75, 'env/all/by_group/frac_all_good': 0, 'env/all/frac_truncated': 0.4 })));
    const f = diagnoseMetrics(r.steps, r.series);
    assert.deepStrictEqual(ids(f), ['mostly-all-bad', 'truncation']);
    assert.match(f.find((x) => x.id === 'mostly-all-bad')!.evidence, /75% of groups .* 40% of samples were cut off/);
  });

  it('mostly ALL-1 groups', () => {
    const r = run(Array.from({ length: 5 }, () => ({ 'env/all/by_group/frac_all_good': 0.9, 'env/all/by_group/frac_all_bad': 0 })));
    assert.deepStrictEqual(ids(diagnoseMetrics(r.steps, r.series)), ['mostly-all-good']);
  });

  it('a KL spike against the run’s own median', () => {
    const kl = [0.002, 0.0021, 0.0019, 0.002, 0.0022, 0.002, 0.03];
    const r = run(kl.map((v) => ({ 'optim/kl_sample_train_v1': v })));
    const f = diagnoseMetrics(r.steps, r.series);
    assert.deepStrictEqual(ids(f), ['kl-spike']);
    assert.match(f[0]!.evidence, /15× its median of 0\.0020/);
  });

  it('flat reward with a tiny KL', () => {
    const r = run(Array.from({ length: 12 }, (_, i) => ({ 'env/all/reward/total': 0.41 + (i % 2) * 0.005, 'optim/kl_sample_train_v1': 2e-6 })));
    assert.deepStrictEqual(ids(diagnoseMetrics(r.steps, r.series)), ['flat-reward-tiny-kl']);
  });

  it('no advice on thin evidence: two iterations, or NaN-only series', () => {
    const two = run([{ 'env/all/by_group/frac_all_bad': 1 }, { 'env/all/by_group/frac_all_bad': 1 }]);
    assert.deepStrictEqual(diagnoseMetrics(two.steps, two.series), []);
    const nan = run(Array.from({ length: 8 }, () => ({ 'optim/kl_sample_train_v1': NaN })));
    assert.deepStrictEqual(diagnoseMetrics(nan.steps, nan.series), []);
  });

  it('an iteration’s samples: reward errors above 5% come first; too few samples say nothing', () => {
    const f = diagnoseIteration({ groups: 16, samples: 128, allBad: 12, allGood: 0, rewardErrors: 10, truncatedFraction: 0 });
    assert.deepStrictEqual(f.map((x) => x.id), ['reward-errors', 'mostly-all-bad']);
    assert.match(f[0]!.evidence, /10 of 128 samples \(8%\)/);
    assert.deepStrictEqual(diagnoseIteration({ groups: 2, samples: 4, allBad: 2, allGood: 0, rewardErrors: 4, truncatedFraction: 1 }), []);
    assert.deepStrictEqual(diagnoseIteration({ groups: 16, samples: 128, allBad: 2, allGood: 2, rewardErrors: 1, truncatedFraction: 0.01 }), []);
  });

  it('a distillation run without a reward (all samples 0 by design, teacher_kl logged) gets no group or flat-reward findings; with a reward it does', () => {
    assert.deepStrictEqual(diagnoseIteration({ groups: 16, samples: 64, allBad: 16, allGood: 0, rewardErrors: 0, truncatedFraction: 0, rewardless: true }), []);
    assert.deepStrictEqual(ids(diagnoseIteration({ groups: 16, samples: 64, allBad: 16, allGood: 0, rewardErrors: 0, truncatedFraction: 0 })), ['mostly-all-bad']);
    const rows = Array.from({ length: 12 }, () => ({ 'env/all/reward/total': 0, 'env/all/by_group/frac_all_bad': 1, 'env/all/by_group/frac_all_good': 0, 'env/all/frac_truncated': 0, 'optim/kl_sample_train_v1': 1e-8, teacher_kl: 0.2 }));
    const distill = run(rows);
    assert.deepStrictEqual(diagnoseMetrics(distill.steps, distill.series), []);
    // the same metrics without teacher_kl: a GRPO run whose reward never moved
    const grpo = run(rows.map(({ teacher_kl: _, ...r }) => r));
    assert.deepStrictEqual(ids(diagnoseMetrics(grpo.steps, grpo.series)), ['flat-reward-tiny-kl', 'mostly-all-bad']);
  });

  describe('episodes (an environment run’s iteration)', () => {
    const base = { groups: 8, samples: 32, allBad: 1, allGood: 1, rewardErrors: 0, truncatedFraction: 0 };
    const healthy = { episodes: 32, maxTurns: 2, replies: 64, parseErrors: 1, envErrors: 0 };

    it('healthy episodes (few at max_turns, rare parse errors, no env error) get no finding', () => {
      assert.deepStrictEqual(diagnoseIteration({ ...base, episodes: healthy }), []);
    });

    it('many episodes at max_turns: the count and share, and what to change', () => {
      const f = diagnoseIteration({ ...base, episodes: { ...healthy, maxTurns: 12 } });
      assert.deepStrictEqual(ids(f), ['episodes-max-turns']);
      assert.match(f[0]!.evidence, /12 of 32 episodes \(38%\) ended at max_turns/);
      assert.match(f[0]!.remedy, /max_turns/);
      // just under the threshold: nothing
      assert.deepStrictEqual(diagnoseIteration({ ...base, episodes: { ...healthy, maxTurns: 9 } }), []);
    });

    it('frequent parse failures: the share of replies and the first error', () => {
      const f = diagnoseIteration({ ...base, episodes: { ...healthy, parseErrors: 8, firstParseError: 'tool call did not parse: not JSON' } });
      assert.deepStrictEqual(ids(f), ['parse-errors']);
      assert.match(f[0]!.evidence, /8 of 64 replies \(13%\) failed to parse; first: tool call did not parse: not JSON/);
      assert.deepStrictEqual(diagnoseIteration({ ...base, episodes: { ...healthy, parseErrors: 6 } }), [], '9% is under the threshold');
    });

    it('any env error is a finding naming the error and the file and line, first, and replaces the reward-error one', () => {
      const f = diagnoseIteration({ ...base, allBad: 6, rewardErrors: 4, episodes: { ...healthy, envErrors: 4, firstEnvError: { kind: 'exception', message: "step (turn 1): KeyError: 'y'", line: 19 }, envFile: 'arith_tools.env.py' } });
      assert.deepStrictEqual(f.map((x) => x.id), ['env-errors', 'mostly-all-bad']);
      assert.strictEqual(f[0]!.evidence, "4 of 32 episodes (13%) ended with an env error and scored 0; first at arith_tools.env.py:19: exception: step (turn 1): KeyError: 'y'.");
      assert.match(f[0]!.remedy, /^Fix arith_tools\.env\.py:19 /);
      // one error in a thin iteration still speaks (it is a bug); the other episode rules wait for evidence
      const thin = diagnoseIteration({ groups: 1, samples: 2, allBad: 1, allGood: 0, rewardErrors: 1, truncatedFraction: 0, episodes: { episodes: 2, maxTurns: 2, replies: 2, parseErrors: 2, envErrors: 1, firstEnvError: { kind: 'timeout', message: 'step (turn 1): took longer than 10000 ms' } } });
      assert.deepStrictEqual(ids(thin), ['env-errors']);
      assert.match(thin[0]!.evidence, /first at the env file: timeout: /);
    });
  });
});
