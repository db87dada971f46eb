// The W&B tracker against a local stand-in for W&B's servers (wandbStandIn.ts): the real @wandb/sdk in
// the real logger child process. What arrives (config once, every row with its step, the summary,
// the key only there, never the Tinker key), resume by id, and the faults (500, hang, closed
// connections, 401): one warning, calls that return at once, a bounded finish with a count.
import * as assert from 'assert';
import * as path from 'path';
import type { TrackerReport } from '../../../src/core/tracking/tracker';
import { WandbTracker, loggerEnv } from '../../../src/core/tracking/wandbTracker';
import { WandbStandIn, type StandInMode } from './wandbStandIn';

const KEY = 'standinkey_' + 'a'.repeat(29);
const TINKER_KEY = 'tml-THE-TINKER-KEY-must-never-leave';
const loggerScript = path.resolve(__dirname, '../../../src/core/tracking/wandbLogger.js');

function rows(n: number): { step: number; row: Record<string, number> }[] {
  return Array.from({ length: n }, (_, step) => ({ step, row: { 'env/all/reward/total': step / 10, 'optim/lr': 1e-4, 'progress/done_frac': (step + 1) / n } }));
}

describe('W&B tracker (against a stand-in W&B server)', function () {
  this.timeout(60_000);
  let standIn: WandbStandIn;
  let baseUrl: string;
  beforeEach(async () => {
    standIn = new WandbStandIn();
    baseUrl = await standIn.listen();
  });
  afterEach(() => standIn.close());

  function tracker(warnings: string[], extra: Partial<ConstructorParameters<typeof WandbTracker>[0]> = {}): WandbTracker {
    return new WandbTracker({
      fields: { wandb_project: 'tinker-test', wandb_name: 'point-a', wandb_group: 'sweep-1', wandb_tags: ['grpo'], wandb_notes: 'n' },
      apiKey: KEY,
      baseUrl,
      env: { TINKER_API_KEY: TINKER_KEY, WANDB_SILENT: 'true', HOME: '/nonexistent', PATH: process.env.PATH },
      events: { onWarning: (m) => warnings.push(m) },
      loggerScript,
      finishTimeoutMs: 20_000,
      retryDelayMs: 100,
      ...extra,
    });
  }

  it('the logger child gets only WANDB_* variables and the key, never the Tinker key', () => {
    const env = loggerEnv({ TINKER_API_KEY: TINKER_KEY, WANDB_PROJECT: 'p', WANDB_API_KEY: 'old', PATH: '/bin' }, KEY, 'http://h');
    assert.deepStrictEqual(env, { WANDB_PROJECT: 'p', WANDB_API_KEY: KEY, WANDB_BASE_URL: 'http://h', ELECTRON_RUN_AS_NODE: '1' });
  });

  it('sends the config once, every row with its step, and the summary; the key only to the stand-in', async () => {
    const warnings: string[] = [];
    const urls: string[] = [];
    const t = tracker(warnings, { events: { onWarning: (m) => warnings.push(m), onUrl: (u) => urls.push(u) } });
    const data = rows(7);
    t.start({ id: 'run0001', resume: false, config: { model: 'm', lora_rank: 8, renderer: 'r', backend: 'embedded' } });
    for (const r of data) t.log(r.step, r.row);
    const report = await t.finish({ 'final/reward': 0.6 });
    assert.deepStrictEqual(warnings, []);
    assert.strictEqual(report.sent, 7);
    assert.strictEqual(report.rows, 7);
    assert.match(report.line, /^W&B: 7 of 7 rows sent/);
    assert.deepStrictEqual(urls, [`${baseUrl}/stand-in-user/tinker-test/runs/run0001`]);
    const ups = standIn.upserts();
    assert.strictEqual(ups.length, 1, 'the config arrives once');
    assert.strictEqual(ups[0].name, 'run0001');
    assert.strictEqual(ups[0].displayName, 'point-a');
    const config = JSON.parse(String(ups[0].config)) as Record<string, unknown>;
    assert.strictEqual(config.lora_rank, 8);
    assert.strictEqual(config.wandb_group, 'sweep-1');
    const history = standIn.history('run0001').filter((h) => h['env/all/reward/total'] !== undefined);
    assert.deepStrictEqual(
      history.map((h) => ({ step: h._step, row: { 'env/all/reward/total': h['env/all/reward/total'], 'optim/lr': h['optim/lr'], 'progress/done_frac': h['progress/done_frac'] } })),
      data,
    );
    assert.strictEqual(standIn.summary('run0001')?.['final/reward'], 0.6);
    assert.ok(standIn.completed('run0001'));
    const basic = `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`;
    assert.ok(standIn.requests.length > 0 && standIn.requests.every((r) => r.authorization === basic));
    for (const r of standIn.requests) assert.ok(!JSON.stringify(r).includes(TINKER_KEY), 'the Tinker key never leaves');
  });

  it('the bundled logger (dist/wandbLogger.js, what the extension and the CLI fork) logs the same way', async () => {
    const t = tracker([], { loggerScript: path.resolve(__dirname, '../../../../dist/wandbLogger.js') });
    t.start({ id: 'bundled1', resume: false, config: { a: 1 } });
    t.log(0, { x: 1 });
    t.log(1, { x: 2 });
    const report = await t.finish({});
    assert.strictEqual(report.line.split(' — ')[0], 'W&B: 2 of 2 rows sent');
    assert.deepStrictEqual(standIn.history('bundled1').filter((h) => h.x !== undefined).map((h) => [h._step, h.x]), [[0, 1], [1, 2]]);
  });

  it('a resumed run sends to the same run id', async () => {
    const first = tracker([]);
    first.start({ id: 'resume01', resume: false, config: { a: 1 } });
    first.log(0, { x: 1 });
    await first.finish({});
    const second = tracker([]);
    second.start({ id: 'resume01', resume: true, config: { a: 1 } });
    second.log(1, { x: 2 });
    const report = await second.finish({});
    assert.strictEqual(report.sent, 1);
    assert.deepStrictEqual(standIn.upserts().map((u) => u.name), ['resume01', 'resume01']);
    assert.deepStrictEqual(standIn.history('resume01').filter((h) => h.x !== undefined).map((h) => [h._step, h.x]), [[0, 1], [1, 2]]);
  });

  for (const mode of ['status500', 'hang', 'close', 'status401'] as StandInMode[]) {
    it(`W&B ${mode}: calls return at once, one warning, a bounded finish that counts the rows`, async () => {
      standIn.mode = mode;
      const warnings: string[] = [];
      const t = tracker(warnings, { finishTimeoutMs: 1500, answerTimeoutMs: 300, bufferLimit: 5 });
      // start and log only queue: they return before the stand-in has seen anything
      assert.strictEqual(t.start({ id: `fault${mode}`, resume: false, config: {} }) as unknown, undefined);
      const seenAtStart = standIn.requests.length;
      for (const r of rows(8)) assert.strictEqual(t.log(r.step, r.row) as unknown, undefined);
      assert.strictEqual(standIn.requests.length, seenAtStart);
      const report: TrackerReport = await t.finish({ 'final/reward': 1 });
      assert.strictEqual(warnings.length, 1, `one warning: ${warnings.join(' | ')}`);
      assert.match(warnings[0], /W&B logging is failing: .*Training goes on/);
      assert.ok(!warnings[0].includes(KEY));
      assert.strictEqual(report.rows, 8);
      assert.strictEqual(report.sent, 0);
      assert.strictEqual(report.dropped, 3, 'a full buffer drops the oldest, with a count');
      assert.match(report.line, /^W&B: 0 of 8 rows sent \(3 dropped from a full buffer\)/);
    });
  }
});
