// metrics.jsonl rows merged into one row per step, the one rule of every reader: a step logged again
// (a resumed run re-ran it) replaces the earlier row whole; a line of only new keys (the cookbook's
// async evaluation line) joins the step's row.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { mergeMetrics, mergeStepRow } from '../../../src/protocol/metricsRows';
import { readMetricsRows, readMetricsRowsSync } from '../../../src/core/runs/runDirectory';
import { RunWriter } from '../../../src/core/runs/runWriter';

describe('metrics rows: one per step', () => {
  it('a re-run step replaces the earlier row whole: exactly one run of the step remains', () => {
    assert.deepStrictEqual(
      mergeMetrics([
        { step: 0, r: 0.1 },
        { step: 1, r: 0.2, 'test/env/all/reward/total': 0.5 },
        { step: 1, r: 0.3 },
      ]),
      [
        { step: 0, r: 0.1 },
        { step: 1, r: 0.3 },
      ],
    );
  });

  it('a line whose keys are all new joins the step (the cookbook logs an async evaluation on a line of its own)', () => {
    assert.deepStrictEqual(
      mergeMetrics([
        { step: 1, r: 0.3, 'async_eval/in_flight': 1 },
        { step: 0, r: 0.1 },
        { step: 1, 'test/env/all/reward/total': 0.2 },
      ]),
      [
        { step: 0, r: 0.1 },
        { step: 1, r: 0.3, 'async_eval/in_flight': 1, 'test/env/all/reward/total': 0.2 },
      ],
    );
  });

  it('merges the webview’s rows (values without a step) by the same rule', () => {
    assert.deepStrictEqual(mergeStepRow(undefined, { a: 1 }), { a: 1 });
    assert.deepStrictEqual(mergeStepRow({ a: 1, b: 2 }, { a: 3 }), { a: 3 });
    assert.deepStrictEqual(mergeStepRow({ a: 1 }, { b: null }), { a: 1, b: null });
  });

  it('reads a run directory’s metrics.jsonl merged, sync and async alike; none without the file', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-metrics-rows-'));
    try {
      const w = RunWriter.create(root, 'run');
      w.appendMetrics(0, { r: 0.1, kl: 0.01 });
      w.appendMetrics(1, { r: 0.2, kl: 0.02 });
      w.appendMetrics(1, { r: 0.25 });
      w.close();
      const want = [
        { step: 0, r: 0.1, kl: 0.01 },
        { step: 1, r: 0.25 },
      ];
      assert.deepStrictEqual(readMetricsRowsSync(w.dir), want);
      assert.deepStrictEqual(await readMetricsRows(w.dir), want);
      assert.deepStrictEqual(readMetricsRowsSync(path.join(root, 'none')), []);
      assert.deepStrictEqual(await readMetricsRows(path.join(root, 'none')), []);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
