// Dry runs of an edited reward function: re-scoring a finished run's samples (a real GRPO run on the
// embedded engine) grouped as the run grouped them, and scoring fresh samples from the model.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { groupBreakdown } from '../../../src/core/rollouts/advantages';
import { runGrpo } from '../../../src/core/grpo/loop';
import { loadRenderer } from '../../../src/core/render';
import type { Renderer } from '../../../src/core/render/types';
import { createRewardRunner } from '../../../src/core/reward';
import { dryRunMarkdown, dryRunOnModel, dryRunOnRun } from '../../../src/core/rollouts/dryRun';
import { examplesFromRun, readRunSamples, runsUsingReward } from '../../../src/core/reward/runSamples';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { POOL, startTestEngine, TestEngine } from '../grpo/engineFixture';
import { tempDir } from './fixtures';

// the run's reward: even-length completions score 1
const RUN_REWARD = 'def compute_reward(completion, ground_truth):\n    return 1.0 if len(completion) % 2 == 0 else 0.0\n';
// the edit under test: everything scores 0 except the empty completion
const EDITED = 'def compute_reward(completion, ground_truth):\n    return 1.0 if completion == "" else 0.0\n';

describe('Reward dry runs', function () {
  this.timeout(180_000);
  let dir: string;
  let engine: TestEngine;
  let service: ServiceClient;
  let renderer: Renderer;
  let rewardFile: string;
  let runDir: string;

  before(async () => {
    dir = tempDir();
    engine = await startTestEngine(dir);
    service = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
    renderer = (await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') })).renderer;
    rewardFile = path.join(dir, 'reward.py');
    fs.writeFileSync(rewardFile, RUN_REWARD);
    const reward = await createRewardRunner({ file: rewardFile, workers: 1 });
    const writer = RunWriter.create(path.join(dir, 'runs'), 'dry');
    writer.writeConfig({ model_name: RANDOM_MODEL, reward: { file: rewardFile } });
    runDir = writer.dir;
    try {
      const result = await runGrpo({
        service,
        config: { model: RANDOM_MODEL, loraRank: 4, learningRate: 1e-3, groupsPerBatch: 3, groupSize: 4, maxTokens: 4, temperature: 1, iterations: 2, saveEvery: 0, evalEvery: 0, lossFn: 'importance_sampling', removeConstantRewardGroups: false, seed: 3 },
        renderer,
        pool: POOL,
        reward,
        writer,
      });
      assert.strictEqual(result.status, 'completed', result.error);
    } finally {
      await reward.close();
    }
  });
  after(async () => {
    service?.close();
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds the runs that used a reward file, and reads the last iteration grouped as the run grouped it', async () => {
    assert.deepStrictEqual(await runsUsingReward(path.join(dir, 'runs'), rewardFile), [runDir]);
    assert.deepStrictEqual(await runsUsingReward(path.join(dir, 'runs'), path.join(dir, 'other.py')), []);
    const samples = await readRunSamples(runDir);
    assert.deepStrictEqual(samples.iterations, [1]);
    assert.deepStrictEqual(samples.problems, []);
    assert.deepStrictEqual(samples.groups.map((g) => [g.groupIdx, g.samples.length]), [[0, 4], [1, 4], [2, 4]]);
    const all = await readRunSamples(runDir, 'all');
    assert.deepStrictEqual(all.iterations, [0, 1]);
    assert.strictEqual(all.groups.length, 6);
    const examples = examplesFromRun(samples, 2);
    assert.deepStrictEqual(examples.map((e) => [e.completion, e.groundTruth, e.recorded]), samples.groups.slice(0, 2).map((g) => [g.samples[0]!.content, g.groundTruth, g.samples[0]!.reward]));
  });

  it('re-scores the samples with the unchanged function: the same rewards and fractions as the run', async () => {
    const report = await dryRunOnRun({ runDir, file: rewardFile });
    const samples = await readRunSamples(runDir);
    const recorded = samples.groups.map((g) => g.samples.map((s) => s.reward));
    assert.deepStrictEqual(report.groups.map((g) => g.rewards), recorded);
    assert.strictEqual(report.recorded?.changed, 0);
    assert.deepStrictEqual(report.breakdown, groupBreakdown(recorded));
    assert.deepStrictEqual(report.recorded?.breakdown, report.breakdown);
    assert.strictEqual(report.samples, 12);
  });

  it('re-scores the samples with edited text: distribution, no-signal fractions and what changed', async () => {
    const report = await dryRunOnRun({ runDir, file: rewardFile, source: EDITED });
    const samples = await readRunSamples(runDir);
    const expected = samples.groups.map((g) => g.samples.map((s) => (s.content === '' ? 1 : 0)));
    assert.deepStrictEqual(report.groups.map((g) => g.rewards), expected);
    assert.deepStrictEqual(report.breakdown, groupBreakdown(expected));
    const flat = expected.flat();
    const recordedFlat = samples.groups.flatMap((g) => g.samples.map((s) => s.reward));
    assert.strictEqual(report.recorded?.changed, flat.filter((r, i) => r !== recordedFlat[i]).length);
    assert.strictEqual(report.histogram[0]!.count, flat.filter((r) => r === 0).length);
    assert.strictEqual(report.histogram[9]!.count, flat.filter((r) => r === 1).length);
    assert.strictEqual(report.histogram.reduce((s, b) => s + b.count, 0), 12);
    const md = dryRunMarkdown(report, 'reward.py');
    assert.match(md, new RegExp(`\\| all bad \\| ${(100 * report.breakdown.frac_all_bad).toFixed(1)}% \\|`));
    assert.match(md, new RegExp(`\\| mixed \\| ${(100 * report.breakdown.frac_mixed).toFixed(1)}% \\|`));
    assert.match(md, /samples get a different reward than the run gave them/);
  });

  it('counts failed calls in the report and scores them 0', async () => {
    const report = await dryRunOnRun({ runDir, file: rewardFile, source: 'def compute_reward(completion, ground_truth):\n    raise KeyError(ground_truth)\n' });
    assert.ok(report.groups.every((g) => g.rewards.every((r) => r === 0)));
    assert.deepStrictEqual(report.breakdown, { frac_mixed: 0, frac_all_good: 0, frac_all_bad: 1 });
    assert.strictEqual(report.failures.reduce((s, f) => s + f.count, 0), 12);
    assert.ok(report.failures.every((f) => f.kind === 'exception' && f.message.startsWith('KeyError: ')));
  });

  it('scores fresh samples from the model, G per problem', async () => {
    const sampler = await service.createSamplingClient({ baseModel: RANDOM_MODEL });
    const problems = POOL.train.slice(0, 2);
    const report = await dryRunOnModel({ sampler, renderer, origin: RANDOM_MODEL, problems, groupSize: 5, maxTokens: 4, temperature: 1, file: rewardFile, seed: 7 });
    assert.strictEqual(report.source, 'model');
    assert.deepStrictEqual(report.groups.map((g) => [g.label, g.rewards.length]), problems.map((p) => [p.id, 5]));
    assert.ok(report.groups.every((g) => g.rewards.every((r) => r === 0 || r === 1)));
    assert.deepStrictEqual(report.breakdown, groupBreakdown(report.groups.map((g) => g.rewards)));
    assert.strictEqual(report.recorded, undefined);
  });
});
