// The agent session keeps one live run between calls (issue 24), against the real embedded engine
// behind a counting proxy: init → 5 × train(2) → sample → save → 3 × train(1) → finish makes one
// create_session, one create_model, no weight load, and only the saves asked for (GRPO and SFT);
// with seed and sampling_seed fixed, its metrics (time/ keys aside) and final weights equal those
// of one CLI run of 13 iterations; an idle limit of a fraction of a second releases the clients and
// the next call reconnects and trains on; SIGKILL of the MCP server in the middle of a train call,
// then init_grpo with resume, continues from the last checkpoint with each step recorded once (what the
// killed attempt ran past it moved aside); SIGTERM saves a resume point before the server exits.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TrainingSession } from '../../../src/core/agent/session';
import { mergeMetrics, MetricsRecord } from '../../../src/core/runs/runDirectory';
import { ServiceClient } from '../../../src/core/tinker/client';
import { readCheckpointLines, readMetricsLines, startTestEngine, TestEngine, writeReward } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const RANDOM_MODEL = 'tinker-studio/random-gpt';

/** An HTTP proxy in front of the engine that counts requests by path (and named saves). */
interface CountingProxy {
  url: string;
  counts: Map<string, number>;
  /** save_weights and save_weights_for_sampler requests that name a checkpoint (not the loop's ephemeral sampler snapshots) */
  namedSaves: string[];
  /** create_sampling_session requests that load a sampler checkpoint by path */
  samplerLoads: string[];
  reset(): void;
  close(): Promise<void>;
}

async function countingProxy(target: string): Promise<CountingProxy> {
  const t = new URL(target);
  const counts = new Map<string, number>();
  const namedSaves: string[] = [];
  const samplerLoads: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const p = (req.url ?? '').split('?')[0]!;
      counts.set(p, (counts.get(p) ?? 0) + 1);
      if ((req.headers['content-type'] ?? '').includes('json') && body.length > 0 && body.length < 100_000) {
        try {
          const j = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
          if ((p.endsWith('/save_weights') || p.endsWith('/save_weights_for_sampler')) && typeof j.path === 'string') namedSaves.push(`${p.split('/').pop()}:${j.path}`);
          if (p.endsWith('/create_sampling_session') && typeof j.model_path === 'string') samplerLoads.push(j.model_path);
        } catch {
          // a body that is not JSON is forwarded as it is
        }
      }
      const fwd = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      fwd.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      fwd.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    namedSaves,
    samplerLoads,
    reset: () => {
      counts.clear();
      namedSaves.length = 0;
      samplerLoads.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const count = (p: CountingProxy, name: string) => p.counts.get(`/api/v1/${name}`) ?? 0;

/** The metrics rows without the wall-clock keys. */
const untimed = (rows: MetricsRecord[]) => rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('time/'))));

/** The bytes of a checkpoint (tinker://<run>/<kind>/<name>) as the engine stored them. */
function checkpointBytes(engine: TestEngine, tinkerPath: string): Buffer {
  const m = /^tinker:\/\/([^/]+)\/(weights|sampler_weights)\/(.+)$/.exec(tinkerPath);
  assert.ok(m, tinkerPath);
  return fs.readFileSync(engine.server.store.checkpointFile(m[1]!, m[2] as 'weights' | 'sampler_weights', m[3]!));
}

async function waitUntil<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('agent session: one live run between calls (embedded engine)', function () {
  this.timeout(600_000);
  let dir: string;
  let engine: TestEngine;
  let proxy: CountingProxy;
  let grpoSpec: string;
  let sftSpec: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-live-session-'));
    engine = await startTestEngine(dir);
    proxy = await countingProxy(engine.server.url);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), ['1 + 1', '2 + 2', '3 + 3', '4 + 5', '6 + 1'].map((q, i) => JSON.stringify({ question: `What is ${q}?`, answer: String(i) })).join('\n') + '\n');
    writeReward(dir);
    grpoSpec = path.join(dir, 'live.grpo.json');
    fs.writeFileSync(
      grpoSpec,
      JSON.stringify({
        name: 'live',
        model: RANDOM_MODEL,
        renderer: 'chatml',
        lora_rank: 4,
        learning_rate: 0.01,
        groups_per_batch: 2,
        group_size: 3,
        max_tokens: 4,
        iterations: 13,
        save_every: 4,
        eval_every: 0,
        seed: 3,
        sampling_seed: 11,
        dataset: { path: 'train.jsonl' },
        reward: { file: 'reward.py', workers: 1 },
      }),
    );
    const chat = (i: number) => ({ messages: [{ role: 'user', content: `${i % 10}+${(i * 7) % 10}=` }, { role: 'assistant', content: String((i % 10) + ((i * 7) % 10)) }] });
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 40 }, (_, i) => JSON.stringify(chat(i))).join('\n') + '\n');
    sftSpec = path.join(dir, 'live.sft.json');
    fs.writeFileSync(sftSpec, JSON.stringify({ name: 'live-sft', model: RANDOM_MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 13, eval_every: 5, save_every: 4, seed: 2, dataset: { path: 'chats.jsonl', validation: { fraction: 0.1 } } }));
  });

  after(async () => {
    await proxy?.close();
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const session = (runsDir: string, o: { idleMs?: number } = {}) =>
    new TrainingSession({
      runsDir,
      cacheDir: path.join(dir, 'cache'),
      baseDir: dir,
      connect: () => ServiceClient.connect({ baseUrl: proxy.url, clientVersion: 'test' }),
      ...(o.idleMs !== undefined ? { idleMs: o.idleMs } : {}),
    });

  /** One CLI run of the spec on the same engine; returns its run directory. */
  const cliRun = async (kind: 'grpo' | 'sft', specFile: string, runsDir: string): Promise<string> => {
    const child = spawn(process.execPath, [CLI, kind, specFile, '--backend', 'custom', '--base-url', engine.server.url, '--runs-dir', runsDir, '--cache-dir', path.join(dir, 'cache')], {
      env: { ...process.env, TINKER_API_KEY: 'tml-test-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.strictEqual(code, 0, out);
    const runDir = /run completed: (.+) \(/.exec(out)?.[1];
    assert.ok(runDir, out);
    return runDir;
  };

  for (const kind of ['grpo', 'sft'] as const) {
    it(`${kind}: init → 5 × train(2) → sample → save → 3 × train(1) → finish: one session, one model, no weight load, only the saves asked for; metrics and final weights equal one CLI run's bit for bit`, async () => {
      const runsDir = path.join(dir, `runs-${kind}`);
      const s = session(runsDir);
      proxy.reset();
      const spec = kind === 'grpo' ? grpoSpec : sftSpec;
      const init = kind === 'grpo' ? await s.initRun('grpo', { spec_file: spec }) : await s.initRun('sft', { spec_file: spec });
      const train = (n: number) => (kind === 'grpo' ? s.trainRun('grpo', { num_steps: n }) : s.trainRun('sft', { num_steps: n }));
      for (let k = 0; k < 5; k++) {
        const r = await train(2);
        assert.strictEqual(r.value.first_step, 2 * k);
        assert.strictEqual(r.value.last_step, 2 * k + 1);
      }
      const sampled = await s.sample({ prompts: [{ prompt: 'What is 1 + 1?', ground_truth: '2' }], n: 2 });
      assert.strictEqual(sampled.value.source, `current weights after 10 ${kind === 'grpo' ? 'iterations' : 'steps'}`);
      assert.strictEqual(sampled.value.results[0]!.completions.length, 2);
      const saved = await s.save({ name: 'mid' });
      assert.strictEqual(saved.value.batch, 10);
      for (let k = 0; k < 3; k++) assert.strictEqual((await train(1)).value.first_step, 10 + k);
      const fin = await s.finish();
      assert.strictEqual(fin.value.steps, 13);
      const runDir = init.value.run_dir;

      assert.strictEqual(count(proxy, 'create_session'), 1, 'one Tinker session');
      assert.strictEqual(count(proxy, 'create_model'), 1, 'one training client');
      assert.strictEqual(count(proxy, 'load_weights'), 0, 'no training-state load');
      // SFT saves at 4, 8, 12 (< 13 steps); GRPO at 4, 8, 12 too: then "mid" and "final"
      const names = ['000004', '000008', '000012', 'mid', 'final'];
      assert.deepStrictEqual(
        [...proxy.namedSaves].sort(),
        names.flatMap((n) => [`save_weights:${n}`, `save_weights_for_sampler:${n}`]).sort(),
        'only the saves save_every, save and finish ask for',
      );
      // the one sampler a GRPO loop opens from a checkpoint is the one save_every just wrote (as in the CLI run); SFT opens none
      assert.deepStrictEqual(
        proxy.samplerLoads.map((p) => p.split('/').pop()),
        kind === 'grpo' ? ['000004', '000008', '000012'] : [],
      );
      assert.deepStrictEqual(readCheckpointLines(runDir).map((c) => [c.name, c.batch]), [['000004', 4], ['000008', 8], ['mid', 10], ['000012', 12], ['final', 13]]);
      const rows = readMetricsLines(runDir);
      assert.deepStrictEqual(rows.map((r) => r.step), Array.from({ length: 13 }, (_, i) => i), 'one metrics line per step');

      // the same spec as one CLI run of 13 iterations on the same engine
      const cliDir = await cliRun(kind, spec, path.join(dir, `runs-cli-${kind}`));
      assert.deepStrictEqual(untimed(readMetricsLines(runDir)), untimed(readMetricsLines(cliDir)), 'metrics equal, time/ keys aside');
      const finalOf = (d: string) => readCheckpointLines(d).find((c) => c.name === 'final')!;
      for (const k of ['state_path', 'sampler_path'] as const) {
        const a = checkpointBytes(engine, finalOf(runDir)[k]!);
        const b = checkpointBytes(engine, finalOf(cliDir)[k]!);
        assert.ok(a.length > 0);
        assert.ok(a.equals(b), `final ${k} files differ`);
      }
    });
  }

  it('an idle session releases its clients; the next call reconnects, says so and trains on', async () => {
    const runsDir = path.join(dir, 'runs-idle');
    const s = session(runsDir, { idleMs: 300 });
    proxy.reset();
    await s.initRun('grpo', { spec_file: grpoSpec, overrides: { save_every: 0 } });
    await s.trainRun('grpo', { num_steps: 2 });
    assert.deepStrictEqual(s.status().holds, { tinker_session: true, training_client: true, sampler: true, reward_workers: true });
    await waitUntil('the idle session to release its clients', () => s.status().released && s.status().state === 'idle');
    const st = s.status();
    assert.deepStrictEqual(st.holds, { tinker_session: false, training_client: false, sampler: false, reward_workers: false });
    assert.match(s.statusText(), /idle for [\d.]+ s; released after idling/);
    // the resume point it saved on release is where the reconnect continues
    const runDir = String(st.run_dir);
    assert.deepStrictEqual(readCheckpointLines(runDir).map((c) => [c.name, c.batch, c.sampler_path === undefined]), [['000002', 2, true]]);
    const r = await s.trainRun('grpo', { num_steps: 1 });
    assert.match(r.text, /^\(the session was idle and had released its clients; reconnected after \d+ s and continued from step 2\)/);
    assert.strictEqual(r.value.first_step, 2);
    assert.strictEqual(count(proxy, 'create_session'), 2, 'reconnected once');
    assert.strictEqual(count(proxy, 'load_weights'), 1, 'the resume point loaded once');
    await s.close('test done');
    assert.deepStrictEqual(mergeMetrics(readMetricsLines(runDir)).map((m) => m.step), [0, 1, 2]);
  });

  it('SIGKILL of the MCP server in the middle of a train call, then init_grpo with resume "latest": what the killed attempt ran past the last checkpoint is moved aside and said so, temporary files go, each step is recorded once and finish counts right', async () => {
    const runsDir = path.join(dir, 'runs-kill');
    const start = async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--backend', 'custom', '--base-url', engine.server.url, '--workspace', dir, '--runs-dir', runsDir, '--cache-dir', path.join(dir, 'cache')],
        env: { ...(process.env as Record<string, string>), TINKER_API_KEY: 'tml-test-key' },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'tinker-studio-test', version: '0.0.0' });
      await client.connect(transport);
      return { client, transport };
    };
    type Call = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: Record<string, unknown> };
    const ok = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
      const r = (await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as Call;
      assert.ok(!r.isError, `${name}: ${r.content.map((c) => c.text).join('\n')}`);
      return r;
    };
    const first = await start();
    const init = (await ok(first.client, 'init_grpo', { spec_file: 'live.grpo.json', overrides: { save_every: 4 } })).structuredContent!;
    const runDir = String(init.run_dir);
    const steps = () => (fs.existsSync(path.join(runDir, 'metrics.jsonl')) ? readMetricsLines(runDir).map((l) => l.step) : []);
    // one long call, killed once it has written step 5: past the checkpoint at 4, before the one at 8
    const inFlight = first.client.callTool({ name: 'train_grpo_step', arguments: { num_iterations: 12 } }, undefined, { timeout: 240_000 }).catch(() => undefined);
    await waitUntil('step 5 written', () => steps().includes(5));
    process.kill(first.transport.pid!, 'SIGKILL');
    await inFlight;
    await first.client.close().catch(() => undefined);
    const killed = steps();
    const resumeAt = readCheckpointLines(runDir).filter((c) => c.state_path).pop()!.batch!;
    assert.strictEqual(resumeAt, 4, `checkpoints ${JSON.stringify(readCheckpointLines(runDir))}`);
    const abandoned = killed.filter((s) => s >= resumeAt);
    assert.ok(abandoned.length >= 2, `steps written before the kill: ${killed}`);
    // the step in flight may have written its iteration folder before its metrics row
    const folders = fs.readdirSync(runDir).filter((f) => f.startsWith('iteration_')).map((f) => Number(f.slice('iteration_'.length)));
    const aside = [...new Set([...abandoned, ...folders.filter((s) => s >= resumeAt)])].sort((a, b) => a - b);
    // what a kill in the middle of a whole-file write leaves (the writers' temporary names)
    fs.writeFileSync(path.join(runDir, 'iteration_000001', '.train_samples.jsonl.424242.1764000000000.tmp'), '{"partial');
    fs.writeFileSync(path.join(runDir, '.config.json.424242.7.tmp'), '{');

    const second = await start();
    let finished: Call;
    try {
      const resumed = await ok(second.client, 'init_grpo', { spec_file: 'live.grpo.json', resume: 'latest' });
      assert.strictEqual(resumed.structuredContent!.run_dir, runDir);
      assert.strictEqual(resumed.structuredContent!.step, resumeAt, 'from the last checkpoint');
      const said = resumed.content.map((c) => c.text).join('\n');
      assert.match(said, new RegExp(`resuming at step 4: set aside the rows and iteration folders of steps ${aside.length > 2 ? `4–${aside[aside.length - 1]}` : '4, 5'} that an interrupted attempt ran past the resume point \\(moved to abandoned/[^/]+/: they are trained again\\); 2 temporary files of interrupted writes \\(removed\\)`), said);
      const more = (await ok(second.client, 'train_grpo_step', { num_iterations: 3 })).structuredContent!;
      assert.deepStrictEqual([more.first_step, more.last_step, more.steps_done], [4, 6, 7], 'the report counts each step once');
      finished = await ok(second.client, 'finish');
    } finally {
      await second.client.close();
    }
    assert.match(finished.content.map((c) => c.text).join('\n'), /after 7 iterations/);
    assert.deepStrictEqual(steps(), [0, 1, 2, 3, 4, 5, 6], 'each step once, in metrics.jsonl itself');
    const timing = fs.readFileSync(path.join(runDir, 'timing_spans.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepStrictEqual(timing, [0, 1, 2, 3, 4, 5, 6]);
    const top = fs.readdirSync(runDir);
    assert.deepStrictEqual(top.filter((f) => f.startsWith('iteration_')).sort(), [0, 1, 2, 3, 4, 5, 6].map((i) => `iteration_${String(i).padStart(6, '0')}`));
    assert.deepStrictEqual([...top, ...fs.readdirSync(path.join(runDir, 'iteration_000001'))].filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
    const [attempt] = fs.readdirSync(path.join(runDir, 'abandoned'));
    const asideDir = path.join(runDir, 'abandoned', attempt!);
    assert.deepStrictEqual(readMetricsLines(asideDir).map((l) => l.step), abandoned, 'the killed attempt\'s rows are kept aside, not merged');
    assert.ok(fs.readdirSync(asideDir).includes('iteration_000004'));
    assert.match(fs.readFileSync(path.join(runDir, 'logs.log'), 'utf8'), /resuming at step 4: set aside/);
  });

  it('SIGTERM ends the MCP server in an orderly way: a resume point at the step reached, then exit', async () => {
    const runsDir = path.join(dir, 'runs-term');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--backend', 'custom', '--base-url', engine.server.url, '--workspace', dir, '--runs-dir', runsDir, '--cache-dir', path.join(dir, 'cache')],
      env: { ...(process.env as Record<string, string>), TINKER_API_KEY: 'tml-test-key' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const client = new Client({ name: 'tinker-studio-test', version: '0.0.0' });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    const init = await call('init_grpo', { spec_file: 'live.grpo.json', overrides: { save_every: 0 } });
    assert.ok(!init.isError, stderr);
    const runDir = String(init.structuredContent?.run_dir);
    assert.ok(!(await call('train_grpo_step', { num_iterations: 2 })).isError, stderr);
    const pid = transport.pid!;
    const exited = new Promise<void>((r) => {
      const check = () => {
        try {
          process.kill(pid, 0);
          setTimeout(check, 20);
        } catch {
          r();
        }
      };
      check();
    });
    process.kill(pid, 'SIGTERM');
    await exited;
    await client.close().catch(() => undefined);
    assert.deepStrictEqual(readCheckpointLines(runDir).map((c) => [c.name, c.batch]), [['000002', 2]], stderr);
    assert.match(stderr, /SIGTERM: saving a resume point and closing the session/);
  });

  it('the shared reader keeps one row per step: rows re-run after a resume replace the lost ones', () => {
    const row = (step: number, extra: Record<string, number>) => ({ step, ...extra }) as MetricsRecord;
    const merged = mergeMetrics([row(0, { a: 1 }), row(1, { a: 2, lost: 1 }), row(2, { a: 3 }), row(1, { a: 20 }), row(1, { b: 5 }), row(2, { a: 30 })]);
    assert.deepStrictEqual(merged, [row(0, { a: 1 }), row(1, { a: 20, b: 5 }), row(2, { a: 30 })]);
  });
});
