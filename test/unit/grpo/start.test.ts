// startGrpoRun, the entry the CLI and the VS Code command share: from a spec file to a finished run
// directory (config.json with the resolved values), then resuming a finished run is a no-op that
// does not even connect; problems found before the run directory exists reject with the file named.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startGrpoRun } from '../../../src/core/grpo/start';
import type { RunEvent } from '../../../src/core/runs/runEvents';
import { ServiceClient } from '../../../src/core/tinker/client';
import { TestEngine, readCheckpointLines, readMetricsLines, startTestEngine, writeReward } from './engineFixture';

describe('startGrpoRun', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: TestEngine;
  let specFile: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-grpo-start-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n{"question":"What is 3 + 3?","answer":6}\n');
    fs.writeFileSync(path.join(dir, 'holdout.jsonl'), '{"question":"What is 5 + 5?","answer":10}\n');
    writeReward(dir);
    specFile = path.join(dir, 'tiny.grpo.json');
    fs.writeFileSync(
      specFile,
      JSON.stringify({
        model: 'tinker-studio/random-gpt',
        lora_rank: 4,
        learning_rate: 0.001,
        groups_per_batch: 2,
        group_size: 2,
        max_tokens: 3,
        iterations: 2,
        save_every: 0,
        eval_every: 1,
        dataset: { path: 'train.jsonl', holdout: { path: 'holdout.jsonl' } },
        reward: { file: 'reward.py', workers: 1 },
      }),
    );
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs a spec file into <name>-YYYYMMDD-HHMMSS with the spec and its resolved values in config.json; resuming it afterwards does nothing', async () => {
    let connects = 0;
    const connect = async () => {
      connects++;
      return ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
    };
    const runsDir = path.join(dir, 'runs');
    const events: RunEvent[] = [];
    const r = await startGrpoRun({ specFile, runsDir, connect, cacheDir: path.join(dir, 'cache'), onEvent: (e) => events.push(e) });
    assert.strictEqual(r.status, 'completed', r.error);
    assert.strictEqual(r.iterationsRun, 2);
    assert.match(path.basename(r.runDir), /^tiny-\d{8}-\d{6}$/);
    assert.strictEqual(path.dirname(r.runDir), runsDir);
    const config = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.strictEqual(config.model_name, 'tinker-studio/random-gpt');
    assert.strictEqual(config.renderer_name, 'chatml', 'the renderer chosen from the model');
    assert.strictEqual(config.learning_rate, 0.001);
    assert.strictEqual(config.group_size, 2);
    assert.strictEqual(config.spec_file, specFile);
    assert.strictEqual((config.dataset as { path: string }).path, path.join(dir, 'train.jsonl'), 'paths stored absolute');
    assert.deepStrictEqual(readMetricsLines(r.runDir).map((l) => typeof l['test/env/all/reward/total']), ['number', 'number']);
    assert.strictEqual(typeof r.firstTestReward, 'number');
    assert.deepStrictEqual(readCheckpointLines(r.runDir).map((c) => c.name), ['final']);
    assert.strictEqual(connects, 1);

    const again = await startGrpoRun({ resumeDir: r.runDir, runsDir, connect, cacheDir: path.join(dir, 'cache') });
    assert.deepStrictEqual(again, { kind: 'grpo', runDir: r.runDir, status: 'completed', iterationsRun: 0 });
    assert.strictEqual(connects, 1, 'a complete run is not reopened');
    assert.strictEqual(readMetricsLines(r.runDir).length, 2);
  });

  it('rejects before creating anything when the reward file does not load', async () => {
    const bad = path.join(dir, 'bad-reward.grpo.json');
    fs.writeFileSync(path.join(dir, 'broken.py'), 'def compute_reward(completion):\n    return 1.0\n');
    const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(bad, JSON.stringify({ ...spec, reward: { file: 'broken.py' } }));
    const runsDir = path.join(dir, 'runs-bad');
    await assert.rejects(startGrpoRun({ specFile: bad, runsDir, connect: () => Promise.reject(new Error('must not connect')), cacheDir: path.join(dir, 'cache') }), /broken\.py|compute_reward/);
    assert.ok(!fs.existsSync(runsDir));
  });
});
