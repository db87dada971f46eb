// The group breakdown's pure logic on a large synthetic iteration (1,024 groups × 16 samples):
// classification as the cookbook's by_group metrics, the header's statistics, every filter alone
// and combined, sorting (stable by group), and text search over prompts and completions.
import * as assert from 'assert';
import type { SampleRecord } from '../../../src/core/runs/sampleRecord';
import { PREVIEW_CHARS, summarizeIteration, summarizeSample } from '../../../src/protocol/sampleSchema';
import { bestAndWorst, breakdownStats, buildGroups, classify, NO_FILTER, searchGroups, searchIndex, viewGroups } from '../../../src/protocol/breakdown';
import { groupBreakdown } from '../../../src/core/rollouts/advantages';

const G = 16;
const P = 1024;

/** Group p: every 4th all-good, every 4th+1 all-bad, the rest mixed; every 10th has a reward error; every 7th a truncation. */
function iteration(): SampleRecord[] {
  const out: SampleRecord[] = [];
  for (let p = 0; p < P; p++) {
    for (let t = 0; t < G; t++) {
      const reward = p % 4 === 0 ? 1 : p % 4 === 1 ? 0 : t % 2 === 0 ? 1 : (t % 3) / 4;
      out.push({
        group_idx: p,
        traj_idx: G - 1 - t,
        problem_id: `arith:${p}`,
        prompt: `user: What is ${p} + ${p}?\n`,
        completion: t === 3 && p === 777 ? 'The answer is forty-two' : String(2 * p + (reward === 1 ? 0 : 1)),
        content: String(2 * p),
        ground_truth: String(2 * p),
        completion_tokens: [1, 2, 3],
        logprobs: [-0.1, -0.2, -0.3],
        reward,
        advantage: 0,
        stop_reason: p % 7 === 0 && t === 0 ? 'length' : 'stop',
        termination: 'eos',
        ...(p % 10 === 0 && t === 5 ? { reward_error: { kind: 'exception', message: 'boom', line: 3 } } : {}),
      });
    }
  }
  return out;
}

describe('group breakdown logic', () => {
  const full = iteration();
  const summary = summarizeIteration(full);
  const groups = buildGroups(summary.records, summary.prompts);
  const index = searchIndex(full);

  it('groups samples by group_idx in order, samples by traj_idx; classifies as env/all/by_group does', () => {
    assert.strictEqual(groups.length, P);
    assert.deepStrictEqual(groups[5]!.samples.map((s) => s.traj_idx), [...Array(G).keys()]);
    assert.strictEqual(summary.prompts.length, P, 'one prompt per group');
    assert.strictEqual(groups[513]!.prompt, 'user: What is 513 + 513?\n');
    assert.strictEqual(classify([1, 1]), 'all-good');
    assert.strictEqual(classify([0.5, 0.5]), 'all-good');
    assert.strictEqual(classify([0.25, 0.25]), 'all-bad');
    assert.strictEqual(classify([0, 1]), 'mixed');
    const rewards = groups.map((g) => g.samples.map((s) => s.reward));
    const b = groupBreakdown(rewards);
    const stats = breakdownStats(groups);
    assert.strictEqual(stats.counts.mixed / P, b.frac_mixed);
    assert.strictEqual(stats.counts['all-good'] / P, b.frac_all_good);
    assert.strictEqual(stats.counts['all-bad'] / P, b.frac_all_bad);
  });

  it('header statistics: samples, histogram over the reward range, truncated fraction, reward errors, mean tokens', () => {
    const stats = breakdownStats(groups);
    assert.strictEqual(stats.samples, P * G);
    assert.strictEqual(stats.histogram.min, 0);
    assert.strictEqual(stats.histogram.max, 1);
    assert.strictEqual(stats.histogram.bins.reduce((a, b) => a + b, 0), P * G);
    assert.strictEqual(stats.truncatedFraction, Math.ceil(P / 7) / (P * G));
    assert.strictEqual(stats.rewardErrors, Math.ceil(P / 10));
    assert.strictEqual(stats.meanTokens, 3);
    assert.deepStrictEqual(breakdownStats([]).histogram, { min: 0, max: 0, bins: new Array(10).fill(0) });
  });

  it('filters: by kind, reward error, truncation, text (the host’s search, case-insensitive over prompt and whole completions), combined', () => {
    assert.strictEqual(viewGroups(groups, NO_FILTER, 'index').length, P);
    const mixed = viewGroups(groups, { ...NO_FILTER, kinds: ['mixed'] }, 'index');
    assert.strictEqual(mixed.length, P / 2);
    assert.ok(mixed.every((i) => groups[i]!.kind === 'mixed'));
    assert.strictEqual(viewGroups(groups, { ...NO_FILTER, kinds: ['all-good', 'all-bad'] }, 'index').length, P / 2);
    const errors = viewGroups(groups, { ...NO_FILTER, rewardError: true }, 'index');
    assert.deepStrictEqual(errors.slice(0, 3), [0, 10, 20]);
    assert.strictEqual(viewGroups(groups, { ...NO_FILTER, truncated: true }, 'index').length, Math.ceil(P / 7));
    const text = (t: string) => viewGroups(groups, { ...NO_FILTER, text: t }, 'index', new Set(searchGroups(index, t)));
    assert.deepStrictEqual(text('FORTY-two'), [777]);
    assert.deepStrictEqual(text('what is 513 +'), [513]);
    assert.strictEqual(text('  ').length, P);
    // until the host answers, the text does not filter
    assert.strictEqual(viewGroups(groups, { ...NO_FILTER, text: 'forty' }, 'index').length, P);
    // group 777 is all-bad
    assert.deepStrictEqual(viewGroups(groups, { ...NO_FILTER, kinds: ['mixed'], text: 'forty' }, 'index', new Set(searchGroups(index, 'forty'))), []);
    // errors at p % 10 == 0, truncation at p % 7 == 0, all-good at p % 4 == 0: p ≡ 0 (mod 140)
    assert.deepStrictEqual(viewGroups(groups, { kinds: ['all-good'], rewardError: true, truncated: true, text: '' }, 'index'), [0, 140, 280, 420, 560, 700, 840, 980]);
  });

  it('sorts by mean reward either way, by spread and by reward errors, ties in group order', () => {
    const desc = viewGroups(groups, NO_FILTER, 'reward-desc');
    assert.strictEqual(desc.length, P);
    for (let i = 1; i < desc.length; i++) {
      const a = groups[desc[i - 1]!]!;
      const b = groups[desc[i]!]!;
      assert.ok(a.meanReward > b.meanReward || (a.meanReward === b.meanReward && desc[i - 1]! < desc[i]!));
    }
    assert.deepStrictEqual(viewGroups(groups, NO_FILTER, 'reward-asc').slice(0, 2), [1, 5]);
    assert.strictEqual(groups[viewGroups(groups, NO_FILTER, 'spread-desc')[0]!]!.kind, 'mixed');
    assert.strictEqual(viewGroups(groups, NO_FILTER, 'errors-desc')[0], 0);
  });

  it('the list carries a preview of each completion; the search sees the whole text', () => {
    const long = { ...full[0]!, completion: `step  one\n${'x'.repeat(400)} needle` };
    const s = summarizeSample(long);
    assert.strictEqual(s.preview.length, PREVIEW_CHARS);
    assert.ok(s.preview.startsWith('step one x'));
    assert.strictEqual(s.complete, false);
    assert.ok(!('prompt' in s) && !('completion' in s) && !('content' in s) && !('completion_tokens' in s));
    assert.strictEqual(summarizeSample(full[1]!).complete, true);
    assert.deepStrictEqual(searchGroups(searchIndex([long]), 'NEEDLE'), [0]);
  });

  it('best and worst sample of a group by reward', () => {
    const { best, worst } = bestAndWorst(groups[2]!);
    assert.strictEqual(best.reward, 1);
    assert.strictEqual(worst.reward, 0);
  });
});
