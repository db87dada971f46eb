// The inline evaluators' metric keys as the panels read them: the metrics panel finds each
// evaluator from the keys a run logged and gives it a chart (reward, pass@1, pass@n; or its NLL);
// the Compare Runs panel groups them under test/ with the holdout's keys (pass@<n> does not break it).
import * as assert from 'assert';
import { metricGroup, metricKeyGroups } from '../../../src/protocol/compareData';
import { INLINE_EVAL_KEY, inlineEvalsIn } from '../../../src/protocol/metricKeys';
import { inlineEvalCharts } from '../../../src/protocol/metricsProtocol';

const LOGGED = [
  'env/all/reward/total',
  'test/env/all/reward/total',
  'test/env/all/format',
  'test/nll',
  'test/gsm.v2/env/all/reward/total',
  'test/gsm.v2/env/all/pass@1',
  'test/gsm.v2/env/all/pass@10',
  'test/gsm.v2/env/all/pass@4',
  'test/gsm.v2/env/all/format',
  'test/chats/nll',
  'test/only-reward/env/all/reward/total',
];

describe('inline evaluator keys in the panels', () => {
  it('finds each evaluator, its kind and its pass@k, and not the holdout', () => {
    assert.deepStrictEqual(inlineEvalsIn(LOGGED), [
      { name: 'chats', kind: 'nll', passAt: [] },
      { name: 'gsm.v2', kind: 'sampling', passAt: [1, 4, 10] },
      { name: 'only-reward', kind: 'sampling', passAt: [] },
    ]);
    assert.deepStrictEqual(inlineEvalsIn(['test/env/all/reward/total', 'test/env/all/pass@1', 'test/nll', 'train_mean_nll']), []);
  });

  it('gives the metrics panel one chart per evaluator: reward, pass@1 and its largest pass@n; NLL alone', () => {
    const charts = inlineEvalCharts(LOGGED);
    assert.deepStrictEqual(
      charts.map((c) => [c.id, c.title, c.series.map((s) => [s.key, s.label])]),
      [
        ['eval-chats', 'Evaluator chats: NLL', [['test/chats/nll', 'nll']]],
        ['eval-gsm.v2', 'Evaluator gsm.v2', [['test/gsm.v2/env/all/reward/total', 'reward'], ['test/gsm.v2/env/all/pass@1', 'pass@1'], ['test/gsm.v2/env/all/pass@10', 'pass@10']]],
        ['eval-only-reward', 'Evaluator only-reward', [['test/only-reward/env/all/reward/total', 'reward']]],
      ],
    );
    assert.strictEqual(INLINE_EVAL_KEY.passAt('gsm.v2', 10), 'test/gsm.v2/env/all/pass@10');
  });

  it('groups them under test/ in the Compare Runs panel, next to the holdout', () => {
    for (const k of LOGGED.filter((k) => k.startsWith('test/'))) assert.strictEqual(metricGroup(k), 'test/', k);
    const groups = metricKeyGroups([{ steps: [0], cols: Object.fromEntries(LOGGED.map((k) => [k, [1]])) }]);
    assert.deepStrictEqual(groups.map((g) => g.group), ['env/', 'test/']);
    assert.deepStrictEqual(groups[1]!.keys, LOGGED.filter((k) => k.startsWith('test/')).sort());
  });
});
