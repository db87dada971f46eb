// A sweep's budget and its dollars on the embedded engine (real HTTP, the random byte-level model, a
// real Python reward), with a non-zero price table for the engine's model set by the test: the runs
// share `max_cost_usd` (no step is started that would take the sweep's total over it; a run stopped by
// it keeps a resume point; no later run starts), running the sweep again with a higher budget finishes
// every run with no step lost or repeated, and the median rule reports the dollars it saved (the
// predicted cost of the steps the stopped runs did not take).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { PriceTable } from '../../../src/core/cost/prices';
import { runSweep } from '../../../src/core/experiments/runSweep';
import { startGrpoRun } from '../../../src/core/grpo/start';
import { readMetricsRowsSync } from '../../../src/core/runs/runDirectory';
import { ServiceClient } from '../../../src/core/tinker/client';
import { METRIC } from '../../../src/protocol/metricKeys';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { readCheckpointLines, startTestEngine, TestEngine, writeReward } from '../grpo/engineFixture';

const PRICES: PriceTable = { taken: '2026-11-28', source: 'test table', storage_usd_per_gb_month: 0, models: { [RANDOM_MODEL]: { prefill: 1000, sample: 3000, train: 2000 } } };

const lastOf = (runDir: string, key: string): number | undefined => {
  const rows = readMetricsRowsSync(runDir);
  const v = rows.at(-1)?.[key];
  return typeof v === 'number' ? v : undefined;
};

describe('sweep budget: shared by its runs, resumed with a higher one; dollars saved by early stopping', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sweep-budget-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n{"question":"What is 3 + 3?","answer":6}\n');
    writeReward(dir);
    fs.writeFileSync(
      path.join(dir, 'base.grpo.json'),
      JSON.stringify({ model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.001, groups_per_batch: 2, group_size: 2, max_tokens: 3, iterations: 3, save_every: 0, eval_every: 0, sampling_seed: 5, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 } }),
    );
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
  const cacheDir = () => path.join(dir, 'cache');

  it('stops its runs before the shared max_cost_usd (resume points kept, no later run started), and finishes when run again with a higher one', async () => {
    // one step of the base spec, to size the budget: about four and a half steps of the sweep's nine
    const base = JSON.parse(fs.readFileSync(path.join(dir, 'base.grpo.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'probe.grpo.json'), JSON.stringify({ ...base, iterations: 1 }));
    const probe = await startGrpoRun({ specFile: path.join(dir, 'probe.grpo.json'), runsDir: path.join(dir, 'probe'), cacheDir: cacheDir(), connect, prices: PRICES });
    const stepUsd = readMetricsRowsSync(probe.runDir)[0]![METRIC.costStep] as number;
    assert.ok(stepUsd > 0, 'a step costs something at these prices');
    const budget = 4.5 * stepUsd;
    const file = path.join(dir, 'shared.sweep.json');
    const sweep = (max: number) =>
      fs.writeFileSync(file, JSON.stringify({ base: 'base.grpo.json', method: 'grid', parameters: { learning_rate: { values: [0.003, 0.002, 0.001] } }, metric: { name: 'env/all/reward/total', goal: 'maximize' }, max_cost_usd: max }));
    sweep(budget);
    const runsDir = path.join(dir, 'runs-shared');
    const lines: string[] = [];
    const r = await runSweep({ sweepFile: file, runsDir, connect, cacheDir: cacheDir(), prices: PRICES, log: (l) => lines.push(l) });
    const spent = r.outcomes.reduce((a, o) => a + (lastOf(o.dir, METRIC.costTotal) ?? 0), 0);
    assert.ok(spent <= budget, `the runs together spent ${spent}, within ${budget}`);
    assert.ok(spent > budget - 2 * stepUsd, `and did not stop far short of it: ${spent} of ${budget}`);
    const stopped = r.outcomes.filter((o) => o.budgetStop);
    assert.ok(stopped.length >= 1, r.outcomes.map((o) => `${o.name} ${o.status}`).join(', '));
    for (const o of stopped) {
      assert.strictEqual(o.status, 'cancelled');
      assert.match(o.budgetStop!, /^the sweep's budget: stopped at \$\d+\.\d\d of \$\d+\.\d\d \(estimate\); resume with a higher budget to continue$/);
      const steps = readMetricsRowsSync(o.dir).length;
      assert.ok(readCheckpointLines(o.dir).some((c) => c.batch === steps && c.state_path), `${o.name}: a resume point at step ${steps}`);
    }
    assert.deepStrictEqual(r.outcomes.map((o) => o.status).at(-1), 'queued', 'the last run never started');
    assert.match(r.budgetStop ?? '', /^stopped at \$\d+\.\d\d of \$\d+\.\d\d \(estimate\); resume with a higher budget to continue$/);
    assert.ok(lines.includes(`sweep shared: ${r.budgetStop}`), lines.join('\n'));

    // a higher budget: every run finishes, each step exactly once
    sweep(1000);
    const again = await runSweep({ sweepFile: file, runsDir, connect, cacheDir: cacheDir(), prices: PRICES });
    assert.strictEqual(again.budgetStop, undefined);
    for (const o of again.outcomes) {
      assert.ok(o.status === 'completed' || o.status === 'skipped', `${o.name}: ${o.status}`);
      assert.deepStrictEqual(readMetricsRowsSync(o.dir).map((x) => x.step), [0, 1, 2], o.name);
    }
  });

  it('the median rule reports the dollars it saved: each stopped run\'s mean cost per step × the steps it did not take', async () => {
    const file = path.join(dir, 'median.sweep.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ base: 'base.grpo.json', method: 'grid', parameters: { learning_rate: { values: [0.004, 0.003, 0.002, 0.001] } }, metric: { name: 'optim/lr', goal: 'maximize' }, early_terminate: { type: 'median', min_iter: 0, min_runs: 2 } }),
    );
    const r = await runSweep({ sweepFile: file, runsDir: path.join(dir, 'runs-median'), connect, cacheDir: cacheDir(), prices: PRICES });
    const stopped = r.outcomes.filter((o) => o.status === 'stopped early');
    assert.strictEqual(stopped.length, 2);
    let total = 0;
    for (const o of stopped) {
      const rows = readMetricsRowsSync(o.dir);
      const mean = rows.reduce((a, x) => a + (x[METRIC.costStep] as number), 0) / rows.length;
      assert.ok(mean > 0);
      assert.strictEqual(o.stepsSaved, 2);
      assert.ok(Math.abs(o.usdSaved - mean * 2) < 1e-12, `${o.name}: ${o.usdSaved} = ${mean} × 2`);
      const marker = JSON.parse(fs.readFileSync(path.join(o.dir, 'stopped_early.json'), 'utf8'));
      assert.strictEqual(marker.usd_saved, o.usdSaved);
      total += o.usdSaved;
    }
    assert.ok(Math.abs(r.usdSaved - total) < 1e-12);
  });
});
