// W&B logging hooked into real runs (SFT on the embedded engine, real HTTP) against the W&B stand-in
// (wandbStandIn.ts): every metrics.jsonl row reaches W&B with its step, the id and URL land in
// config.json, a resumed run continues the same W&B run; with W&B failing (500, hang, closed
// connections, 401) the run completes with the same steps and metrics as a run without W&B, and the
// host's warning comes once; a sweep of 2 runs makes 2 W&B runs in one group.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { runSweep } from '../../../src/core/experiments/runSweep';
import { startSftRun } from '../../../src/core/sft/start';
import { ServiceClient } from '../../../src/core/tinker/client';
import { wandbTrackerFactory } from '../../../src/core/tracking/wandbSetup';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, readMetricsLines } from '../grpo/engineFixture';
import { startEngineClient } from '../grpo/engineFixture';
import { WandbStandIn, type StandInMode } from './wandbStandIn';

const KEY = 'standinkey_' + 'b'.repeat(29);
const loggerScript = path.resolve(__dirname, '../../../src/core/tracking/wandbLogger.js');

/** metrics rows without their wall-time keys (the only ones two identical runs differ in) */
const comparable = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('time/'))));

describe('W&B logging of real runs (against a stand-in W&B server)', function () {
  this.timeout(300_000);
  let env: EngineClient | undefined;
  let dir: string;
  let specFile: string;
  let standIn: WandbStandIn;
  let baseUrl: string;
  let baseline: Record<string, unknown>[];

  const connect = () => ServiceClient.connect({ baseUrl: env!.engine.server.url, clientVersion: 'test' });
  function tracking(warnings: string[], finishTimeoutMs = 20_000, answerTimeoutMs = 60_000) {
    return {
      tracker: wandbTrackerFactory({ apiKey: KEY, baseUrl, env: { TINKER_API_KEY: 'tml-tinker-key' }, tuning: { loggerScript, finishTimeoutMs, answerTimeoutMs, retryDelayMs: 100 } }),
      onWarning: (m: string) => warnings.push(m),
    };
  }

  before(async () => {
    env = await startEngineClient('tinker-wandb-runs-');
    dir = env.dir;
    const chats = Array.from({ length: 16 }, (_, i) => ({ messages: [{ role: 'user', content: `${i % 10}+1=` }, { role: 'assistant', content: String((i % 10) + 1) }] }));
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.map((c) => JSON.stringify(c)).join('\n') + '\n');
    specFile = path.join(dir, 'wb.sft.json');
    fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 4, eval_every: 2, save_every: 0, wandb_project: 'tinker-studio-test', wandb_tags: ['sft'], dataset: { path: 'chats.jsonl', validation: { fraction: 0.25 } } }));
    const plain = await startSftRun({ specFile, runsDir: path.join(dir, 'runs-plain'), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(plain.status, 'completed', plain.error);
    baseline = comparable(readMetricsLines(plain.runDir));
    assert.strictEqual(baseline.length, 4);
  });
  after(() => env?.close());
  beforeEach(async () => {
    standIn = new WandbStandIn();
    baseUrl = await standIn.listen();
  });
  afterEach(() => standIn.close());

  it('every metrics.jsonl row arrives with its step; config once; the id and URL in config.json; the summary', async () => {
    const warnings: string[] = [];
    const lines: string[] = [];
    const r = await startSftRun({ specFile, runsDir: path.join(dir, 'runs-wb'), connect, cacheDir: path.join(dir, 'cache'), tracking: tracking(warnings), log: (l) => lines.push(l) });
    assert.strictEqual(r.status, 'completed', r.error);
    assert.deepStrictEqual(warnings, []);
    const cfg = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as { wandb: { id: string; url: string; wandb_project: string } };
    assert.match(cfg.wandb.id, /^[0-9a-f]{12}$/);
    assert.strictEqual(cfg.wandb.url, `${baseUrl}/stand-in-user/tinker-studio-test/runs/${cfg.wandb.id}`);
    assert.ok(lines.includes(`W&B run: ${cfg.wandb.url}`));
    assert.ok(lines.some((l) => l.startsWith('W&B: 4 of 4 rows sent')), lines.join('\n'));
    const ups = standIn.upserts();
    assert.strictEqual(ups.length, 1);
    assert.strictEqual(ups[0].name, cfg.wandb.id);
    assert.strictEqual(ups[0].displayName, path.basename(r.runDir));
    const config = JSON.parse(String(ups[0].config)) as Record<string, unknown>;
    assert.deepStrictEqual([config.kind, config.model, config.renderer, config.backend, config.lora_rank], ['sft', RANDOM_MODEL, 'chatml', 'local', 4]);
    const metrics = readMetricsLines(r.runDir);
    const history = standIn.history(cfg.wandb.id).filter((h) => h.train_mean_nll !== undefined);
    assert.strictEqual(history.length, metrics.length);
    metrics.forEach((m, i) => {
      const { step, ...row } = m;
      const h = history[i];
      assert.strictEqual(h._step, step);
      for (const [k, v] of Object.entries(row)) assert.strictEqual(h[k], v, `step ${step} ${k}`);
    });
    assert.deepStrictEqual(comparable(metrics), baseline);
    const summary = standIn.summary(cfg.wandb.id)!;
    assert.strictEqual(summary['summary/final_nll'], metrics[3].train_mean_nll);
    assert.strictEqual(typeof summary['summary/best_holdout_nll'], 'number');
    assert.match(String(summary['summary/final_sampler_path']), /^tinker:\/\//);
    for (const req of standIn.requests) assert.ok(!JSON.stringify(req).includes('tml-tinker-key'));
  });

  it('a resumed run continues the same W&B run', async () => {
    const ac = new AbortController();
    const first = await startSftRun({ specFile, runsDir: path.join(dir, 'runs-resume'), connect, cacheDir: path.join(dir, 'cache'), tracking: tracking([]), signal: ac.signal, onEvent: (e) => e.type === 'metrics' && e.step === 1 && ac.abort() });
    assert.strictEqual(first.status, 'cancelled', first.error);
    const id = (JSON.parse(fs.readFileSync(path.join(first.runDir, 'config.json'), 'utf8')) as { wandb: { id: string } }).wandb.id;
    const again = await startSftRun({ resumeDir: first.runDir, runsDir: path.join(dir, 'runs-resume'), connect, cacheDir: path.join(dir, 'cache'), tracking: tracking([]) });
    assert.strictEqual(again.status, 'completed', again.error);
    assert.deepStrictEqual(standIn.upserts().map((u) => u.name), [id, id]);
    const steps = standIn.history(id).filter((h) => h.train_mean_nll !== undefined).map((h) => h._step);
    assert.deepStrictEqual([...new Set(steps)].sort(), [0, 1, 2, 3]);
  });

  it('a sweep of 2 runs makes 2 W&B runs in one group (the sweep name), each named by its point, each with its own rows', async () => {
    const sweepFile = path.join(dir, 'wbsweep.sweep.json');
    fs.writeFileSync(sweepFile, JSON.stringify({ base: 'wb.sft.json', method: 'grid', parameters: { learning_rate: { values: [0.01, 0.02] } }, max_concurrent: 2, metric: { name: 'train_mean_nll', goal: 'minimize' } }));
    const warnings: string[] = [];
    const lines: string[] = [];
    const r = await runSweep({ sweepFile, runsDir: path.join(dir, 'runs-sweep'), connect, cacheDir: path.join(dir, 'cache'), tracking: tracking(warnings), log: (l) => lines.push(l) });
    assert.deepStrictEqual(r.outcomes.map((o) => [o.name, o.status]), [['learning_rate_0.01', 'completed'], ['learning_rate_0.02', 'completed']], lines.join('\n'));
    assert.deepStrictEqual(warnings, []);
    const ups = standIn.upserts();
    assert.strictEqual(ups.length, 2, 'two W&B runs');
    const ids = r.outcomes.map((o) => (JSON.parse(fs.readFileSync(path.join(o.dir, 'config.json'), 'utf8')) as { wandb: { id: string; url: string } }).wandb);
    assert.notStrictEqual(ids[0].id, ids[1].id);
    for (const [i, o] of r.outcomes.entries()) {
      const up = ups.find((u) => u.name === ids[i].id);
      assert.ok(up, `${o.name}: its W&B run id ${ids[i].id} reached the stand-in`);
      assert.strictEqual(up.displayName, o.name, 'the W&B run is named by its point');
      assert.strictEqual(ids[i].url, `${baseUrl}/stand-in-user/tinker-studio-test/runs/${ids[i].id}`);
      const config = JSON.parse(String(up.config)) as Record<string, unknown>;
      // @wandb/sdk 0.5.1 sends no groupName (its init drops `group`): the group travels in the config
      assert.strictEqual(config.wandb_group, 'wbsweep', 'one group: the sweep name');
      assert.deepStrictEqual(config.sweep, { name: 'wbsweep', point: { learning_rate: [0.01, 0.02][i] } });
      assert.strictEqual(config.learning_rate, [0.01, 0.02][i]);
      const metrics = readMetricsLines(o.dir);
      assert.strictEqual(metrics.length, 4);
      const history = standIn.history(ids[i].id).filter((h) => h.train_mean_nll !== undefined);
      assert.strictEqual(history.length, metrics.length, `${o.name}: every metrics.jsonl row in its own W&B run`);
      metrics.forEach((m, j) => {
        const { step, ...row } = m;
        assert.strictEqual(history[j]._step, step);
        for (const [k, v] of Object.entries(row)) assert.strictEqual(history[j][k], v, `${o.name} step ${step} ${k}`);
      });
      assert.ok(standIn.completed(ids[i].id));
    }
  });

  for (const mode of ['status500', 'hang', 'close', 'status401'] as StandInMode[]) {
    it(`W&B ${mode}: the run completes with the same steps and metrics as without W&B; one warning`, async () => {
      standIn.mode = mode;
      const warnings: string[] = [];
      const lines: string[] = [];
      const r = await startSftRun({ specFile, runsDir: path.join(dir, `runs-${mode}`), connect, cacheDir: path.join(dir, 'cache'), tracking: tracking(warnings, 1000, 300), log: (l) => lines.push(l) });
      assert.strictEqual(r.status, 'completed', r.error);
      assert.deepStrictEqual(comparable(readMetricsLines(r.runDir)), baseline);
      assert.strictEqual(warnings.length, 1, warnings.join(' | '));
      assert.ok(lines.some((l) => /^W&B: 0 of 4 rows sent/.test(l)), lines.join('\n'));
    });
  }
});
