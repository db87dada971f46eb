// Sweep files: parsing (errors name the file and the field), expansion (grid, seeded random with every
// distribution, seeds) and the validation of every point's run spec before anything starts.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseSweepText, SweepFile } from '../../../src/core/experiments/sweepFile';
import { drawParameter, expandPoints, expandSweep, sweptPaths } from '../../../src/core/experiments/expand';
import { mulberry32 } from '../../../src/core/data/prng';

const metric = { name: 'env/all/reward/total', goal: 'maximize' as const };
const sweep = (o: Record<string, unknown>): SweepFile => SweepFile.parse({ base: 'a.grpo.json', metric, ...o });
const arithDir = path.resolve(__dirname, '../../../../examples/arithmetic');

describe('sweeps: expansion', () => {
  it('grid: the Cartesian product in parameter order; a constant joins every point; names show the swept fields', () => {
    const s = sweep({ method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] }, lora_rank: { values: [8, 16] }, iterations: { value: 2 } } });
    assert.deepStrictEqual(sweptPaths(s), ['learning_rate', 'lora_rank']);
    assert.deepStrictEqual(
      expandPoints(s).map((p) => [p.name, p.point]),
      [
        ['learning_rate_0.001.lora_rank_8', { learning_rate: 0.001, lora_rank: 8, iterations: 2 }],
        ['learning_rate_0.001.lora_rank_16', { learning_rate: 0.001, lora_rank: 16, iterations: 2 }],
        ['learning_rate_0.004.lora_rank_8', { learning_rate: 0.004, lora_rank: 8, iterations: 2 }],
        ['learning_rate_0.004.lora_rank_16', { learning_rate: 0.004, lora_rank: 16, iterations: 2 }],
      ],
    );
  });

  it('seeds repeat every point with each seed, named .seed_N', () => {
    const s = sweep({ method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] } }, seeds: [1, 2] });
    assert.deepStrictEqual(
      expandPoints(s).map((p) => [p.name, p.seed]),
      [
        ['learning_rate_0.001.seed_1', 1],
        ['learning_rate_0.001.seed_2', 2],
        ['learning_rate_0.004.seed_1', 1],
        ['learning_rate_0.004.seed_2', 2],
      ],
    );
  });

  it('random: run_cap points; the same file gives the same points, another seed others; every distribution within its range', () => {
    const parameters = {
      a: { distribution: 'uniform', min: 1, max: 2 },
      b: { distribution: 'int_uniform', min: 3, max: 5 },
      c: { distribution: 'log_uniform_values', min: 1e-5, max: 1e-2 },
      d: { distribution: 'q_uniform', min: 0, max: 1, q: 0.1 },
      e: { distribution: 'categorical', values: ['x', 'y'] },
      f: { values: [7, 8] },
      g: { value: 'k' },
    };
    const s = sweep({ method: 'random', run_cap: 400, seed: 7, parameters });
    const pts = expandPoints(s);
    assert.strictEqual(pts.length, 400);
    assert.deepStrictEqual(expandPoints(sweep({ method: 'random', run_cap: 400, seed: 7, parameters })), pts);
    assert.notDeepStrictEqual(expandPoints(sweep({ method: 'random', run_cap: 400, seed: 8, parameters })).map((p) => p.point), pts.map((p) => p.point));
    const col = (k: string) => pts.map((p) => p.point[k] as number);
    assert.ok(col('a').every((v) => v >= 1 && v <= 2));
    assert.deepStrictEqual([...new Set(col('b'))].sort(), [3, 4, 5], 'int_uniform covers min..max inclusive');
    assert.ok(col('c').every((v) => v >= 1e-5 && v <= 1e-2));
    // log-uniform: about a third of draws per decade
    const decade = col('c').filter((v) => v < 1e-4).length;
    assert.ok(decade > 80 && decade < 190, `draws in [1e-5, 1e-4): ${decade} of 400`);
    assert.ok(col('d').every((v) => Math.abs(v * 10 - Math.round(v * 10)) < 1e-9 && v >= 0 && v <= 1), 'q_uniform: multiples of q');
    assert.deepStrictEqual([...new Set(pts.map((p) => p.point.e))].sort(), ['x', 'y']);
    assert.deepStrictEqual([...new Set(col('f'))].sort(), [7, 8]);
    assert.ok(pts.every((p) => p.point.g === 'k'));
    assert.strictEqual(new Set(pts.map((p) => p.name)).size, 400, 'unique folder names');
  });

  it('the generator is deterministic and roughly uniform', () => {
    const r = mulberry32(3);
    const xs = Array.from({ length: 1000 }, r);
    assert.deepStrictEqual(Array.from({ length: 1000 }, mulberry32(3)), xs);
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    const mean = xs.reduce((a, b) => a + b) / xs.length;
    assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
    assert.strictEqual(drawParameter({ value: 3 }, r), 3);
  });
});

describe('sweeps: file validation', () => {
  it('a grid with a distribution names the parameter; errors name the file and field', () => {
    assert.throws(
      () => parseSweepText(JSON.stringify({ base: 'a.grpo.json', method: 'grid', metric, parameters: { learning_rate: { distribution: 'uniform', min: 0, max: 1 } } }), 'x.sweep.json'),
      (e: Error) => /x\.sweep\.json/.test(e.message) && /learning_rate/.test(e.message) && /uniform/.test(e.message),
    );
    assert.throws(() => parseSweepText(JSON.stringify({ base: 'a.grpo.json', method: 'random', metric, parameters: {} }), 'y.sweep.json'), /y\.sweep\.json.*run_cap/);
    assert.throws(() => parseSweepText(JSON.stringify({ base: 'a.grpo.json', method: 'grid', metric: { name: 'm', goal: 'up' }, parameters: {} }), 'z.sweep.json'), /z\.sweep\.json.*metric\.goal/);
    assert.throws(() => parseSweepText('{"base": 1,', 'w.sweep.json'), /w\.sweep\.json/);
  });

  it('every point is validated against the base spec: a bad value names the sweep file, the point, the field and the value', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-expand-'));
    for (const f of fs.readdirSync(arithDir)) fs.copyFileSync(path.join(arithDir, f), path.join(dir, f));
    const file = path.join(dir, 'bad.sweep.json');
    const s = sweep({ base: 'arith.grpo.json', method: 'grid', parameters: { group_size: { values: [4, -2] } } });
    await assert.rejects(expandSweep(file, s), (e: Error) => e.message.includes(file) && e.message.includes('point group_size_-2') && e.message.includes('group_size') && e.message.includes('-2') && !e.message.includes('group_size_4'));
    const ok = await expandSweep(file, sweep({ base: 'arith.grpo.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] }, 'dataset.holdout_max': { value: 5 } }, seeds: [3] }));
    assert.strictEqual(ok.kind, 'grpo');
    assert.deepStrictEqual(ok.points.map((p) => [(p.spec as { learning_rate: number }).learning_rate, (p.spec as { sampling_seed: number }).sampling_seed]), [[0.001, 3], [0.004, 3]]);
    assert.ok(path.isAbsolute((ok.points[0].spec as { reward: { file: string } }).reward.file));
    assert.strictEqual((ok.points[1].spec as { dataset: { holdout_max: number } }).dataset.holdout_max, 5, 'a dot path sets a nested field');
  });

  it('W&B: every run of a sweep logs into one group named after the sweep, each run named by its point', async () => {
    const file = path.join(arithDir, 'tiny.sweep.json');
    const ok = await expandSweep(file, sweep({ base: 'arith.grpo.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.004] } } }));
    const tracking = ok.points.map((p) => [(p.spec as { wandb_group?: string }).wandb_group, (p.spec as { wandb_name?: string }).wandb_name]);
    assert.deepStrictEqual(tracking, [['tiny', 'learning_rate_0.001'], ['tiny', 'learning_rate_0.004']]);
  });
});

describe('sweeps: the JSON schema contributed for *.sweep.json', () => {
  it('is built with the kinds\' schemas and describes the sweep fields', async () => {
    const { specJsonSchemas } = await import('../../../src/core/experiments/specSchemas');
    const built = (await specJsonSchemas()).find((b) => b.file === 'sweep.schema.json');
    assert.ok(built, 'sweep.schema.json is built');
    const props = (built.schema as { properties: Record<string, unknown> }).properties;
    for (const k of ['base', 'method', 'parameters', 'metric', 'run_cap', 'seed', 'seeds', 'max_concurrent', 'early_terminate']) assert.ok(props[k], `schema has ${k}`);
  });
});
