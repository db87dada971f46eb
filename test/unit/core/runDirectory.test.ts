import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { listRuns, mergeMetrics, summarizeRun } from '../../../src/core/runs/runDirectory';

describe('run directories', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-runs-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  function writeRun(name: string, files: Record<string, string>): string {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
    return dir;
  }

  it('summarises a cookbook-style run: steps merged, last reward, checkpoints, finished', async () => {
    const dir = writeRun('math-run', {
      'config.json': JSON.stringify({ model_name: 'Qwen/Qwen3-8B', learning_rate: 1e-4 }, null, 2),
      'metrics.jsonl':
        '{"step": 0, "env/all/reward/total": 0.1}\n{"step": 1, "env/all/reward/total": 0.3}\n{"step": 1, "test/env/all/reward/total": 0.2}\n{"step": 2, "time/total": 1.5}\n',
      'checkpoints.jsonl':
        '{"name": "000002", "batch": 2, "state_path": "tinker://r/weights/000002", "sampler_path": "tinker://r/sampler_weights/000002", "custom": 1}\n{"name": "final", "batch": 3, "state_path": "tinker://r/weights/final"}\n',
    });
    const run = await summarizeRun(dir);
    assert.strictEqual(run.name, 'math-run');
    assert.strictEqual(run.model, 'Qwen/Qwen3-8B');
    assert.strictEqual(run.steps, 3);
    assert.strictEqual(run.lastStep, 2);
    assert.strictEqual(run.lastReward, 0.3);
    assert.strictEqual(run.finished, true);
    assert.strictEqual(run.checkpoints.length, 2);
    assert.strictEqual(run.checkpoints[0]!.custom, 1, 'unknown checkpoint keys are preserved');
    assert.deepStrictEqual(run.problems, []);
  });

  it('names the file and line of a record that does not fit the schema', async () => {
    const dir = writeRun('bad', { 'metrics.jsonl': '{"step": 0}\n{"step": "one"}\n{"no_step": 1}\n' });
    const run = await summarizeRun(dir);
    assert.strictEqual(run.steps, 1);
    assert.deepStrictEqual(
      run.problems.map((p) => [path.basename(p.file), p.line]),
      [
        ['metrics.jsonl', 2],
        ['metrics.jsonl', 3],
      ],
    );
    assert.match(run.problems[0]!.message, /^step: /);
  });

  it('lists run directories newest first and ignores other folders', async () => {
    const older = writeRun('older', { 'metrics.jsonl': '{"step": 0}\n' });
    fs.utimesSync(path.join(older, 'metrics.jsonl'), new Date(2020, 1, 1), new Date(2020, 1, 1));
    fs.utimesSync(older, new Date(2020, 1, 1), new Date(2020, 1, 1));
    writeRun('newer', { 'config.json': '{}' });
    fs.mkdirSync(path.join(tmp, 'not-a-run'));
    fs.mkdirSync(path.join(tmp, '.hidden'));
    fs.writeFileSync(path.join(tmp, '.hidden', 'metrics.jsonl'), '{"step": 0}\n');
    const runs = await listRuns(tmp);
    assert.deepStrictEqual(
      runs.map((r) => r.name),
      ['newer', 'older'],
    );
    assert.deepStrictEqual(await listRuns(path.join(tmp, 'missing')), []);
  });

  it('merges repeated steps with later values winning', () => {
    assert.deepStrictEqual(
      mergeMetrics([
        { step: 1, a: 1 },
        { step: 0, a: 0 },
        { step: 1, a: 2, b: 3 },
      ]),
      [
        { step: 0, a: 0 },
        { step: 1, a: 2, b: 3 },
      ],
    );
  });
});
