// Prompt pools: train and holdout from a file or a fraction, in an order fixed by the seed.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { holdoutCount, loadPromptPool, PromptPoolOptions } from '../../../src/core/data/pool';
import { mulberry32, shuffled } from '../../../src/core/data/prng';
import { DatasetSpec } from '../../../src/core/grpo/spec';
import type { PromptPool } from '../../../src/core/data/types';

const questions = (n: number, from = 0) => Array.from({ length: n }, (_, i) => JSON.stringify({ question: `q${from + i}`, answer: from + i })).join('\n') + '\n';
const ids = (pool: PromptPool) => ({ train: pool.train.map((p) => p.groundTruth), holdout: pool.holdout.map((p) => p.groundTruth) });

describe('prompt pools', () => {
  let dir: string;
  let opts: PromptPoolOptions;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-pool-'));
    fs.writeFileSync(path.join(dir, 'train.jsonl'), questions(50));
    fs.writeFileSync(path.join(dir, 'holdout.jsonl'), questions(10, 1000));
    opts = { specDir: dir, seed: 0, cacheDir: path.join(dir, 'cache') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const load = (dataset: unknown, o: Partial<PromptPoolOptions> = {}) => loadPromptPool(DatasetSpec.parse(dataset), { ...opts, ...o });

  it('without a holdout: every problem trains, in an order shuffled by the seed', async () => {
    const pool = await load({ path: 'train.jsonl' });
    assert.strictEqual(pool.holdout.length, 0);
    const order = pool.train.map((p) => Number(p.groundTruth));
    assert.deepStrictEqual([...order].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i));
    assert.notDeepStrictEqual(order, Array.from({ length: 50 }, (_, i) => i));
  });

  it('with a holdout file: the file is the holdout, the dataset the train set, ids name each file', async () => {
    const pool = await load({ path: 'train.jsonl', holdout: { path: 'holdout.jsonl' } });
    assert.strictEqual(pool.train.length, 50);
    assert.deepStrictEqual(pool.holdout.map((p) => Number(p.groundTruth)).sort((a, b) => a - b), Array.from({ length: 10 }, (_, i) => 1000 + i));
    assert.ok(pool.train.every((p) => /^train\.jsonl:\d+$/.test(p.id)));
    assert.ok(pool.holdout.every((p) => /^holdout\.jsonl:\d+$/.test(p.id)));
  });

  it('with a fraction: a disjoint split of round(fraction·n) problems, together all of them', async () => {
    const pool = await load({ path: 'train.jsonl', holdout: { fraction: 0.2 } });
    assert.strictEqual(pool.holdout.length, 10);
    assert.strictEqual(pool.train.length, 40);
    const all = [...pool.train, ...pool.holdout].map((p) => p.id);
    assert.strictEqual(new Set(all).size, 50);
  });

  it('the same seed gives the same split and order; another seed another', async () => {
    const spec = { path: 'train.jsonl', holdout: { fraction: 0.2 } };
    const a = ids(await load(spec, { seed: 7 }));
    const b = ids(await load(spec, { seed: 7 }));
    const c = ids(await load(spec, { seed: 8 }));
    assert.deepStrictEqual(a, b);
    assert.notDeepStrictEqual(a.holdout, c.holdout);
    assert.notDeepStrictEqual(a.train, c.train);
    const f1 = ids(await load({ path: 'train.jsonl', holdout: { path: 'holdout.jsonl' } }, { seed: 3 }));
    const f2 = ids(await load({ path: 'train.jsonl', holdout: { path: 'holdout.jsonl' } }, { seed: 3 }));
    assert.deepStrictEqual(f1, f2);
  });

  it('the split is the documented one: mulberry32(seed) drives a Fisher–Yates shuffle, the holdout first', async () => {
    const pool = await load({ path: 'train.jsonl', holdout: { fraction: 0.1 } }, { seed: 42 });
    const expected = shuffled(Array.from({ length: 50 }, (_, i) => String(i)), mulberry32(42));
    assert.deepStrictEqual(ids(pool), { holdout: expected.slice(0, 5), train: expected.slice(5) });
  });

  it('holdout_max caps the holdout to a seeded sample', async () => {
    const pool = await load({ path: 'train.jsonl', holdout: { path: 'holdout.jsonl' }, holdout_max: 3 });
    assert.strictEqual(pool.holdout.length, 3);
    assert.strictEqual(pool.train.length, 50);
  });

  it('passes skipped lines of both files on, under "skip"', async () => {
    fs.appendFileSync(path.join(dir, 'train.jsonl'), '{"question": "no answer"}\n');
    fs.appendFileSync(path.join(dir, 'holdout.jsonl'), 'oops\n');
    const pool = await load({ path: 'train.jsonl', holdout: { path: 'holdout.jsonl' }, on_invalid_line: 'skip' });
    assert.deepStrictEqual(
      pool.skipped.map((s) => s.where),
      ['train.jsonl:51', 'holdout.jsonl:11'],
    );
  });

  it('a dataset with no usable problem is an error that says why', async () => {
    fs.writeFileSync(path.join(dir, 'empty.jsonl'), '\n');
    await assert.rejects(load({ path: 'empty.jsonl' }), { message: 'dataset: no problems in empty.jsonl' });
    fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"q": 1}\n');
    await assert.rejects(load({ path: 'bad.jsonl', on_invalid_line: 'skip' }), {
      message: 'dataset: no problems in bad.jsonl (1 skipped as invalid; first: bad.jsonl:1: missing field "question" (or a "messages" chat list))',
    });
  });

  it('a dataset file outside the spec folder is named relative to it ("../…"): ids do not depend on where the folders live', async () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-pool-other-'));
    try {
      fs.writeFileSync(path.join(other, 't.jsonl'), questions(2));
      const rel = `../${path.basename(other)}/t.jsonl`;
      for (const given of [path.join(other, 't.jsonl'), rel]) {
        const pool = await load({ path: given });
        assert.ok(pool.train.every((p) => p.id.startsWith(`${rel}:`)), pool.train[0]!.id);
      }
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  describe('holdoutCount', () => {
    it('rounds, keeps at least one when asked for some, and never takes them all', () => {
      assert.strictEqual(holdoutCount(100, 0.1), 10);
      assert.strictEqual(holdoutCount(100, 0), 0);
      assert.strictEqual(holdoutCount(5, 0.01), 1);
      assert.strictEqual(holdoutCount(2, 0.5), 1);
      assert.strictEqual(holdoutCount(1, 0.5), 0);
    });
  });
});

describe('seeded shuffling', () => {
  it('is a permutation, the same for the same seed', () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const a = shuffled(items, mulberry32(1));
    assert.deepStrictEqual([...a].sort((x, y) => x - y), items);
    assert.deepStrictEqual(shuffled(items, mulberry32(1)), a);
    assert.notDeepStrictEqual(shuffled(items, mulberry32(2)), a);
    assert.deepStrictEqual(items, Array.from({ length: 100 }, (_, i) => i), 'the input is left as it was');
  });

  it('draws floats in [0, 1) that spread evenly', () => {
    const rand = mulberry32(123);
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 20000; i++) {
      const v = rand();
      assert.ok(v >= 0 && v < 1);
      buckets[Math.floor(v * 10)]!++;
    }
    for (const b of buckets) assert.ok(b > 1800 && b < 2200, String(buckets));
  });

  it('puts every item in every position about equally often', () => {
    const counts = Array.from({ length: 4 }, () => new Array<number>(4).fill(0));
    const rand = mulberry32(9);
    for (let t = 0; t < 8000; t++) shuffled([0, 1, 2, 3], rand).forEach((item, pos) => counts[item]![pos]!++);
    for (const row of counts) for (const c of row) assert.ok(c > 1800 && c < 2200, JSON.stringify(counts));
  });
});
