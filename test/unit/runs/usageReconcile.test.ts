// The Usage reconciliation: a run records each Tinker session it opens (a real SFT run on the engine,
// cancelled and resumed: two sessions); a run's own usage/* counts are set beside the service's,
// read through the real client from a STAND-IN of the billing route (billingStandIn.ts; the service
// cannot run here, the engine keeps no billing), in hour-aligned windows of at most 14 days, the
// run's sessions only; no billing access, a refused window and usage not yet reported are said
// plainly; and `tinker-studio usage <run dir>` prints the same.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { METRIC } from '../../../src/protocol/metricKeys';
import { readRunSessions, recordRunSession } from '../../../src/core/runs/runSessions';
import { reconcileRunUsage, reconciliationText } from '../../../src/core/runs/usageReconcile';
import { startSftRun } from '../../../src/core/sft/start';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { BillingStandIn, type StandInEvent } from './billingStandIn';
import { startTestEngine, type TestEngine } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const HOUR = 3_600_000;
const NOW = new Date('2026-11-28T12:34:56Z');

/** A finished run's directory: config, three steps of usage/* and two sessions 20 days apart (three 14-day windows or fewer). */
function writeRun(root: string, o: { baseUrl: string; firstSessionAt: Date; lastStepAt: Date }): string {
  const dir = path.join(root, `run-${Math.random().toString(36).slice(2, 8)}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B', backend: 'custom', base_url: o.baseUrl }));
  const step = (i: number, train: number, prefill: number, cached: number, sampled: number) =>
    JSON.stringify({ step: i, [METRIC.usageTrain]: train, [METRIC.usagePrefill]: prefill, [METRIC.usageCachedPrefill]: cached, [METRIC.usageSampled]: sampled, [METRIC.costTotal]: 0.01 * (i + 1) });
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), [step(0, 1000, 400, 100, 800), step(1, 1100, 300, 200, 900), step(2, 900, 350, 150, 700)].join('\n') + '\n');
  recordRunSession(dir, { session_id: 'sess-a', started_at: o.firstSessionAt.toISOString(), base_url: o.baseUrl });
  recordRunSession(dir, { session_id: 'sess-a', started_at: o.firstSessionAt.toISOString() });
  recordRunSession(dir, { session_id: 'sess-b', started_at: new Date(o.lastStepAt.getTime() - 2 * HOUR).toISOString(), base_url: `${o.baseUrl.replace('http://', 'http://user:secret@')}?token=x` });
  fs.utimesSync(path.join(dir, 'metrics.jsonl'), o.lastStepAt, o.lastStepAt);
  return dir;
}

const event = (session: string | undefined, at: Date, info: Record<string, unknown>, model = 'Qwen/Qwen3-8B'): StandInEvent => ({
  bucket_start: new Date(Math.floor(at.getTime() / HOUR) * HOUR).toISOString(),
  bucket_end: new Date(Math.floor(at.getTime() / HOUR) * HOUR + HOUR).toISOString(),
  ...(session ? { session_id: session } : {}),
  base_model: model,
  event_info: info,
});

describe('Usage reconciliation against a stand-in of the billing route', function () {
  this.timeout(60_000);
  let root: string;
  let standIn: BillingStandIn;
  let url: string;
  let client: ServiceClient;
  const first = new Date(NOW.getTime() - 20 * 24 * HOUR);
  const last = new Date(NOW.getTime() - 5 * HOUR);

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-usage-'));
    standIn = new BillingStandIn();
    url = await standIn.listen();
    client = await ServiceClient.connect({ baseUrl: url, apiKey: 'tml-billing-key', clientVersion: 'test', withoutSession: true, maxRetries: 0 });
  });
  after(async () => {
    client?.close();
    await standIn?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    standIn.mode = 'ok';
    standIn.events = [];
    standIn.requests.length = 0;
  });

  it('records each session once, without the URL\'s user, password or query', async () => {
    const dir = writeRun(root, { baseUrl: url, firstSessionAt: first, lastStepAt: last });
    const { sessions, problems } = await readRunSessions(dir);
    assert.deepStrictEqual(problems, []);
    assert.deepStrictEqual(sessions.map((s) => s.session_id), ['sess-a', 'sess-b']);
    assert.strictEqual(sessions[1]!.base_url, url);
    assert.ok(!fs.readFileSync(path.join(dir, 'sessions.jsonl'), 'utf8').includes('secret'));
  });

  it('sums the service\'s counts of the run\'s sessions per category over hour-aligned windows of at most 14 days', async () => {
    const dir = writeRun(root, { baseUrl: url, firstSessionAt: first, lastStepAt: last });
    const mid = new Date(first.getTime() + 16 * 24 * HOUR);
    standIn.events = [
      event('sess-a', first, { type: 'training', token_count: 2000 }),
      event('sess-a', first, { type: 'sampling_prefill', cached: false, token_count: 1050 }),
      event('sess-a', mid, { type: 'sampling_prefill', cached: true, token_count: 450 }),
      event('sess-b', last, { type: 'sampling_sample', token_count: 2400 }),
      event('sess-b', last, { type: 'training', token_count: 1000 }, 'Qwen/Qwen3-30B-A3B'),
      // not the run's: another session, no session, storage and checkpoints (not tokens), a type this client does not know
      event('sess-other', last, { type: 'training', token_count: 99_999 }),
      event(undefined, last, { type: 'training', token_count: 77_777 }),
      event('sess-b', last, { type: 'storage', gigabyte_hours: 3.5 }),
      event('sess-b', last, { type: 'checkpoint', count: 2 }),
      event('sess-b', last, { type: 'speculative_decoding', token_count: 5 }),
    ];
    const r = await reconcileRunUsage(dir, client, { now: NOW });
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepStrictEqual(r.own, { train: 3000, prefill: 1050, cached_prefill: 450, sampled: 2400 });
    assert.deepStrictEqual(r.service, { train: 3000, prefill: 1050, cached_prefill: 450, sampled: 2400 });
    assert.strictEqual(r.events, 5);
    assert.deepStrictEqual([...r.serviceByModel.keys()].sort(), ['Qwen/Qwen3-30B-A3B', 'Qwen/Qwen3-8B']);
    // the windows: contiguous, on the hour, each ≤ 14 days, from the first session's hour to past the last step
    const w = standIn.windows();
    assert.strictEqual(w.length, 2);
    for (const [a, b] of w) {
      assert.strictEqual(a % HOUR, 0);
      assert.strictEqual(b % HOUR, 0);
      assert.ok(b - a <= 14 * 24 * HOUR);
    }
    assert.strictEqual(w[0]![0], Math.floor(first.getTime() / HOUR) * HOUR);
    assert.strictEqual(w[0]![1], w[1]![0]);
    assert.ok(w[1]![1] >= last.getTime() && w[1]![1] <= NOW.getTime() + HOUR);
    assert.ok(standIn.requests.every((q) => q.apiKey === 'tml-billing-key'));
    assert.ok(!standIn.requests.some((q) => q.path.includes('create_session')), 'reading usage opens no session');
    assert.deepStrictEqual(r.notes, ['1 event(s) of a type this version does not know ("speculative_decoding") were left out']);
    const text = reconciliationText(r);
    assert.match(text, /^training\s+3,000\s+3,000\s+0$/m);
    assert.match(text, /^cached prefill\s+450\s+450\s+0$/m);
    assert.match(text, /^total\s+6,900\s+6,900\s+0$/m);
  });

  it('a difference is shown with its sign and share; counts that stop before the last step are noted', async () => {
    const dir = writeRun(root, { baseUrl: url, firstSessionAt: first, lastStepAt: last });
    standIn.events = [event('sess-a', first, { type: 'training', token_count: 2700 })];
    const r = await reconcileRunUsage(dir, client, { now: NOW });
    assert.ok(r.ok);
    const text = reconciliationText(r);
    assert.match(text, /^training\s+3,000\s+2,700\s+-300 \(-10\.0 %\)$/m);
    assert.match(text, /^sampled\s+2,400\s+0\s+-2,400 \(-100\.0 %\)$/m);
    assert.ok(r.notes.some((n) => /the last hours may not be counted yet/.test(n)), r.notes.join('\n'));
  });

  it('no usage of the run\'s sessions yet: "not yet available", with the run\'s own count', async () => {
    const dir = writeRun(root, { baseUrl: url, firstSessionAt: new Date(NOW.getTime() - 3 * HOUR), lastStepAt: new Date(NOW.getTime() - HOUR) });
    standIn.events = [event('sess-other', NOW, { type: 'training', token_count: 5 })];
    const r = await reconcileRunUsage(dir, client, { now: NOW });
    assert.ok(!r.ok);
    assert.strictEqual(r.reason, 'not-yet');
    assert.match(r.message, /^not yet available — the service reports usage hours late: .*sess-a, sess-b.*the run's last step was 1 h ago\. Try again in a few hours\.$/);
    assert.match(reconciliationText(r), /The run's own count: training 3,000, prefill 1,050, cached prefill 450, sampled 2,400 \(6,900 tokens\)/);
  });

  it('403 is "no billing access"; a refused window names the window; no session recorded says so', async () => {
    const dir = writeRun(root, { baseUrl: url, firstSessionAt: first, lastStepAt: last });
    standIn.mode = 'forbidden';
    const denied = await reconcileRunUsage(dir, client, { now: NOW });
    assert.ok(!denied.ok);
    assert.strictEqual(denied.reason, 'no-billing-access');
    assert.match(denied.message, /HTTP 403: no billing access/);
    assert.ok(!denied.message.includes('tml-billing-key'));
    standIn.mode = 'tooOld';
    const old = await reconcileRunUsage(dir, client, { now: NOW });
    assert.ok(!old.ok);
    assert.strictEqual(old.reason, 'window-refused');
    assert.match(old.message, /refused the window \d{4}-\d{2}-\d{2}T\d{2}:00:00Z – \d{4}-\d{2}-\d{2}T\d{2}:00:00Z \(HTTP 400: .*older than the retained usage.*at most 14 days/);
    fs.rmSync(path.join(dir, 'sessions.jsonl'));
    const none = await reconcileRunUsage(dir, client, { now: NOW });
    assert.ok(!none.ok);
    assert.strictEqual(none.reason, 'no-sessions');
  });

  it('`tinker-studio usage <run dir>` prints the table (and --json), exit 3 when the usage cannot be read', async () => {
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TINKER_API_KEY: 'tml-billing-key' }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
        proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
        proc.on('close', (code) => resolve({ code, out, err }));
      });
    // the last step an hour ago and now: the windows reach the present
    const now = new Date();
    const dir = writeRun(root, { baseUrl: url, firstSessionAt: new Date(now.getTime() - 3 * HOUR), lastStepAt: new Date(now.getTime() - HOUR) });
    standIn.events = [event('sess-a', new Date(now.getTime() - 2 * HOUR), { type: 'training', token_count: 3000 })];
    const table = await cli(['usage', dir, '--base-url', url]);
    assert.strictEqual(table.code, 0, table.err);
    assert.match(table.out, /^training\s+3,000\s+3,000\s+0$/m);
    const json = await cli(['usage', dir, '--base-url', url, '--json']);
    assert.strictEqual(json.code, 0, json.err);
    const parsed = JSON.parse(json.out) as { available: boolean; own: { total: number }; service: { train: number; total: number } };
    assert.strictEqual(parsed.available, true);
    assert.strictEqual(parsed.own.total, 6900);
    assert.deepStrictEqual([parsed.service.train, parsed.service.total], [3000, 3000]);
    standIn.mode = 'forbidden';
    const denied = await cli(['usage', dir, '--base-url', url]);
    assert.strictEqual(denied.code, 3);
    assert.match(denied.out, /cannot be reconciled now: .*no billing access/);
    assert.ok(!standIn.requests.some((q) => q.path.includes('create_session')));
  });
});

describe('Run sessions recorded by a real run on the engine', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-sessions-'));
    engine = await startTestEngine(dir);
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an SFT run cancelled after its first step and resumed lists both sessions it ran in', async () => {
    const chats = Array.from({ length: 16 }, (_, i) => ({ messages: [{ role: 'user', content: `${i % 10}+1=` }, { role: 'assistant', content: String((i % 10) + 1) }] }));
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), chats.map((c) => JSON.stringify(c)).join('\n') + '\n');
    const specFile = path.join(dir, 'tiny.sft.json');
    fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 3, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' } }));
    const opened: string[] = [];
    const connect = async () => {
      const c = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
      opened.push(c.sessionId!);
      return c;
    };
    const ac = new AbortController();
    const cancelled = await startSftRun({ specFile, runsDir: path.join(dir, 'runs'), connect, cacheDir: path.join(dir, 'cache'), signal: ac.signal, onEvent: (e) => e.type === 'metrics' && ac.abort() });
    assert.strictEqual(cancelled.status, 'cancelled', cancelled.error);
    const resumed = await startSftRun({ resumeDir: cancelled.runDir, runsDir: path.join(dir, 'runs'), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(resumed.status, 'completed', resumed.error);
    const { sessions } = await readRunSessions(cancelled.runDir);
    assert.strictEqual(opened.length, 2);
    assert.notStrictEqual(opened[0], opened[1]);
    assert.deepStrictEqual(sessions.map((s) => s.session_id), opened);
    assert.ok(sessions.every((s) => s.base_url === engine.server.url.replace(/\/+$/, '')), JSON.stringify(sessions));
    assert.ok(Date.parse(sessions[0]!.started_at) <= Date.parse(sessions[1]!.started_at));
  });
});
