// Auto-checkpoint on reward: the tracker's rule (smoothed train reward or holdout reward, new best
// above the threshold, after the minimum iterations, the best kept across a resume), and the GRPO
// loop on the embedded engine saving a named state + sampler checkpoint of the weights that earned it.
import * as assert from 'assert';
import * as path from 'path';
import { AUTO_FIELD, AutoCheckpointConfig, AutoCheckpointTracker } from '../../../src/core/grpo/autoCheckpoint';
import { GrpoLoopConfig, runGrpo } from '../../../src/core/grpo/loop';
import { loadRenderer } from '../../../src/core/render';
import { createRewardRunner } from '../../../src/core/reward';
import { GrpoSpec } from '../../../src/core/grpo/spec';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, POOL, readCheckpointLines, readMetricsLines, startEngineClient, writeReward } from './engineFixture';

const cfg = (o: Partial<AutoCheckpointConfig> = {}): AutoCheckpointConfig => ({ metric: 'train', threshold: 0.5, minIterations: 2, smoothing: 0.5, prefix: 'best', ...o });

describe('Auto-checkpoint on reward', function () {
  this.timeout(180_000);

  it('saves on a new best of the smoothed train reward above the threshold, after the minimum iterations', () => {
    const t = new AutoCheckpointTracker(cfg());
    const seen = [0.9, 0.9, 0.3, 1, 1, 0.2, 1].map((r, step) => t.observe(step, { train: r })?.value);
    // smoothed: 0.9, 0.9, 0.6, 0.8, 0.9, 0.55, 0.775; steps 0-1 are before min_iterations
    assert.deepStrictEqual(seen.map((v) => (v === undefined ? undefined : Number(v.toFixed(3)))), [undefined, undefined, 0.6, 0.8, 0.9, undefined, undefined]);
    assert.strictEqual(t.observe(7, { train: 0.2 }), undefined, 'a fall never saves');
  });

  it('names the checkpoint and records the reward; a resumed run keeps its earlier best', () => {
    const d = new AutoCheckpointTracker(cfg({ metric: 'holdout', threshold: 0, minIterations: 0, prefix: 'top' })).observe(4, { train: 0.1, holdout: 0.7 });
    assert.deepStrictEqual(d, { value: 0.7, name: 'top-000004', extra: { [AUTO_FIELD]: { metric: 'holdout', value: 0.7, step: 4 } } });
    const resumed = new AutoCheckpointTracker(cfg({ metric: 'holdout', threshold: 0, minIterations: 0 }), [{ name: 'top-000004', batch: 4, ...d!.extra }]);
    assert.strictEqual(resumed.bestValue, 0.7);
    assert.strictEqual(resumed.observe(5, { holdout: 0.6 }), undefined);
    assert.strictEqual(resumed.observe(6, { train: 1 }), undefined, 'holdout is watched, not train');
    assert.strictEqual(resumed.observe(7, { holdout: 0.8 })?.name, 'best-000007');
  });

  it('is a spec option with defaults; "holdout" needs evaluations', () => {
    const base = { model: 'm', max_tokens: 4, iterations: 3, dataset: { path: 'd.jsonl' }, reward: { file: 'r.py' } };
    const s = GrpoSpec.parse({ ...base, auto_checkpoint: {} });
    assert.deepStrictEqual(s.auto_checkpoint, { metric: 'train', threshold: 0, min_iterations: 1, smoothing: 0.8, name: 'best' });
    const bad = GrpoSpec.safeParse({ ...base, eval_every: 0, auto_checkpoint: { metric: 'holdout' } });
    assert.ok(!bad.success && bad.error.issues.some((i) => i.path.join('.') === 'auto_checkpoint.metric' && /needs eval_every > 0/.test(i.message)));
    assert.ok(!GrpoSpec.safeParse({ ...base, auto_checkpoint: { smoothing: 1 } }).success, 'smoothing below 1');
  });

  describe('in the GRPO loop on the embedded engine', () => {
    let dir: string;
    let env: EngineClient | undefined;
    let service: ServiceClient;

    before(async () => {
      env = await startEngineClient('tinker-auto-ckpt-');
      ({ dir, service } = env);
    });
    after(async () => {
      await env?.close();
    });

    it('saves a named state + sampler checkpoint at each new best, recorded at the step whose rewards set it', async () => {
      const renderer = (await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') })).renderer;
      const reward = await createRewardRunner({ file: writeReward(dir), workers: 1 });
      const writer = RunWriter.create(path.join(dir, 'runs'), 'auto');
      const config: GrpoLoopConfig = {
        model: RANDOM_MODEL,
        loraRank: 4,
        learningRate: 1e-3,
        groupsPerBatch: 3,
        groupSize: 4,
        maxTokens: 4,
        temperature: 1,
        iterations: 4,
        saveEvery: 0,
        evalEvery: 0,
        lossFn: 'importance_sampling',
        removeConstantRewardGroups: false,
        seed: 1,
        samplingSeed: 7,
        // any reward beats -1: the first step at min_iterations saves, later ones only on a new best
        autoCheckpoint: { metric: 'train', threshold: -1, minIterations: 1, smoothing: 0, prefix: 'best' },
      };
      try {
        const r = await runGrpo({ service, config, renderer, pool: POOL, reward, writer });
        assert.strictEqual(r.status, 'completed', r.error);
      } finally {
        await reward.close();
        writer.close();
      }
      const rewards = new Map(readMetricsLines(writer.dir).map((m) => [m.step, m['env/all/reward/total'] as number]));
      const auto = readCheckpointLines(writer.dir).filter((c) => c.name.startsWith('best-'));
      // the expected saves follow from the logged rewards alone
      let best = -Infinity;
      const expected: number[] = [];
      for (let step = 1; step < 4; step++) {
        const r = rewards.get(step)!;
        if (r > best) {
          best = r;
          expected.push(step);
        }
      }
      assert.ok(expected.length >= 1);
      assert.deepStrictEqual(auto.map((c) => c.batch), expected);
      for (const c of auto) {
        assert.strictEqual(c.name, `best-${String(c.batch).padStart(6, '0')}`);
        assert.ok(c.state_path && c.sampler_path, 'state and sampler');
        assert.strictEqual((c[AUTO_FIELD] as { value: number }).value, rewards.get(c.batch!));
        const info = await service.weightsInfo(c.state_path);
        assert.strictEqual(info.base_model, RANDOM_MODEL);
      }
      assert.ok(readCheckpointLines(writer.dir).some((c) => c.name === 'final'), 'the final checkpoint still follows');
    });
  });
});
