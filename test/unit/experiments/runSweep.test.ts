// The sweep scheduler on the embedded engine (real HTTP, the random byte-level model, a real Python
// reward): point folders under <runs>/<sweep>/, config.json's `sweep`, the manifest, the median rule
// stopping runs between steps (status 'stopped early', checkpoints kept), cancel and resume (no step
// lost or repeated), listRuns finding runs in sweep folders.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runSweep, isStoppedEarly } from '../../../src/core/experiments/runSweep';
import { readSweepManifest } from '../../../src/core/experiments/sweepManifest';
import { listRuns, readMetricsRowsSync, summarizeRun } from '../../../src/core/runs/runDirectory';
import { directoryRunStatus } from '../../../src/core/runs/runStatus';
import { ServiceClient } from '../../../src/core/tinker/client';
import { startTestEngine, TestEngine, writeReward } from '../grpo/engineFixture';

describe('sweeps: the scheduler on the embedded engine', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sweep-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n{"question":"What is 3 + 3?","answer":6}\n');
    writeReward(dir);
    fs.writeFileSync(
      path.join(dir, 'base.grpo.json'),
      JSON.stringify({ model: 'tinker-studio/random-gpt', lora_rank: 4, learning_rate: 0.001, groups_per_batch: 2, group_size: 2, max_tokens: 3, iterations: 3, save_every: 1, eval_every: 0, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 } }),
    );
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
  const opts = (file: string, runsDir: string) => ({ sweepFile: file, runsDir, connect, cacheDir: path.join(dir, 'cache') });

  it('median rule: with optim/lr as the metric (maximize), the two smaller rates are stopped at step 0 once two runs have finished', async () => {
    const file = path.join(dir, 'lr.sweep.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ base: 'base.grpo.json', method: 'grid', parameters: { learning_rate: { values: [0.004, 0.003, 0.002, 0.001] } }, metric: { name: 'optim/lr', goal: 'maximize' }, early_terminate: { type: 'median', min_iter: 0, min_runs: 2 } }),
    );
    const runsDir = path.join(dir, 'runs-median');
    const lines: string[] = [];
    const r = await runSweep({ ...opts(file, runsDir), log: (line) => lines.push(line) });
    assert.deepStrictEqual(
      r.outcomes.map((o) => [o.name, o.status]),
      [
        ['learning_rate_0.004', 'completed'],
        ['learning_rate_0.003', 'completed'],
        ['learning_rate_0.002', 'stopped early'],
        ['learning_rate_0.001', 'stopped early'],
      ],
    );
    assert.strictEqual(r.stepsSaved, 4);
    // a stopped run's last line says it was stopped early, not cancelled
    for (const name of ['learning_rate_0.002', 'learning_rate_0.001']) {
      const own = lines.filter((l) => l.startsWith(`${name}: `));
      assert.ok(own.some((l) => /: stopped early after 1 iteration/.test(l)), `${name}: ${own.join(' | ')}`);
      assert.ok(!own.some((l) => /cancelled/.test(l)), `${name}: ${own.join(' | ')}`);
    }
    const stopped = path.join(runsDir, 'lr', 'learning_rate_0.002');
    assert.ok(isStoppedEarly(stopped));
    assert.strictEqual(directoryRunStatus(await summarizeRun(stopped)), 'stopped early', 'every reader of the run directory (Runs view, comparison) sees it stopped early');
    assert.deepStrictEqual(readMetricsRowsSync(stopped).map((x) => x.step), [0]);
    assert.ok(fs.readFileSync(path.join(stopped, 'checkpoints.jsonl'), 'utf8').trim().length > 0, 'checkpoints kept');
    assert.deepStrictEqual(r.ranking.map((x) => [x.id, x.rank]), [['learning_rate_0.004', 1], ['learning_rate_0.003', 2], ['learning_rate_0.002', 3], ['learning_rate_0.001', 4]]);
    const m = readSweepManifest(path.join(runsDir, 'lr'));
    assert.deepStrictEqual(m.swept, ['learning_rate']);
    assert.strictEqual(m.runs.length, 4);
    const cfg = JSON.parse(fs.readFileSync(path.join(stopped, 'config.json'), 'utf8'));
    assert.deepStrictEqual(cfg.sweep, { name: 'lr', point: { learning_rate: 0.002 } });
    assert.strictEqual(cfg.learning_rate, 0.002);
    const listed = (await listRuns(runsDir)).map((x) => path.relative(runsDir, x.dir)).sort();
    assert.deepStrictEqual(listed, ['lr/learning_rate_0.001', 'lr/learning_rate_0.002', 'lr/learning_rate_0.003', 'lr/learning_rate_0.004'].map((p) => p.split('/').join(path.sep)));
    // again: everything is done, nothing runs
    const again = await runSweep(opts(file, runsDir));
    assert.ok(again.outcomes.every((o) => o.status === 'skipped' && o.stepsRun === 0));
    assert.deepStrictEqual(again.ranking.map((x) => x.status), ['completed', 'completed', 'stopped early', 'stopped early']);
  });

  it('median rule: runs stopped early vote only at the steps they reached, not with a frozen value later', async () => {
    // five runs already done on disk (the sweep resumes past them): two completed at lr ≈ 0.01, three
    // stopped early at step 0 with a collapsed value; the one left (optim/lr 0.001 at every step) is
    // checked from step 1, where only the two completed runs vote (median 0.0095): it is stopped. Had the
    // stopped runs voted with their frozen 0.0001–0.0003, the median would be 0.0003 and it would go on.
    const file = path.join(dir, 'frozen.sweep.json');
    const values = [0.01, 0.009, 0.0001, 0.0002, 0.0003, 0.001];
    fs.writeFileSync(
      file,
      JSON.stringify({ base: 'base.grpo.json', method: 'grid', parameters: { learning_rate: { values } }, metric: { name: 'optim/lr', goal: 'maximize' }, early_terminate: { type: 'median', min_iter: 1, min_runs: 2 } }),
    );
    const runsDir = path.join(dir, 'runs-frozen');
    const fake = (lr: number, steps: number, ended: 'completed' | 'stopped') => {
      const runDir = path.join(runsDir, 'frozen', `learning_rate_${lr}`);
      fs.mkdirSync(runDir, { recursive: true });
      fs.writeFileSync(path.join(runDir, 'config.json'), JSON.stringify({ learning_rate: lr }));
      fs.writeFileSync(path.join(runDir, 'metrics.jsonl'), Array.from({ length: steps }, (_, step) => JSON.stringify({ step, 'optim/lr': lr }) + '\n').join(''));
      if (ended === 'completed') fs.writeFileSync(path.join(runDir, 'checkpoints.jsonl'), JSON.stringify({ name: 'final', step: steps }) + '\n');
      else fs.writeFileSync(path.join(runDir, 'stopped_early.json'), JSON.stringify({ step: 0, metric: { name: 'optim/lr', goal: 'maximize' }, steps_saved: 2 }));
    };
    fake(0.01, 3, 'completed');
    fake(0.009, 3, 'completed');
    for (const lr of [0.0001, 0.0002, 0.0003]) fake(lr, 1, 'stopped');
    const r = await runSweep(opts(file, runsDir));
    assert.deepStrictEqual(r.outcomes.map((o) => o.status), ['skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'stopped early']);
    const last = path.join(runsDir, 'frozen', 'learning_rate_0.001');
    assert.deepStrictEqual(readMetricsRowsSync(last).map((x) => x.step), [0, 1], 'stopped at step 1');
    assert.strictEqual(JSON.parse(fs.readFileSync(path.join(last, 'stopped_early.json'), 'utf8')).step, 1);
  });

  it('cancel mid-sweep, then the same call resumes: every run ends with steps 0..2, none lost or repeated; seeds name the points', async () => {
    const file = path.join(dir, 'seeds.sweep.json');
    fs.writeFileSync(file, JSON.stringify({ base: 'base.grpo.json', method: 'grid', parameters: { learning_rate: { values: [0.001, 0.002] } }, seeds: [1, 2], max_concurrent: 2, metric: { name: 'env/all/reward/total', goal: 'maximize' } }));
    const runsDir = path.join(dir, 'runs-cancel');
    const ac = new AbortController();
    let metrics = 0;
    const first = await runSweep({
      ...opts(file, runsDir),
      signal: ac.signal,
      onEvent: (_p, e) => {
        if (e.type === 'metrics' && ++metrics === 3) ac.abort();
      },
    });
    assert.ok(first.cancelled);
    assert.ok(first.outcomes.some((o) => o.status === 'cancelled'), JSON.stringify(first.outcomes));
    assert.ok(first.outcomes.some((o) => o.status === 'queued'), 'the runs not started stay queued');
    const stepsBefore = new Map(first.outcomes.map((o) => [o.name, fs.existsSync(o.dir) ? readMetricsRowsSync(o.dir).length : 0]));
    let resumedSteps = 0;
    const second = await runSweep({ ...opts(file, runsDir), onEvent: (_p, e) => void (e.type === 'metrics' && resumedSteps++) });
    assert.ok(!second.cancelled);
    assert.deepStrictEqual(second.outcomes.map((o) => o.name), ['learning_rate_0.001.seed_1', 'learning_rate_0.001.seed_2', 'learning_rate_0.002.seed_1', 'learning_rate_0.002.seed_2']);
    for (const o of second.outcomes) {
      assert.strictEqual(o.status, 'completed', o.name);
      const lines = fs.readFileSync(path.join(o.dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step as number);
      assert.deepStrictEqual(lines, [0, 1, 2], `${o.name}: each step once in metrics.jsonl`);
      assert.strictEqual(JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')).sampling_seed, o.name.endsWith('seed_1') ? 1 : 2);
    }
    const before = [...stepsBefore.values()].reduce((a, b) => a + b, 0);
    assert.strictEqual(before + resumedSteps, 12, 'the steps run before the cancel plus after the resume are all 12, none twice');
  });
});
