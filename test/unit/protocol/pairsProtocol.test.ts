// The pairs panel's pure part: margins applied by id (start kept, now follows the latest step),
// the orders (mis-ranked first …) and the text filter; and the Compare Runs kind of a DPO run.
import * as assert from 'assert';
import { applyMargins, orderPairs, pairCounts, type PairRow } from '../../../src/protocol/pairsProtocol';
import { runResults } from '../../../src/protocol/compareData';
import { runKindOfConfig } from '../../../src/core/spec/kinds';
import { DPO_KIND } from '../../../src/core/dpo/kind';
import { dpoCharts } from '../../../src/protocol/metricsProtocol';

const row = (line: number, prompt: string, chosen: string, rejected: string): PairRow => ({ id: `pairs.jsonl:${line}`, prompt, chosen, rejected, start: null, now: null, step: null });

describe('pairs panel: margins, order and filter', () => {
  it('applies margins: start from the first measurement, now from the latest step; unknown ids ignored', () => {
    const rows = [row(1, 'What is 1 + 1?', '2', '3'), row(2, 'What is 2 + 2?', '4', '5')];
    applyMargins(rows, [{ id: 'pairs.jsonl:1', split: 'train', start: 0, now: 0, step: 0 }, { id: 'nope:9', split: 'train', start: 1, now: 1, step: 0 }]);
    applyMargins(rows, [{ id: 'pairs.jsonl:1', split: 'train', start: 0.2, now: 0.3, step: 4 }]);
    // an older step read again does not move `now` back
    applyMargins(rows, [{ id: 'pairs.jsonl:1', split: 'train', start: 0.1, now: 0.1, step: 2 }]);
    assert.deepStrictEqual([rows[0]!.start, rows[0]!.now, rows[0]!.step, rows[0]!.split], [0, 0.3, 4, 'train']);
    assert.deepStrictEqual([rows[1]!.start, rows[1]!.now], [null, null]);
    assert.deepStrictEqual(pairCounts(rows), { total: 2, measured: 1, misranked: 0 });
  });

  it('orders mis-ranked first (margin ascending, unmeasured last), best first, by gain, by file line; filters by every word', () => {
    const rows = [row(10, 'What is 3 + 4?', '7', '8'), row(2, 'What is 9 + 9?', '18', '17'), row(3, 'What is 5 + 5?', '10', '11'), row(4, 'unmeasured', 'a', 'b')];
    rows[0]!.start = 0;
    rows[0]!.now = -0.4;
    rows[1]!.start = -0.5;
    rows[1]!.now = 0.5;
    rows[2]!.start = 0;
    rows[2]!.now = 0.1;
    const ids = (rs: PairRow[]) => rs.map((r) => r.id.split(':')[1]);
    assert.deepStrictEqual(ids(orderPairs(rows, 'misranked', '')), ['10', '3', '2', '4']);
    assert.deepStrictEqual(ids(orderPairs(rows, 'margin-desc', '')), ['2', '3', '10', '4']);
    assert.deepStrictEqual(ids(orderPairs(rows, 'change', '')), ['2', '3', '10', '4']);
    assert.deepStrictEqual(ids(orderPairs(rows, 'file', '')), ['2', '3', '4', '10']);
    assert.deepStrictEqual(ids(orderPairs(rows, 'file', '  WHAT  9 ')), ['2']);
    assert.deepStrictEqual(ids(orderPairs(rows, 'file', '11')), ['3'], 'the rejected text is searched too');
    assert.deepStrictEqual(pairCounts(rows), { total: 4, measured: 3, misranked: 1 });
  });
});

describe('Compare Runs and the metrics panel know DPO runs', () => {
  const columns = { steps: [0, 1, 2], cols: { dpo_loss: [0.69, 0.68, 0.66], accuracy: [0.5, 0.6, 0.7], margin: [0, 0.02, 0.05], 'test/accuracy': [0.44, null, 0.68], 'time/total': [1, 2, 3] } };

  it('the kind comes from config.json run_kind (none: GRPO; an unknown one: none); DPO result columns from the DPO kind', () => {
    assert.strictEqual(runKindOfConfig({ run_kind: 'dpo' }), 'dpo');
    assert.strictEqual(runKindOfConfig({ run_kind: 'other' }), undefined);
    assert.strictEqual(runKindOfConfig({}), 'grpo');
    const r = runResults(columns, 'dpo', DPO_KIND.compareColumns);
    const v = r.values;
    assert.deepStrictEqual([v.finalAccuracy, v.finalMargin, v.bestTestAccuracy, v.bestTestAccuracyStep, r.steps, r.wallTime], [0.7, 0.05, 0.68, 2, 3, 6]);
    assert.strictEqual(v.finalTrainReward, undefined, 'no GRPO columns for a DPO run');
    assert.deepStrictEqual(DPO_KIND.compareColumns.map((c) => c.id), ['finalAccuracy', 'finalMargin', 'bestTestAccuracy', 'bestTestAccuracyStep']);
  });

  it('the DPO charts appear when the run logs dpo_loss (chosen NLL when logged)', () => {
    assert.deepStrictEqual(dpoCharts(['reward']), []);
    assert.deepStrictEqual(dpoCharts(['dpo_loss', 'accuracy']).map((c) => c.id), ['dpo-loss', 'dpo-accuracy', 'dpo-margin', 'dpo-rewards']);
    assert.deepStrictEqual(dpoCharts(['dpo_loss', 'chosen_nll']).map((c) => c.id).at(-1), 'dpo-chosen-nll');
  });
});
