// What a suite runs on: a base model name, a tinker:// path, a run directory (its final sampler
// checkpoint) or "latest" (the newest run with sampler checkpoints), read from run folders on disk.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { resolveSuiteCheckpoint } from '../../../src/core/suite/checkpoint';

describe('suite checkpoints', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-suite-ck-'));
    const run = (name: string, lines: object[], mtime: number) => {
      const d = path.join(dir, 'runs', name);
      fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(path.join(d, 'checkpoints.jsonl'), lines.map((l) => JSON.stringify(l) + '\n').join(''));
      fs.utimesSync(path.join(d, 'checkpoints.jsonl'), mtime, mtime);
      fs.utimesSync(d, mtime, mtime);
    };
    run('old', [{ name: 'final', batch: 3, state_path: 'tinker://old/weights/final', sampler_path: 'tinker://old/sampler_weights/final' }], 1_000_000);
    run('new', [
      { name: '000010', batch: 10, state_path: 'tinker://new/weights/000010', sampler_path: 'tinker://new/sampler_weights/000010' },
      { name: 'final', batch: 12, state_path: 'tinker://new/weights/final', sampler_path: 'tinker://new/sampler_weights/final' },
      { name: 'extra', batch: 12, state_path: 'tinker://new/weights/extra', sampler_path: 'tinker://new/sampler_weights/extra' },
    ], 2_000_000);
    run('states-only', [{ name: 'final', state_path: 'tinker://s/weights/final' }], 500_000);
    fs.mkdirSync(path.join(dir, 'plain'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a run stands for its final sampler checkpoint; latest is the newest run with one', async () => {
    const runs = path.join(dir, 'runs');
    assert.deepStrictEqual(await resolveSuiteCheckpoint('latest', { runsDirs: [runs] }), { label: 'new/final', path: 'tinker://new/sampler_weights/final' });
    assert.deepStrictEqual(await resolveSuiteCheckpoint(`latest:${runs}`), { label: 'new/final', path: 'tinker://new/sampler_weights/final' });
    assert.deepStrictEqual(await resolveSuiteCheckpoint('runs/old', { cwd: dir }), { label: 'old/final', path: 'tinker://old/sampler_weights/final' });
    await assert.rejects(resolveSuiteCheckpoint('runs/states-only', { cwd: dir }), /has no sampler checkpoint/);
    await assert.rejects(resolveSuiteCheckpoint('plain', { cwd: dir }), /is a folder but not a run directory/);
    await assert.rejects(resolveSuiteCheckpoint('latest', { runsDirs: [path.join(dir, 'plain')] }), /latest: no run with sampler checkpoints in/);
  });

  it('a base model names its own model; a tinker:// path leaves it to the server', async () => {
    assert.deepStrictEqual(await resolveSuiteCheckpoint('tinker-studio/arith-gpt', { cwd: dir }), { label: 'tinker-studio/arith-gpt', path: 'tinker-studio/arith-gpt', model: 'tinker-studio/arith-gpt' });
    assert.deepStrictEqual(await resolveSuiteCheckpoint('tinker://x/sampler_weights/1'), { label: 'tinker://x/sampler_weights/1', path: 'tinker://x/sampler_weights/1' });
    await assert.rejects(resolveSuiteCheckpoint('  '), /give a checkpoint/);
  });
});
