// The Compare Runs panel's pure part: config diff, result columns, x alignment, seed groups and
// bands, sensitivity and parallel coordinates, CSV, the charts' decimation; and the per-run column
// cache (a binary file) over real files.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  alignSeries,
  configDiff,
  decimateLines,
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
import { besideRun, decodeColumnCache, encodeColumnCache, inFolder, loadColumns } from '../../../src/core/experiments/columnCache';
import { chartLines, DENSE_LINES, encodeFloats, SmoothedCache, type HeldRun } from '../../../src/core/experiments/compareView';
import { ChartLines, CompareResults, XAxisId, decodeFloats } from '../../../src/protocol/compareProtocol';
import { BARE_KEYS_GROUP, COMMON_RESULT_COLUMNS } from '../../../src/protocol/compareData';
import { emaSmooth } from '../../../src/protocol/smoothing';
import { readMetricsRowsSync } from '../../../src/core/runs/runDirectory';

const cols = (rows: Record<string, number | null>[]): RunColumns => {
  const keys = new Set(rows.flatMap((r) => Object.keys(r).filter((k) => k !== 'step')));
  const out: RunColumns = { steps: rows.map((r) => r.step!), cols: {} };
  for (const k of keys) out.cols[k] = rows.map((r) => (r[k] === undefined ? null : r[k]!));
  return out;
};

import { GRPO_KIND } from '../../../src/core/grpo/kind';
import { SFT_KIND } from '../../../src/core/sft/kind';

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
  it('keeps the fields that only place or date a run (log_path, created_at) out of the differing ones', () => {
    const d = configDiff([
      { learning_rate: 1e-3, log_path: '/r/a', created_at: '2026-11-25T10:00:00Z' },
      { learning_rate: 4e-3, log_path: '/r/b', created_at: '2026-11-25T11:00:00Z' },
    ]);
    assert.deepStrictEqual(d.differing, ['learning_rate']);
    assert.deepStrictEqual(d.identical, []);
    assert.deepStrictEqual(d.bookkeeping, ['created_at', 'log_path']);
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
      'grpo',
      GRPO_KIND.compareColumns,
    );
    assert.deepStrictEqual(r, { kind: 'grpo', steps: 4, lastStep: 3, wallTime: 5.5, tokensTrained: 300, values: { finalTrainReward: 0.5, bestTrainReward: 0.6, bestHoldoutReward: 0.4, bestHoldoutStep: 2 } });
  });
  it('SFT (its kind\'s columns): final train NLL, best test/nll and its step', () => {
    const r = runResults(
      cols([
        { step: 0, train_mean_nll: 2, 'test/nll': 2.1 },
        { step: 5, train_mean_nll: 1.2, 'test/nll': 1.4 },
        { step: 10, train_mean_nll: 1.1, 'test/nll': 1.5 },
      ]),
      'sft',
      SFT_KIND.compareColumns,
    );
    assert.deepStrictEqual(r, { kind: 'sft', steps: 3, lastStep: 10, wallTime: undefined, tokensTrained: undefined, values: { finalTrainNll: 1.1, bestTestNll: 1.4, bestTestNllStep: 5 } });
  });
});

describe('compare: cost columns and the reward-per-dollar axis', () => {
  it('a run that logs usage has its last estimated cost and billed tokens; x = cost/total_usd reads reward per dollar', () => {
    const c = cols([
      { step: 0, 'env/all/reward/total': 0.2, 'cost/total_usd': 0.01, 'usage/total_tokens': 1200 },
      { step: 1, 'env/all/reward/total': 0.5, 'cost/total_usd': null, 'usage/total_tokens': 2500 },
      { step: 2, 'env/all/reward/total': 0.6, 'cost/total_usd': 0.035, 'usage/total_tokens': 3600 },
    ]);
    const r = runResults(c, 'grpo', GRPO_KIND.compareColumns);
    assert.strictEqual(r.costUsd, 0.035);
    assert.strictEqual(r.tokensTotal, 3600);
    assert.deepStrictEqual(xValues(c, 'cost'), [0.01, null, 0.035]);
    assert.deepStrictEqual(xValues(cols([{ step: 0 }]), 'cost'), [null]);
    assert.deepStrictEqual(CompareResults.parse(JSON.parse(JSON.stringify(r))), JSON.parse(JSON.stringify(r)));
    assert.strictEqual(XAxisId.parse('cost'), 'cost');
    assert.deepStrictEqual(COMMON_RESULT_COLUMNS.map((x) => x.id).slice(-2), ['costUsd', 'tokensTotal']);
  });
  it('the charts reply on the cost axis puts each run\'s points at its cumulative dollars', () => {
    const held: HeldRun = { id: '/r/a', color: 0, config: {}, status: 'completed', columns: { steps: [0, 1, 2], cols: { 'env/all/reward/total': [0.1, 0.4, 0.8], 'cost/total_usd': [0.5, 1, 1.5] } } };
    const [chart] = chartLines([held], { keys: ['env/all/reward/total'], xAxis: 'cost', smoothing: 0, width: 300 }).map((x) => ChartLines.parse(JSON.parse(JSON.stringify(x))));
    assert.deepStrictEqual(chart!.x, [0.5, 1, 1.5]);
    assert.deepStrictEqual(chart!.runs[0]!.y, [0.1, 0.4, 0.8].map((v) => Math.fround(v)));
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
      { group: BARE_KEYS_GROUP, keys: ['train_mean_nll'] },
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

describe('compare: decimation to the chart width', () => {
  /** a deterministic wiggly line: a run's x (increasing, its own spacing) and y with spikes */
  function line(n: number, seed: number, dx: (i: number) => number) {
    const x: (number | null)[] = [];
    const y: (number | null)[] = [];
    const steps: number[] = [];
    let t = 0;
    for (let i = 0; i < n; i++) {
      t += dx(i);
      x.push(t);
      y.push(i % 97 === seed % 97 ? 50 + seed : i % 89 === 3 ? -40 - seed : Math.sin(i / 7 + seed) + ((i * 2654435761 + seed) % 1000) / 5000);
      steps.push(i);
    }
    return { x, y, steps };
  }

  it('is exact when all lines together have no more points than 2 × buckets: the union of x, steps kept', () => {
    const a = { x: [0, 1, 2], y: [1, null, 3], steps: [10, 11, 12] };
    const b = { x: [1, 3], y: [5, 6], steps: [20, 21] };
    const d = decimateLines([a, b], 4);
    const aligned = alignSeries([a, b]);
    assert.deepStrictEqual(d.x, aligned.x);
    assert.deepStrictEqual(d.ys, aligned.ys);
    assert.deepStrictEqual(d.x, [0, 1, 2, 3]);
    assert.deepStrictEqual(d.ys, [[1, null, 3, null], [null, 5, null, 6]]);
    assert.deepStrictEqual(d.steps, [[10, null, 12, null], [null, 20, null, 21]]);
  });

  it('keeps each line’s extrema, at most two points per bucket, on one shared increasing x; each point a real row at its step', () => {
    const B = 100;
    const lines = [line(5000, 1, () => 1), line(3000, 2, (i) => 1.5 + (i % 3)), line(4000, 3, (i) => (i % 10 === 0 ? 7 : 0.5))];
    lines[1]!.y[17] = null; // a gap
    // a run whose rows are not in x order (a bucket's rows do not come together)
    const back = line(2500, 4, () => 2);
    const order = back.x.map((_, i) => i).sort((a, b) => ((a * 7919) % 2500) - ((b * 7919) % 2500));
    lines.push({ x: order.map((i) => back.x[i]!), y: order.map((i) => back.y[i]!), steps: order });
    const d = decimateLines(lines, B);
    assert.ok(d.x.length <= 2 * B, `${d.x.length} x values`);
    for (let i = 1; i < d.x.length; i++) assert.ok(d.x[i]! >= d.x[i - 1]!, `x increasing at ${i}`);
    const lo = lines.reduce((m, l) => l.x.reduce<number>((a, v) => Math.min(a, v!), m), Infinity);
    const hi = lines.reduce((m, l) => l.x.reduce<number>((a, v) => Math.max(a, v!), m), -Infinity);
    const w = (hi - lo) / B;
    lines.forEach((l, r) => {
      const ys = d.ys[r]!;
      const kept = ys.filter((v): v is number => v !== null);
      const all = l.y.filter((v): v is number => v !== null);
      assert.strictEqual(Math.max(...kept), Math.max(...all), `run ${r}: its maximum is kept`);
      assert.strictEqual(Math.min(...kept), Math.min(...all), `run ${r}: its minimum is kept`);
      // every spike survives: a spike is its bucket's maximum
      for (let i = 0; i < l.y.length; i++) if (l.y[i] === 50 + r + 1) assert.ok(d.steps[r]!.includes(l.steps[i]!), `run ${r}: the spike at step ${l.steps[i]}`);
      ys.forEach((v, j) => {
        if (v === null) return assert.strictEqual(d.steps[r]![j], null);
        const step = d.steps[r]![j]!;
        const row = l.steps.indexOf(step);
        assert.strictEqual(v, l.y[row], `run ${r}: the value drawn at x ${d.x[j]} is its row of step ${step}`);
        assert.ok(Math.abs(d.x[j]! - l.x[row]!) <= w + 1e-9, `run ${r}: drawn within one bucket of its x`);
      });
      assert.ok(kept.length <= 2 * B);
    });
  });

  it('the charts reply smooths every run on its full rows, then decimates; a run without the metric has no line', () => {
    const run = (id: string, n: number, withKey: boolean): HeldRun => {
      const steps = Array.from({ length: n }, (_, i) => i);
      const cols: Record<string, (number | null)[]> = { 'time/total': steps.map(() => 0.5) };
      if (withKey) cols['env/all/reward/total'] = steps.map((i) => (i % 4) / 4);
      return { id, color: 0, config: {}, columns: { steps, cols }, status: 'completed' };
    };
    const held = [run('/r/a', 10, true), run('/r/b', 12, true), run('/r/c', 5, false)];
    const lines = (...a: Parameters<typeof chartLines>) => chartLines(...a).map((c) => ChartLines.parse(JSON.parse(JSON.stringify(c))));
    const [small] = lines(held, { keys: ['env/all/reward/total'], xAxis: 'wall', smoothing: 0.6, width: 600 });
    assert.deepStrictEqual(small!.runs.map((r) => r.id), ['/r/a', '/r/b']);
    assert.deepStrictEqual(small!.x, Array.from({ length: 12 }, (_, i) => (i + 1) * 0.5));
    // y travels as Float32: the smoothed values, rounded to single precision
    assert.deepStrictEqual(small!.runs[1]!.y, emaSmooth(held[1]!.columns.cols['env/all/reward/total']!, 0.6).map((v) => (v === null ? null : Math.fround(v))));
    const big = [run('/r/a', 3000, true)];
    const [chart] = lines(big, { keys: ['env/all/reward/total'], xAxis: 'step', smoothing: 0, width: 300 });
    assert.ok(chart!.x.length <= 300, `${chart!.x.length} points for 300 pixels`);
    assert.strictEqual(Math.max(...chart!.runs[0]!.y.map((v) => v ?? -1)), 0.75);
    assert.strictEqual(Math.min(...chart!.runs[0]!.y.map((v) => v ?? 1)), 0);
    assert.ok(chart!.x.length > 200, `one line keeps a point per pixel column: ${chart!.x.length} for 300 pixels`);
    // more than DENSE_LINES lines in one chart: a min and a max per three pixel columns
    const many = Array.from({ length: DENSE_LINES + 1 }, (_, i) => run(`/r/${i}`, 3000, true));
    const [dense] = lines(many, { keys: ['env/all/reward/total'], xAxis: 'step', smoothing: 0, width: 300 });
    assert.ok(dense!.x.length <= 200 && dense!.x.length > 150, `${dense!.x.length} points for 300 pixels and ${many.length} lines`);
    assert.strictEqual(Math.max(...dense!.runs[DENSE_LINES]!.y.map((v) => v ?? -1)), 0.75, 'the extremes are kept');
    // the smoothed columns are kept for the next request (another x axis), and dropped when the rows change
    const cache = new SmoothedCache();
    const [viaCache] = lines(held, { keys: ['env/all/reward/total'], xAxis: 'step', smoothing: 0.6, width: 600 }, cache);
    assert.deepStrictEqual(viaCache!.runs[1]!.y, small!.runs[1]!.y);
    assert.strictEqual(cache.get(held[1]!, 'env/all/reward/total', 0.6), cache.get(held[1]!, 'env/all/reward/total', 0.6));
    const grown: HeldRun = { ...held[1]!, columns: { steps: [...held[1]!.columns.steps, 12], cols: { 'env/all/reward/total': [...held[1]!.columns.cols['env/all/reward/total']!, 1] } } };
    assert.strictEqual(cache.get(grown, 'env/all/reward/total', 0.6).length, 13);
  });

  it('chart numbers travel as base64: x as Float64 (exact), y and steps as Float32; NaN for a gap; a wrong length is named', () => {
    const values = [0.1, null, -3.25e-12, 1e300, 7];
    assert.deepStrictEqual(decodeFloats(encodeFloats(values, 8), 8), values);
    // Float32: what a chart shows (four significant digits) survives; whole steps are exact
    const f32 = decodeFloats(encodeFloats([0.123456789, null, 2_000_001, -7.5], 4), 4)!;
    assert.strictEqual(f32[1], null);
    assert.strictEqual(f32[2], 2_000_001);
    assert.strictEqual(f32[3], -7.5);
    assert.ok(Math.abs(f32[0]! - 0.123456789) < 1e-8, String(f32[0]));
    assert.notStrictEqual(f32[0], 0.123456789, 'Float32 rounds (the test would not see a Float64 sent as y)');
    const ok = { key: 'k', n: 2, x: encodeFloats([1, 2], 8), runs: [{ id: 'a', y: encodeFloats([3, null], 4), steps: encodeFloats([0, null], 4) }] };
    assert.deepStrictEqual(ChartLines.parse(ok), { key: 'k', n: 2, x: [1, 2], runs: [{ id: 'a', y: [3, null], steps: [0, null] }] });
    const bad = ChartLines.safeParse({ ...ok, runs: [{ ...ok.runs[0]!, y: encodeFloats([3], 4) }] });
    assert.ok(!bad.success);
    assert.deepStrictEqual(bad.error.issues[0]!.path, ['runs', 0, 'y']);
    const wide = ChartLines.safeParse({ ...ok, runs: [{ ...ok.runs[0]!, y: encodeFloats([3, 4], 8) }] });
    assert.ok(!wide.success, 'Float64 y values are two Float32s each: the length check names them');
    assert.deepStrictEqual(wide.error.issues[0]!.path, ['runs', 0, 'y']);
    const notBase64 = ChartLines.safeParse({ ...ok, x: 'not base64!' });
    assert.ok(!notBase64.success);
    assert.deepStrictEqual(notBase64.error.issues[0]!.path, ['x']);
    assert.strictEqual(decodeFloats('AAAA', 8), undefined, 'three bytes are not a Float64');
    assert.strictEqual(decodeFloats('AAAAAAA=', 4), undefined, 'five bytes are not Float32s');
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

  it('the binary format round-trips steps, values and gaps (NaN and null both read back as null)', () => {
    const c: RunColumns = { steps: [0, 2, 5], cols: { r: [1.5, null, -3e-9], 'test/x': [null, null, 7] } };
    const buf = encodeColumnCache(c, { consumed: 42, head: 'h', tail: 't' });
    const back = decodeColumnCache(buf);
    assert.deepStrictEqual(back.columns, c);
    assert.deepStrictEqual([back.consumed, back.head, back.tail], [42, 'h', 't']);
    // a copy at an odd offset of a bigger buffer reads the same (a Buffer from a pool is not aligned)
    const shifted = Buffer.concat([Buffer.from([1]), buf]).subarray(1);
    assert.deepStrictEqual(decodeColumnCache(shifted).columns, c);
    assert.deepStrictEqual(decodeColumnCache(encodeColumnCache({ steps: [], cols: {} }, { consumed: 0, head: '', tail: '' })).columns, { steps: [], cols: {} });
  });

  it('a corrupt, truncated or older cache file is rebuilt from metrics.jsonl and named', async () => {
    write(['{"step": 0, "r": 1}', '{"step": 1, "r": 2}']);
    const want = { steps: [0, 1], cols: { r: [1, 2] } };
    await loadColumns(dir);
    const file = besideRun(dir);
    const good = fs.readFileSync(file);
    for (const [what, bytes, says] of [
      ['truncated', good.subarray(0, good.length - 5), /truncated/],
      ['garbage', Buffer.from('not a cache at all'), /magic/],
      ['an older JSON cache', Buffer.from(JSON.stringify({ version: 1, consumed: 0, head: '', tail: '', steps: [], cols: {} })), /magic/],
      ['a header that does not parse', Buffer.concat([good.subarray(0, 16), Buffer.from('{"version": 2,'.padEnd(good.readUInt32LE(8), ' ')), good.subarray(16 + good.readUInt32LE(8))]), /header/],
    ] as const) {
      fs.writeFileSync(file, bytes);
      const r = await loadColumns(dir);
      assert.strictEqual(r.source, 'built', what);
      assert.deepStrictEqual(r.columns, want, what);
      assert.ok(r.rebuilt?.includes(file) && says.test(r.rebuilt), `${what}: ${r.rebuilt}`);
      const again = await loadColumns(dir);
      assert.strictEqual(again.source, 'cached', `${what}: the rebuilt cache is used next time`);
      assert.strictEqual(again.rebuilt, undefined);
    }
  });

  it('extends row by row as a run writes: each load reads only what was appended', async () => {
    write([]);
    const lines: string[] = [];
    for (let s = 0; s < 30; s++) {
      const line = JSON.stringify({ step: s, r: s * 2, ...(s % 5 === 0 ? { 'test/x': s } : {}) });
      lines.push(line);
      fs.appendFileSync(path.join(dir, 'metrics.jsonl'), line + '\n');
      const r = await loadColumns(dir);
      assert.strictEqual(r.source, s === 0 ? 'built' : 'extended', `row ${s}`);
      assert.strictEqual(decodeColumnCache(fs.readFileSync(besideRun(dir))).consumed, lines.join('\n').length + 1);
    }
    const final = await loadColumns(dir);
    assert.strictEqual(final.source, 'cached');
    assert.deepStrictEqual(final.columns.cols['r'], Array.from({ length: 30 }, (_, s) => s * 2));
    assert.deepStrictEqual(final.columns.cols['test/x'], Array.from({ length: 30 }, (_, s) => (s % 5 === 0 ? s : null)));
  });

  it('a run without metrics.jsonl has no steps', async () => {
    assert.deepStrictEqual((await loadColumns(dir)).columns, { steps: [], cols: {} });
  });
});
