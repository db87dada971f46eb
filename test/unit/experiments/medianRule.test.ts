// The median stopping rule on recorded curves (experiments-reference.md).
import * as assert from 'assert';
import { bestUpTo, median, medianStops, CurveRun } from '../../../src/core/experiments/medianRule';

const M = { name: 'r', goal: 'maximize' as const };
const rule = { min_iter: 2, min_runs: 3 };
const curve = (id: string, values: number[], completed = false): CurveRun => ({ id, rows: values.map((r, step) => ({ step, r })), completed });

describe('sweeps: median stopping rule', () => {
  it('median and best-so-far', () => {
    assert.strictEqual(median([3, 1, 2]), 2);
    assert.strictEqual(median([4, 1, 2, 3]), 2.5);
    assert.strictEqual(bestUpTo(curve('a', [0.1, 0.5, 0.2]).rows, M, 2), 0.5);
    assert.strictEqual(bestUpTo(curve('a', [0.1, 0.5, 0.2]).rows, { name: 'r', goal: 'minimize' }, 2), 0.1);
  });

  it('a run worse than the median of the others at step s is stopped; one at or above it is not', () => {
    const others = [curve('b', [0.3, 0.4, 0.5]), curve('c', [0.2, 0.6, 0.6]), curve('d', [0.1, 0.2, 0.7])];
    // medians of best-so-far at s=2: b 0.5, c 0.6, d 0.7 → 0.6
    assert.strictEqual(medianStops(curve('a', [0.1, 0.2, 0.55]), others, 2, M, rule), true);
    assert.strictEqual(medianStops(curve('a', [0.1, 0.6, 0.1]), others, 2, M, rule), false, 'equal to the median: kept');
    assert.strictEqual(medianStops(curve('a', [0.1, 0.2, 0.55]), others, 1, M, rule), false, 'before min_iter nothing stops');
  });

  it('too few runs at that step → nothing stopped; runs that have not reached s do not count', () => {
    const others = [curve('b', [0.9, 0.9, 0.9]), curve('c', [0.9, 0.9, 0.9]), curve('d', [0.9, 0.9])];
    assert.strictEqual(medianStops(curve('a', [0, 0, 0]), others.slice(0, 2), 2, M, rule), false);
    assert.strictEqual(medianStops(curve('a', [0, 0, 0]), others, 2, M, rule), false, 'd has not reached step 2');
    assert.strictEqual(medianStops(curve('a', [0, 0, 0]), others, 1, M, { min_iter: 1, min_runs: 3 }), true);
  });

  it('runs that completed before s count with their value at s; stopped or unfinished ones only where they reached', () => {
    const others = [curve('b', [0.9, 0.9, 0.9, 0.9]), curve('c', [0.9, 0.9, 0.9, 0.9]), curve('d', [0.1, 0.8], true)];
    // at s=3: b 0.9, c 0.9, d (finished at step 1) 0.8 → median 0.9
    assert.strictEqual(medianStops(curve('a', [0.5, 0.5, 0.5, 0.85]), others, 3, M, rule), true);
    assert.strictEqual(medianStops(curve('a', [0.5, 0.5, 0.5, 0.85]), others.slice(0, 2).concat(curve('d', [0.1, 0.8], false)), 3, M, rule), false, 'unfinished and behind: does not count');
    // three runs stopped early at step 0 with a collapsed value: at s=2 only the two completed runs vote
    const collapsed = [curve('b', [0.9, 0.9, 0.9], true), curve('c', [0.9, 0.9, 0.9], true), curve('s1', [0]), curve('s2', [0]), curve('s3', [0])];
    assert.strictEqual(medianStops(curve('a', [0.5, 0.5, 0.5]), collapsed, 2, M, { min_iter: 1, min_runs: 2 }), true, 'the stopped runs do not vote at step 2');
    assert.strictEqual(medianStops(curve('a', [0.5, 0.5, 0.5]), collapsed, 0, M, { min_iter: 0, min_runs: 2 }), false, 'at step 0, which they reached, they do');
  });

  it('minimize: a run above the median is stopped', () => {
    const N = { name: 'r', goal: 'minimize' as const };
    const others = [curve('b', [2, 1]), curve('c', [2, 1.2]), curve('d', [2, 1.4])];
    assert.strictEqual(medianStops(curve('a', [2, 1.5]), others, 1, N, { min_iter: 1, min_runs: 3 }), true);
    assert.strictEqual(medianStops(curve('a', [2, 1.1]), others, 1, N, { min_iter: 1, min_runs: 3 }), false);
  });

  it('a run without the metric yet is not stopped', () => {
    const others = [curve('b', [1, 1]), curve('c', [1, 1]), curve('d', [1, 1])];
    assert.strictEqual(medianStops({ id: 'a', rows: [{ step: 0 }, { step: 1 }] }, others, 1, M, { min_iter: 0, min_runs: 3 }), false);
  });
});
