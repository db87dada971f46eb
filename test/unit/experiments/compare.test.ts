// The Compare Runs panel's pure part: config diff, result columns, x alignment, seed groups and
// bands, sensitivity and parallel coordinates, CSV; and the per-run column cache over real files.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  alignSeries,
  configDiff,
  flattenConfig,
  metricKeyGroups,
  parallelCoordinates,
  runResults,
  RunColumns,
  seedBand,
  seedGroups,
  sensitivity,
  toCsv,
  xValues,
} from '../../../src/core/experiments/compare';
import { besideRun, inFolder, loadColumns } from '../../../src/core/experiments/columnCache';
import { readMetricsRowsSync } from '../../../src/core/runs/runDirectory';

const cols = (rows: Record<string, number | null>[]): RunColumns => {
  const keys = new Set(rows.flatMap((r) => Object.keys(r).filter((k) => k !== 'step')));
  const out: RunColumns = { steps: rows.map((r) => r.step!), cols: {} };
  for (const k of keys) out.cols[k] = rows.map((r) => (r[k] === undefined ? null : r[k]!));
  return out;
};

describe('compare: config diff', () => {
  it('flattens nested objects to dot paths; arrays and empty objects are leaves', () => {
    assert.deepStrictEqual(flattenConfig({ a: 1, b: { c: 'x', d: { e: [1, 2] } }, f: {}, g: null }), { a: 1, 'b.c': 'x', 'b.d.e': [1, 2], f: {}, g: null });
  });
  it('splits differing from identical fields; a field some runs lack differs', () => {
    const d = configDiff([
      { learning_rate: 1e-3, model_name: 'm', reward: { file: 'r.py' }, sampling: { temperature: 1 } },
      { learning_rate: 4e-3, model_name: 'm', reward: { file: 'r.py' } },
      { learning_rate: 1e-3, model_name: 'm', reward: { file: 'r.py' }, sampling: { temperature: 1 } },
    ]);
    assert.deepStrictEqual(d.differing, ['learning_rate', 'sampling.temperature']);
    assert.deepStrictEqual(d.identical, ['model_name', 'reward.file']);
    assert.strictEqual(d.flat[1]!['learning_rate'], 4e-3);
  });
  it('compares arrays by value', () => {
    assert.deepStrictEqual(configDiff([{ tags: ['a', 'b'] }, { tags: ['a', 'b'] }]).identical, ['tags']);
    assert.deepStrictEqual(configDiff([{ tags: ['a', 'b'] }, { tags: ['b', 'a'] }]).differing, ['tags']);
  });
});

describe('compare: result columns', () => {
  it('GRPO: final and best train reward, best holdout reward and its step, steps, wall time, tokens', () => {
    const r = runResults(
      cols([
        { step: 0, 'env/all/reward/total': 0.2, 'test/env/all/reward/total': 0.1, 'time/total': 1.5, 'progress/tokens_trained': 100 },
        { step: 1, 'env/all/reward/total': 0.6, 'time/total': 2, 'progress/tokens_trained': 210 },
        { step: 2, 'env/all/reward/total': 0.5, 'test/env/all/reward/total': 0.4, 'time/total': 1, 'progress/tokens_trained': 300 },
        { step: 3, 'env/all/reward/total': null, 'test/env/all/reward/total': 0.3, 'time/total': 1 },
      ]),
    );
    assert.deepStrictEqual(r, { kind: 'grpo', steps: 4, lastStep: 3, wallTime: 5.5, tokensTrained: 300, finalTrainReward: 0.5, bestTrainReward: 0.6, bestHoldoutReward: 0.4, bestHoldoutStep: 2 });
  });
  it('SFT (inferred from train_mean_nll): final train NLL, best test/nll and its step', () => {
    const r = runResults(
      cols([
        { step: 0, train_mean_nll: 2, 'test/nll': 2.1 },
        { step: 5, train_mean_nll: 1.2, 'test/nll': 1.4 },
        { step: 10, train_mean_nll: 1.1, 'test/nll': 1.5 },
      ]),
    );
    assert.deepStrictEqual(r, { kind: 'sft', steps: 3, lastStep: 10, wallTime: undefined, tokensTrained: undefined, finalTrainNll: 1.1, bestTestNll: 1.4, bestTestNllStep: 5 });
  });
});

describe('compare: metrics and the x axis', () => {
  it('groups the union of metric keys by prefix, env/ test/ optim/ time/ progress/ then SFT bare keys', () => {
    const g = metricKeyGroups([cols([{ step: 0, 'env/all/reward/total': 1, 'optim/lr': 1, 'time/total': 1 }]), cols([{ step: 0, 'test/nll': 1, train_mean_nll: 1, 'progress/tokens_trained': 1, 'custom/x': 1 }])]);
    assert.deepStrictEqual(g, [
      { group: 'env/', keys: ['env/all/reward/total'] },
      { group: 'test/', keys: ['test/nll'] },
      { group: 'optim/', keys: ['optim/lr'] },
      { group: 'time/', keys: ['time/total'] },
      { group: 'progress/', keys: ['progress/tokens_trained'] },
      { group: 'sft', keys: ['train_mean_nll'] },
      { group: 'custom/', keys: ['custom/x'] },
    ]);
  });
  it('x = step, wall time (running sum of time/total) or tokens trained; a missing x drops the point', () => {
    const c = cols([
      { step: 0, 'time/total': 2, 'progress/tokens_trained': 10 },
      { step: 1, 'time/total': 3, 'progress/tokens_trained': null },
      { step: 2, 'time/total': 1, 'progress/tokens_trained': 30 },
    ]);
    assert.deepStrictEqual(xValues(c, 'step'), [0, 1, 2]);
    assert.deepStrictEqual(xValues(c, 'wall'), [2, 5, 6]);
    assert.deepStrictEqual(xValues(c, 'tokens'), [10, null, 30]);
    assert.deepStrictEqual(xValues(cols([{ step: 0 }]), 'tokens'), [null]);
  });
  it('aligns runs on the union of their x values, null where a run has no point', () => {
    const a = alignSeries([
      { x: [0, 1, 2], y: [1, NaN, 3] },
      { x: [1, 3], y: [10, 30] },
      { x: [0], y: undefined },
    ]);
    assert.deepStrictEqual(a, { x: [0, 1, 2, 3], ys: [[1, null, 3, null], [null, 10, null, 30], [null, null, null, null]] });
  });
});

describe('compare: seed groups', () => {
  it('runs that differ only by seed (and their names) form one group; another learning rate does not', () => {
    const g = seedGroups([
      { id: 'a', config: { learning_rate: 1e-3, seed: 1, log_path: '/r/a', sweep: { name: 's', point: { learning_rate: 1e-3 }, seed: 1 } } },
      { id: 'b', config: { learning_rate: 4e-3, seed: 1, log_path: '/r/b', sweep: { name: 's', point: { learning_rate: 4e-3 }, seed: 1 } } },
      { id: 'c', config: { learning_rate: 1e-3, seed: 2, log_path: '/r/c', sweep: { name: 's', point: { learning_rate: 1e-3 }, seed: 2 } } },
    ]);
    assert.deepStrictEqual(g.map((x) => x.ids), [['a', 'c'], ['b']]);
  });
  it('runs logged to W&B still group by seed: each has its own W&B id, URL and name, which set no hyperparameter', () => {
    const wandb = (id: string, name: string) => ({ id, url: `https://wandb.ai/e/p/runs/${id}`, wandb_project: 'p', wandb_group: 's', wandb_name: name });
    const g = seedGroups([
      { id: 'a', config: { learning_rate: 1e-3, seed: 1, wandb: wandb('0a1b2c3d4e5f', 'learning_rate_0.001_seed_1') } },
      { id: 'b', config: { learning_rate: 1e-3, seed: 2, wandb: wandb('9f8e7d6c5b4a', 'learning_rate_0.001_seed_2') } },
      { id: 'c', config: { learning_rate: 4e-3, seed: 1, wandb: wandb('111111111111', 'learning_rate_0.004_seed_1') } },
    ]);
    assert.deepStrictEqual(g.map((x) => x.ids), [['a', 'b'], ['c']]);
  });
  it('a band is min, max and mean over the members that have a value at each x', () => {
    assert.deepStrictEqual(seedBand([[1, null, 3], [3, 5, null]]), { min: [1, 5, 3], max: [3, 5, 3], mean: [2, 5, 3] });
  });
});

describe('compare: sweep sensitivity and parallel coordinates', () => {
  const runs = [
    { id: 'a1', point: { learning_rate: 1e-4, 'sampling.temperature': 'low' }, seed: 1, value: 0.2 },
    { id: 'a2', point: { learning_rate: 1e-4, 'sampling.temperature': 'low' }, seed: 2, value: 0.4 },
    { id: 'b1', point: { learning_rate: 1e-3, 'sampling.temperature': 'high' }, seed: 1, value: 0.9 },
    { id: 'c1', point: { learning_rate: 1e-2, 'sampling.temperature': 'low' }, seed: 1 },
  ];
  it('one point per run with a value, the mean over seeds at each value, a log scale for a wide numeric field', () => {
    const [lr, temp] = sensitivity(runs, ['learning_rate', 'sampling.temperature']);
    assert.strictEqual(lr!.numeric, true);
    assert.strictEqual(lr!.log, true);
    assert.deepStrictEqual(lr!.points.map((p) => [p.id, p.x, p.y, p.seed]), [['a1', 1e-4, 0.2, 1], ['a2', 1e-4, 0.4, 2], ['b1', 1e-3, 0.9, 1]]);
    assert.deepStrictEqual(lr!.mean.map((m) => [m.x, Math.round(m.y * 1000) / 1000, m.n]), [[1e-4, 0.3, 2], [1e-3, 0.9, 1]]);
    assert.strictEqual(temp!.numeric, false);
    assert.deepStrictEqual(temp!.categories, ['high', 'low']);
    assert.deepStrictEqual(temp!.points.map((p) => p.x), [1, 1, 0]);
  });
  it('parallel coordinates: an axis per field and one for the metric, positions in [0, 1]', () => {
    const pc = parallelCoordinates(runs, ['learning_rate', 'sampling.temperature'], 'env/all/reward/total');
    assert.deepStrictEqual(pc.axes.map((a) => [a.name, a.numeric, a.log]), [['learning_rate', true, true], ['sampling.temperature', false, false], ['env/all/reward/total', true, false]]);
    const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
    assert.deepStrictEqual(pc.lines.map((l) => l.pos.map(round)), [[0, 1, 0], [0, 1, 0.286], [0.5, 0, 1], [1, 1, null]]);
  });
});

describe('compare: CSV', () => {
  it('quotes commas, quotes and newlines; empty for missing and non-finite numbers', () => {
    assert.strictEqual(toCsv(['run', 'lr', 'note'], [['a,b', 0.001, 'say "hi"'], ['c', NaN, undefined]]), 'run,lr,note\n"a,b",0.001,"say ""hi"""\nc,,\n');
  });
});

describe('compare: the per-run column cache', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-columns-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (lines: string[]) => fs.writeFileSync(path.join(dir, 'metrics.jsonl'), lines.map((l) => `${l}\n`).join(''));
  const asRows = (c: RunColumns) => c.steps.map((s, i) => Object.fromEntries([['step', s], ...Object.entries(c.cols).filter(([, v]) => v[i] !== null).map(([k, v]) => [k, v[i]])]));

  it('builds once, reads back unchanged, extends with appended rows, and agrees with readMetricsRows', async () => {
    write(['{"step": 0, "r": 1, "k": NaN}', '{"step": 1, "r": 2}']);
    const first = await loadColumns(dir);
    assert.strictEqual(first.source, 'built');
    assert.ok(fs.existsSync(besideRun(dir)));
    assert.deepStrictEqual(first.columns, { steps: [0, 1], cols: { r: [1, 2], k: [null, null] } });
    const again = await loadColumns(dir);
    assert.strictEqual(again.source, 'cached');
    assert.deepStrictEqual(again.columns, first.columns);
    // a step logged again (a resume) replaces its row whole; a line of new keys joins its step; a partial line waits
    fs.appendFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 1, "r": 5}\n{"step": 1, "test/x": 7}\n{"step": 2, "r": 6}\n{"step": 3, "r"');
    const ext = await loadColumns(dir);
    assert.strictEqual(ext.source, 'extended');
    assert.deepStrictEqual(ext.columns, { steps: [0, 1, 2], cols: { r: [1, 5, 6], k: [null, null, null], 'test/x': [null, 7, null] } });
    const fromRows = readMetricsRowsSync(dir).map((r) => Object.fromEntries(Object.entries(r).filter(([k, v]) => k !== 'k' && !(typeof v === 'number' && Number.isNaN(v)))));
    assert.deepStrictEqual(asRows(ext.columns), fromRows.slice(0, 3));
  });

  it('is rebuilt when metrics.jsonl is rewritten (shorter, or other bytes in the prefix it holds)', async () => {
    write(['{"step": 0, "r": 1}', '{"step": 1, "r": 2}', '{"step": 2, "r": 3}']);
    await loadColumns(dir);
    write(['{"step": 0, "r": 9}']);
    const shorter = await loadColumns(dir);
    assert.strictEqual(shorter.source, 'built');
    assert.deepStrictEqual(shorter.columns.cols['r'], [9]);
    write(['{"step": 0, "r": 8}', '{"step": 1, "r": 2}']);
    const same = await loadColumns(dir);
    assert.strictEqual(same.source, 'built', 'longer, but other bytes in the prefix it holds');
    assert.deepStrictEqual(same.columns.cols['r'], [8, 2]);
  });

  it('can live in a folder of its own, one file per run directory', async () => {
    write(['{"step": 0, "r": 1}']);
    const store = path.join(dir, 'store');
    const where = inFolder(store);
    await loadColumns(dir, where);
    assert.ok(!fs.existsSync(besideRun(dir)));
    assert.deepStrictEqual(fs.readdirSync(store), [path.basename(where(dir))]);
    assert.strictEqual((await loadColumns(dir, where)).source, 'cached');
  });

  it('a run without metrics.jsonl has no steps', async () => {
    assert.deepStrictEqual((await loadColumns(dir)).columns, { steps: [], cols: {} });
  });
});
