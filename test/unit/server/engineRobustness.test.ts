// The requests issue 43 found to end the engine or get a 500, each against the engine as the
// extension runs it (dist/engine.js in its own process): a request target no URL can be made of,
// a bad percent-encoding in a path, a prompt long enough to overflow a spread, a TTL past what a
// date can hold, CONNECT, and dot segments after an archive link's prefix (which skipped the key).
// Needs `npm run build` first (npm test does it).
import * as assert from 'assert';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { EngineProcess } from '../../../src/engine/launcher';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { MAX_TTL_SECONDS } from '../../../src/engine/server/checkpointRoutes';
import { rawExchange, spawnBuiltEngine, type SpawnedEngine } from './engineFuzzKit';

const HANG_MS = 120_000;

describe('engine robustness (dist/engine.js): what issue 43 found', function () {
  this.timeout(300_000);
  let engine: SpawnedEngine | undefined;
  let proc: EngineProcess;
  let service: ServiceClient | undefined;
  let log: string[] = [];
  const url = (p: string) => `${proc.url}${p}`;
  const json = () => ({ 'x-api-key': proc.apiKey, 'content-type': 'application/json' });
  const raw = (head: string) => rawExchange(Number(new URL(proc.url).port), Buffer.from(head, 'latin1'), HANG_MS);

  before(async () => {
    engine = await spawnBuiltEngine('tinker-engine-robust-');
    ({ proc, service, log } = engine);
  });
  after(async () => {
    await engine?.close();
  });

  async function assertAlive(): Promise<void> {
    const ended = await Promise.race([proc.exited.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);
    assert.strictEqual(ended, false, `the engine process ended:\n${log.slice(-15).join('\n')}`);
    const health = await fetch(url('/api/v1/healthz'), { headers: { 'x-api-key': proc.apiKey } });
    assert.strictEqual(health.status, 200);
  }

  for (const target of ['http://:80/', 'http://[']) {
    it(`answers the request target ${target} with 400 (no key needed) and lives on`, async () => {
      const port = new URL(proc.url).port;
      const a = await raw(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      assert.strictEqual(a.status, 400, a.text);
      assert.match(a.text, /malformed request target/);
      await assertAlive();
    });
  }

  it('answers a bad percent-encoding in any path with 400, in each route family\'s error shape', async () => {
    const tinker = await fetch(url('/api/v1/sessions/%E0%A4%A'), { headers: json() });
    assert.strictEqual(tinker.status, 400);
    assert.match(((await tinker.json()) as { detail: string }).detail, /malformed percent-encoding in the path segment "%E0%A4%A"/);
    const openai = await fetch(url('/v1/models/%E0%A4%A'), { headers: json() });
    assert.strictEqual(openai.status, 400);
    const e = ((await openai.json()) as { error: { message: string; type: string } }).error;
    assert.match(e.message, /malformed percent-encoding/);
    assert.strictEqual(e.type, 'invalid_request_error');
    await assertAlive();
  });

  it('answers a 130,000-token prompt with context_length_exceeded on the OpenAI routes and a user error from asample, not a stack overflow', async () => {
    const long = '1+1 '.repeat(32_500); // 130,000 bytes: the random model's tokens are bytes
    for (const [route, body] of [
      ['/v1/chat/completions', { model: RANDOM_MODEL, messages: [{ role: 'user', content: long }], max_tokens: 2 }],
      ['/v1/completions', { model: RANDOM_MODEL, prompt: long, max_tokens: 2 }],
    ] as const) {
      const res = await fetch(url(route), { method: 'POST', headers: json(), body: JSON.stringify(body) });
      const text = await res.text();
      assert.strictEqual(res.status, 400, `${route}: ${text.slice(0, 300)}`);
      assert.strictEqual((JSON.parse(text) as { error: { code: string } }).error.code, 'context_length_exceeded', route);
    }
    const tokens = Array.from({ length: 130_000 }, (_, i) => 40 + (i % 50));
    const sample = await fetch(url('/api/v1/asample'), {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ base_model: RANDOM_MODEL, prompt: { chunks: [{ type: 'encoded_text', tokens }] }, sampling_params: { max_tokens: 2 } }),
    });
    const submitted = await sample.text();
    assert.strictEqual(sample.status, 200, submitted.slice(0, 300));
    const { request_id } = JSON.parse(submitted) as { request_id: string };
    const result = await fetch(url('/api/v1/retrieve_future'), { method: 'POST', headers: json(), body: JSON.stringify({ request_id }) });
    const r = (await result.json()) as { error?: string; category?: string };
    assert.strictEqual(r.category, 'user');
    assert.match(r.error ?? '', /the prompt has 130000 tokens; the model's context is \d+/);
    await assertAlive();
  });

  it(`refuses a TTL past ${MAX_TTL_SECONDS} s with 400 naming the limit, on the TTL route and on a save`, async () => {
    const tc = await service!.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
    const saved = await (await tc.saveState('ttl')).result();
    const run = encodeURIComponent(tc.modelId);
    const ttl = await fetch(url(`/api/v1/training_runs/${run}/checkpoints/weights/ttl/ttl`), { method: 'PUT', headers: json(), body: JSON.stringify({ ttl_seconds: 9_000_000_000_000 }) });
    assert.strictEqual(ttl.status, 400);
    assert.match(((await ttl.json()) as { detail: string }).detail, new RegExp(`ttl_seconds: at most ${MAX_TTL_SECONDS} \\(100 years\\).*got 9000000000000`));
    const ok = await fetch(url(`/api/v1/training_runs/${run}/checkpoints/weights/ttl/ttl`), { method: 'PUT', headers: json(), body: JSON.stringify({ ttl_seconds: MAX_TTL_SECONDS }) });
    assert.strictEqual(ok.status, 204, 'the limit itself is accepted');
    const save = await fetch(url('/api/v1/save_weights'), { method: 'POST', headers: json(), body: JSON.stringify({ model_id: tc.modelId, path: 'ttl2', seq_id: 2, ttl_seconds: 9_000_000_000_000 }) });
    assert.strictEqual(save.status, 400);
    assert.match(((await save.json()) as { detail: string }).detail, /ttl_seconds: at most/);
    assert.ok(saved.path.endsWith('/weights/ttl'));
    assert.deepStrictEqual((await service!.listCheckpoints(tc.modelId)).checkpoints.map((c) => c.checkpoint_id), ['weights/ttl'], 'the refused save wrote nothing');
    await assertAlive();
  });

  it('asks for the key on a path that only starts like an archive link (dot segments resolve elsewhere)', async () => {
    // found while fixing the above: the key check looked at the raw target, the router at the resolved path
    const port = new URL(proc.url).port;
    for (const target of ['/api/v1/_engine/archives/../../training_runs', '/api/v1/_engine/archives/%2e%2e/%2E%2E/sessions']) {
      const a = await raw(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      assert.strictEqual(a.status, 401, `${target}: ${a.text}`);
    }
    const link = await raw(`GET /api/v1/_engine/archives/unknown.tar HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    assert.strictEqual(link.status, 404, 'an archive link itself needs no key (its token is the key)');
  });

  it('answers CONNECT with 405 instead of dropping the connection', async () => {
    const a = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.strictEqual(a.status, 405, a.text);
    await assertAlive();
  });

  it('answers a request refused before its body is read (a wrong key, no such route) even when the body is large', async () => {
    // answering and closing on unread bytes resets the connection, and the client could lose the answer
    const port = Number(new URL(proc.url).port);
    const body = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (const [what, line, key, status] of [
      ['a wrong key', 'POST /api/v1/create_session', 'wrong', 401],
      ['no such route', 'POST /api/v1/no_such_route', proc.apiKey, 404],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        const head = `${line} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
        const a = await rawExchange(port, Buffer.concat([Buffer.from(head, 'latin1'), body]), HANG_MS);
        assert.strictEqual(a.status, status, `${what}, try ${i + 1}: ${a.status ?? 'no status line'} ${a.text}`);
      }
    }
    await assertAlive();
  });
});
