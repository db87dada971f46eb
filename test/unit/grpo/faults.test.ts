// Faults at the level of a whole GRPO run (the real loop, the real embedded engine over HTTP, real
// Python reward workers): a disk that fills up while records are written (an injected ENOSPC from the
// run writer) stops the run cleanly with nothing already written corrupted, and resume completes it
// with no step lost or repeated; a reward worker killed in the middle of an iteration scores its case
// 0 with a clear error and the run goes on.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { GrpoLoopConfig, runGrpo } from '../../../src/core/grpo/loop';
import type { RunEvent } from '../../../src/core/runs/runEvents';
import { loadRenderer } from '../../../src/core/render';
import type { Renderer } from '../../../src/core/render/types';
import { createRewardRunner } from '../../../src/core/reward';
import type { RewardRunner } from '../../../src/core/reward/types';
import { mergeMetrics } from '../../../src/core/runs/runDirectory';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, POOL, TestEngine, appliedSteps, assertNoPartialLines, readCheckpointLines, readJsonl, readMetricsLines, startEngineClient, writeReward } from './engineFixture';

const config = (o: Partial<GrpoLoopConfig> = {}): GrpoLoopConfig => ({
  model: RANDOM_MODEL,
  loraRank: 4,
  learningRate: 1e-3,
  groupsPerBatch: 3,
  groupSize: 4,
  maxTokens: 4,
  temperature: 1,
  iterations: 3,
  saveEvery: 1,
  evalEvery: 0,
  lossFn: 'importance_sampling',
  removeConstantRewardGroups: false,
  seed: 1,
  ...o,
});

const KILLED_WORKER_PY = `
import os, signal

def compute_reward(completion, ground_truth):
    if ground_truth == "boom":
        os.kill(os.getpid(), signal.SIGKILL)
    return 1.0 if len(completion) % 2 == 0 else 0.0
`;

describe('GRPO run under faults (disk full, reward worker killed)', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: TestEngine;
  let env: EngineClient | undefined;
  let service: ServiceClient;
  let renderer: Renderer;

  before(async () => {
    env = await startEngineClient('tinker-grpo-faults-');
    ({ dir, engine, service } = env);
    renderer = (await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') })).renderer;
  });
  after(async () => {
    await env?.close();
  });

  it('disk full while writing records: the run stops cleanly, what was written is intact, and resume repeats and loses nothing', async () => {
    const reward = await createRewardRunner({ file: writeReward(fs.mkdtempSync(path.join(dir, 'r-'))), workers: 1 });
    try {
      const writer = RunWriter.create(path.join(dir, 'runs'), 'disk-full');
      writer.writeConfig({ model_name: RANDOM_MODEL });
      // the fault: from step 1 on, appending a metrics line fails as a full disk does
      const append = writer.appendMetrics.bind(writer);
      writer.appendMetrics = (step, metrics) => {
        if (step >= 1) throw Object.assign(new Error(`ENOSPC: no space left on device, write '${path.join(writer.dir, 'metrics.jsonl')}'`), { code: 'ENOSPC' });
        append(step, metrics);
      };
      const events: RunEvent[] = [];
      const first = await runGrpo({ service, config: config(), renderer, pool: POOL, reward, writer, onEvent: (e) => events.push(e) });
      assert.strictEqual(first.status, 'failed');
      assert.match(first.error ?? '', /ENOSPC: no space left on device/);
      assert.deepStrictEqual(events.at(-1), { type: 'finished', runDir: writer.dir, status: 'failed', lastStep: 0 });
      assert.match(fs.readFileSync(path.join(writer.dir, 'logs.log'), 'utf8'), /failed at step 1: ENOSPC/);
      assertNoPartialLines(writer.dir);
      assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0], 'step 0 intact, nothing of step 1');
      const resumeFrom = writer.lastStateCheckpoint();
      assert.strictEqual(resumeFrom?.batch, 1);
      writer.close();

      const again = RunWriter.open(writer.dir);
      const second = await runGrpo({ service, config: config(), renderer, pool: POOL, reward, writer: again, resumeFrom });
      again.close();
      assert.strictEqual(second.status, 'completed', second.error);
      assert.strictEqual(second.iterationsRun, 2);
      assertNoPartialLines(writer.dir);
      const lines = readMetricsLines(writer.dir);
      assert.deepStrictEqual(lines.map((l) => l.step), [0, 1, 2], 'every step once, none repeated');
      assert.deepStrictEqual(mergeMetrics(lines).map((l) => l.step), [0, 1, 2]);
      const final = readCheckpointLines(writer.dir).at(-1);
      assert.strictEqual(final?.name, 'final');
      const resumedModel = String(final?.state_path).slice('tinker://'.length).split('/')[0];
      const applied = (await appliedSteps(engine)).filter((s) => s.model_id === resumedModel).map((s) => s.type);
      assert.strictEqual(applied[0], 'load_weights', 'the resumed model starts from the saved state');
      assert.strictEqual(applied.filter((t) => t === 'optim_step').length, 2, 'one update for each remaining step');
    } finally {
      await reward.close();
    }
  });

  it('a reward worker killed mid-iteration: its case scores 0 with a clear error, the run goes on', async () => {
    const file = path.join(fs.mkdtempSync(path.join(dir, 'r-')), 'reward.py');
    fs.writeFileSync(file, KILLED_WORKER_PY);
    const reward: RewardRunner = await createRewardRunner({ file, workers: 1 });
    try {
      const writer = RunWriter.create(path.join(dir, 'runs'), 'killed-worker');
      writer.writeConfig({ model_name: RANDOM_MODEL });
      const events: RunEvent[] = [];
      const result = await runGrpo({ service, config: config({ iterations: 2, saveEvery: 0 }), renderer, pool: POOL, reward, writer, onEvent: (e) => events.push(e) });
      writer.close();
      assert.strictEqual(result.status, 'completed', result.error);
      assert.deepStrictEqual(readMetricsLines(writer.dir).map((l) => l.step), [0, 1]);
      // batch 0 holds problems t:1..t:3; every sample of t:3 ("boom") kills its worker
      const samples = readJsonl(path.join(writer.dir, 'iteration_000000', 'train_samples.jsonl')) as Array<Record<string, unknown>>;
      const boom = samples.filter((x) => x.problem_id === 't:3');
      assert.strictEqual(boom.length, 4);
      for (const b of boom) {
        assert.strictEqual(b.reward, 0);
        const err = b.reward_error as { kind: string; message: string };
        assert.strictEqual(err.kind, 'crash');
        assert.match(err.message, /killed by SIGKILL.*replaced/);
      }
      assert.ok(samples.filter((x) => x.problem_id !== 't:3').every((x) => x.reward_error === undefined), 'the other cases were scored');
      assert.ok(events.some((e) => e.type === 'warning' && e.step === 0 && /4 of 12 train rewards failed/.test(e.message)));
      assertNoPartialLines(writer.dir);
    } finally {
      await reward.close();
    }
  });
});
