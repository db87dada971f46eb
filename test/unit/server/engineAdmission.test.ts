// The local engine answers only its owner: the per-launch token as API key, a loopback Host with its
// port, no Origin, JSON or protobuf bodies, and bounded bodies and sampling requests. Raw node:http,
// since fetch will not send an arbitrary Host or Origin.
import * as assert from 'assert';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineServer, MAX_NUM_SAMPLES, MAX_SAMPLING_TOKENS, startEngineServer } from '../../../src/engine/server';
import { MAX_BODY } from '../../../src/engine/server/http';
import { ServiceClient } from '../../../src/core/tinker/client';

const TOKEN = 'tml-local-admission-test-token';

interface Answer {
  status: number;
  body: string;
}

function send(port: number, p: string, o: { method?: string; headers?: Record<string, string>; body?: Buffer | string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: `/api/v1/${p}`, method: o.method ?? 'POST', headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('engine server: who gets in', function () {
  this.timeout(60_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  let ok: Record<string, string>;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-admission-'));
    backend = await createComputeBackend({ weightsDir: path.join(dir, 'none') });
    server = await startEngineServer({ dataDir: dir, backend, apiKey: TOKEN });
    ok = { host: `127.0.0.1:${server.port}`, 'x-api-key': TOKEN, 'content-type': 'application/json' };
  });
  after(async () => {
    await server.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const session = '{"tags":[]}';

  it('answers its owner', async () => {
    const r = await send(server.port, 'create_session', { headers: ok, body: session });
    assert.strictEqual(r.status, 200, r.body);
    const client = await ServiceClient.connect({ baseUrl: server.url, apiKey: TOKEN, clientVersion: 'test' });
    assert.ok((await client.capabilities()).supported_models.length > 0);
    await client.close();
  });

  it('refuses a request without the token, or with a wrong one', async () => {
    const { 'x-api-key': _, ...noKey } = ok;
    assert.strictEqual((await send(server.port, 'create_session', { headers: noKey, body: session })).status, 401);
    assert.strictEqual((await send(server.port, 'healthz', { method: 'GET', headers: { ...noKey } })).status, 401);
    assert.strictEqual((await send(server.port, 'create_session', { headers: { ...ok, 'x-api-key': `${TOKEN}x` }, body: session })).status, 401);
    await assert.rejects(ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test' }));
  });

  it('refuses a Host that is not its loopback address and port (DNS rebinding)', async () => {
    for (const host of ['evil.example', `evil.example:${server.port}`, '127.0.0.1', `127.0.0.1:${server.port + 1}`]) {
      const r = await send(server.port, 'create_session', { headers: { ...ok, host }, body: session });
      assert.strictEqual(r.status, 421, host);
    }
  });

  it('refuses any request from a web page (Origin)', async () => {
    for (const origin of ['https://evil.example', `http://127.0.0.1:${server.port}`, 'null']) {
      const r = await send(server.port, 'create_session', { headers: { ...ok, origin }, body: session });
      assert.strictEqual(r.status, 403, origin);
    }
  });

  it('refuses a cross-site style text/plain or form POST', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await send(server.port, 'create_session', { headers: { ...ok, 'content-type': type }, body: session });
      assert.strictEqual(r.status, 415, type);
    }
    const { 'content-type': _, ...untyped } = ok;
    assert.strictEqual((await send(server.port, 'create_session', { headers: untyped, body: session })).status, 415);
  });

  it('refuses a body over 64 MiB, and a zstd body that decompresses to more', async () => {
    const big = Buffer.alloc(MAX_BODY + 1024, 0x20);
    const r = await send(server.port, 'create_session', { headers: ok, body: big });
    assert.strictEqual(r.status, 413, r.body);
    // chunked: no Content-Length to refuse up front
    const chunked = await send(server.port, 'create_session', { headers: { ...ok, 'transfer-encoding': 'chunked' }, body: big });
    assert.strictEqual(chunked.status, 413, chunked.body);
    const zstd = (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
    if (zstd) {
      const bomb = zstd(big);
      const z = await send(server.port, 'forward_backward', {
        headers: { ...ok, 'content-type': 'application/x-protobuf', 'content-encoding': 'zstd' },
        body: bomb,
      });
      assert.strictEqual(z.status, 413, z.body);
    }
  });

  it('caps num_samples and max_tokens of a sampling request', async () => {
    const sample = (n: number, maxTokens: number) =>
      JSON.stringify({
        num_samples: n,
        base_model: RANDOM_MODEL,
        prompt: { chunks: [{ type: 'encoded_text', tokens: [1, 2, 3] }] },
        sampling_params: { max_tokens: maxTokens, temperature: 1 },
      });
    const many = await send(server.port, 'asample', { headers: ok, body: sample(MAX_NUM_SAMPLES + 1, 4) });
    assert.strictEqual(many.status, 422, many.body);
    assert.match(many.body, /num_samples: at most/);
    const long = await send(server.port, 'asample', { headers: ok, body: sample(1, MAX_SAMPLING_TOKENS + 1) });
    assert.strictEqual(long.status, 422, long.body);
    assert.match(long.body, /max_tokens: at most/);
  });
});
