// Ranking runs by a sweep metric, and sweep.json read back through its schema.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { rankRuns } from '../../../src/core/experiments/ranking';
import { readSweepManifest, writeSweepManifest, SweepManifest } from '../../../src/core/experiments/sweepManifest';

const M = 'env/all/reward/total';

describe('experiments: ranking', () => {
  it('maximize: best value over the run, its step, the last value; best first', () => {
    const ranked = rankRuns(
      [
        { id: 'a', rows: [{ step: 0, [M]: 0.1 }, { step: 1, [M]: 0.5 }, { step: 2, [M]: 0.3 }] },
        { id: 'b', rows: [{ step: 0, [M]: 0.2 }, { step: 1, [M]: 0.7 }] },
        { id: 'c', rows: [{ step: 0, other: 1 }] },
      ],
      { name: M, goal: 'maximize' },
    );
    assert.deepStrictEqual(ranked, [
      { id: 'b', best: 0.7, bestStep: 1, last: 0.7, rank: 1 },
      { id: 'a', best: 0.5, bestStep: 1, last: 0.3, rank: 2 },
      { id: 'c' },
    ]);
  });

  it('minimize ranks the lowest first; a metric logged only at some steps (a test/ metric) counts where it exists', () => {
    const ranked = rankRuns(
      [
        { id: 'x', rows: [{ step: 0, 'test/nll': 2 }, { step: 1 }, { step: 2, 'test/nll': 1.5 }] },
        { id: 'y', rows: [{ step: 0, 'test/nll': 1.2 }, { step: 5, 'test/nll': 1.4 }] },
        { id: 'z', rows: [] },
      ],
      { name: 'test/nll', goal: 'minimize' },
    );
    assert.deepStrictEqual(ranked.map((r) => [r.id, r.best, r.bestStep, r.last, r.rank]), [
      ['y', 1.2, 0, 1.4, 1],
      ['x', 1.5, 2, 1.5, 2],
      ['z', undefined, undefined, undefined, undefined],
    ]);
  });

  it('ties share a rank; non-numeric values are ignored', () => {
    const ranked = rankRuns(
      [
        { id: 'a', rows: [{ step: 0, m: 1 }] },
        { id: 'b', rows: [{ step: 0, m: 'NaN' }, { step: 1, m: 1 }] },
        { id: 'c', rows: [{ step: 0, m: 0 }] },
      ],
      { name: 'm', goal: 'maximize' },
    );
    assert.deepStrictEqual(ranked.map((r) => [r.id, r.rank]), [['a', 1], ['b', 1], ['c', 3]]);
  });
});

describe('experiments: sweep manifest', () => {
  it('round-trips through sweep.json; a bad field is named with the file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-manifest-'));
    const m: SweepManifest = {
      kind: 'sweep',
      name: 'tiny',
      file: '/x/tiny.sweep.json',
      metric: { name: M, goal: 'maximize' },
      swept: ['learning_rate'],
      runs: [{ name: 'learning_rate_0.001', point: { learning_rate: 0.001 } }, { name: 'learning_rate_0.004.seed_1', point: { learning_rate: 0.004 }, seed: 1 }],
    };
    writeSweepManifest(dir, m);
    assert.deepStrictEqual(readSweepManifest(dir), m);
    fs.writeFileSync(path.join(dir, 'sweep.json'), JSON.stringify({ ...m, metric: { name: M, goal: 'up' } }));
    assert.throws(() => readSweepManifest(dir), (e: Error) => e.message.includes(path.join(dir, 'sweep.json')) && e.message.includes('metric.goal'));
  });
});
