// A short GRPO run on the engine with its service simulation: the step whose optim_step waits on a
// paused queue records time/queue_paused > 0, every other step records 0, and the run doctor reads
// the run's own rows. Real HTTP, real Python reward, real engine.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runGrpo } from '../../../src/core/grpo/loop';
import { loadRenderer } from '../../../src/core/render';
import { createRewardRunner } from '../../../src/core/reward';
import type { RewardRunner } from '../../../src/core/reward/types';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { QueueStateEvent } from '../../../src/core/tinker/futures';
import { createComputeBackend } from '../../../src/engine/model';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';
import type { ComputeBackend } from '../../../src/engine/contract';
import { diagnoseMetrics } from '../../../src/protocol/doctor';
import { METRIC } from '../../../src/protocol/metricKeys';
import { POOL, readMetricsLines, writeReward } from './engineFixture';

describe('GRPO run on a paused queue (service simulation)', function () {
  this.timeout(180_000);
  let dir: string;
  let backend: ComputeBackend | undefined;
  let server: EngineServer | undefined;
  let service: ServiceClient | undefined;
  let reward: RewardRunner | undefined;
  const events: QueueStateEvent[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-grpo-queue-'));
    backend = await createComputeBackend({ weightsDir: path.join(dir, 'no-weights') });
    server = await startEngineServer({
      dataDir: path.join(dir, 'engine-data'),
      backend,
      longPollMs: 2000,
      // the second step's optim_step waits three held polls on a rate-limited queue
      serviceSimulation: { pauses: [{ request: 'OptimStep', at: [2], queue_state: 'paused_rate_limit', reason: 'concurrent training clients rate limit hit', polls: 3, hold_ms: 100 }] },
    });
    service = await ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test', onQueueState: (e) => events.push(e) });
    reward = await createRewardRunner({ file: writeReward(dir), workers: 1 });
  });
  after(async () => {
    await reward?.close();
    service?.close();
    await server?.close();
    await backend?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('records time/queue_paused > 0 on the paused step and 0 on the others', async () => {
    const renderer = (await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') })).renderer;
    const writer = RunWriter.create(path.join(dir, 'runs'), 'queue');
    writer.writeConfig({ model_name: RANDOM_MODEL });
    const config = { model: RANDOM_MODEL, loraRank: 4, learningRate: 1e-3, groupsPerBatch: 2, groupSize: 2, maxTokens: 3, temperature: 1, iterations: 3, saveEvery: 0, evalEvery: 0, lossFn: 'importance_sampling' as const, removeConstantRewardGroups: false, seed: 1 };
    const result = await runGrpo({ service: service!, config, renderer, pool: POOL, reward: reward!, writer });
    assert.strictEqual(result.status, 'completed', result.error);

    const rows = readMetricsLines(writer.dir);
    assert.deepStrictEqual(rows.map((r) => r.step), [0, 1, 2]);
    const paused = rows.map((r) => r[METRIC.queuePaused]);
    assert.ok(typeof paused[1] === 'number' && paused[1] > 0, `step 1 waited on the paused queue: ${paused[1]}`);
    assert.strictEqual(paused[0], 0);
    assert.strictEqual(paused[2], 0);
    assert.ok((paused[1] as number) <= (rows[1]![METRIC.timeTotal] as number), 'the time paused is within the step');
    assert.deepStrictEqual(
      events.map((e) => `${e.requestType} ${e.queueState}`),
      ['OptimStep paused_rate_limit', 'OptimStep paused_rate_limit', 'OptimStep paused_rate_limit', 'OptimStep active'],
    );
  });
});

describe('run doctor: time on a paused queue', () => {
  const series = (rows: Array<Record<string, number>>) => (key: string) => rows.map((r) => (key in r ? r[key]! : null));

  it('says so when most of the run went waiting, with the figures', () => {
    const rows = [
      { [METRIC.timeTotal]: 10, [METRIC.queuePaused]: 8 },
      { [METRIC.timeTotal]: 10, [METRIC.queuePaused]: 0 },
      { [METRIC.timeTotal]: 20, [METRIC.queuePaused]: 16 },
    ];
    const f = diagnoseMetrics([0, 1, 2], series(rows));
    assert.deepStrictEqual(
      f.map((x) => x.id),
      ['queue-waiting'],
    );
    assert.match(f[0]!.evidence, /for 24 s of the steps' 40 s \(60%\)/);
  });

  it('is silent when waiting was the smaller part, or the run has no such records', () => {
    const some = [
      { [METRIC.timeTotal]: 10, [METRIC.queuePaused]: 4 },
      { [METRIC.timeTotal]: 10, [METRIC.queuePaused]: 0 },
      { [METRIC.timeTotal]: 10, [METRIC.queuePaused]: 1 },
    ];
    assert.deepStrictEqual(diagnoseMetrics([0, 1, 2], series(some)), []);
    const none = [{ [METRIC.timeTotal]: 10 }, { [METRIC.timeTotal]: 10 }, { [METRIC.timeTotal]: 10 }];
    assert.deepStrictEqual(diagnoseMetrics([0, 1, 2], series(none)), []);
  });
});
