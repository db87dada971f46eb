// Server-side rules over raw HTTP: requests of a model run in seq_id order (a later one waits for a
// gap to be filled), replays are deduplicated, a different payload under a used seq_id is a conflict,
// and sessions without heartbeats expire and release their models.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { encodeForwardBackwardRequest } from '../../../src/core/tinker/proto';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';

async function post(url: string, p: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${url}/api/v1/${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

async function result(url: string, requestId: unknown): Promise<Record<string, unknown>> {
  for (;;) {
    const r = await post(url, 'retrieve_future', { request_id: requestId });
    if (r.json.type !== 'try_again') return r.json;
  }
}

describe('engine server: ordering, deduplication, sessions', function () {
  this.timeout(60_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-server-'));
    backend = await createComputeBackend({ weightsDir: path.join(dir, 'none') });
    // sessions outlive any test here, however loaded the machine; the expiry test starts its own server
    server = await startEngineServer({ dataDir: dir, backend, longPollMs: 300, sessionTimeoutMs: 120_000 });
  });
  after(async () => {
    await server.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function newModel(url = server.url): Promise<{ session: string; model: string }> {
    const s = await post(url, 'create_session', { tags: [], user_metadata: {}, type: 'create_session' });
    const session = s.json.session_id as string;
    const h = await post(url, 'create_model', { session_id: session, model_seq_id: 0, base_model: RANDOM_MODEL, lora_config: { rank: 2, seed: 1 }, type: 'create_model' });
    const r = await result(url, h.json.request_id);
    return { session, model: r.model_id as string };
  }

  function fbBody(model: string, seq: number, text = 'hello'): Uint8Array {
    const t = encodeChat(text);
    return encodeForwardBackwardRequest({
      model_id: model,
      seq_id: seq,
      loss_fn: 'cross_entropy',
      data: [{ model_input: { chunks: [{ type: 'encoded_text', tokens: t.slice(0, -1) }] }, loss_fn_inputs: { target_tokens: { dtype: 'int64', data: t.slice(1) }, weights: { dtype: 'float32', data: t.slice(1).map(() => 1) } } }],
    });
  }

  async function postFb(body: Uint8Array): Promise<{ status: number; json: Record<string, unknown> }> {
    const r = await fetch(`${server.url}/api/v1/forward_backward`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  }

  it('runs a later seq_id only after the gap before it is filled', async () => {
    const { session, model } = await newModel();
    const beat = setInterval(() => void post(server.url, 'session_heartbeat', { session_id: session, type: 'session_heartbeat' }), 100);
    try {
      const opt = await post(server.url, 'optim_step', { adam_params: { learning_rate: 0.01 }, model_id: model, seq_id: 2, type: 'optim_step' });
      assert.strictEqual(opt.status, 200);
      const early = await post(server.url, 'retrieve_future', { request_id: opt.json.request_id });
      assert.strictEqual(early.json.type, 'try_again', 'seq 2 waits for seq 1');
      const fb = await postFb(fbBody(model, 1));
      await result(server.url, fb.json.request_id);
      await result(server.url, opt.json.request_id);
      const steps = (await (await fetch(`${server.url}/api/v1/_engine/applied_steps?model_id=${encodeURIComponent(model)}`)).json()) as { steps: Array<{ seq_id: number; type: string }> };
      assert.deepStrictEqual(steps.steps.map((s) => [s.seq_id, s.type]), [[1, 'forward_backward'], [2, 'optim_step']]);
    } finally {
      clearInterval(beat);
    }
  });

  it('answers a replay with the original request id and a different payload with 409', async () => {
    const { session, model } = await newModel();
    const beat = setInterval(() => void post(server.url, 'session_heartbeat', { session_id: session, type: 'session_heartbeat' }), 100);
    try {
      const a = await postFb(fbBody(model, 1));
      const b = await postFb(fbBody(model, 1));
      assert.strictEqual(b.json.request_id, a.json.request_id);
      const c = await postFb(fbBody(model, 1, 'different'));
      assert.strictEqual(c.status, 409);
      assert.match(String(c.json.detail), /sequence number was reused/);
      await result(server.url, a.json.request_id);
      const steps = await server.store.appliedSteps();
      assert.strictEqual(steps.filter((s) => s.model_id === model).length, 1, 'applied once');
    } finally {
      clearInterval(beat);
    }
  });

  it('expires a session without heartbeats and releases its models', async () => {
    const short = await startEngineServer({ dataDir: path.join(dir, 'short-sessions'), backend, longPollMs: 300, sessionTimeoutMs: 400 });
    try {
      await expiresModel(short.url);
    } finally {
      await short.close();
    }
  });

  async function expiresModel(url: string): Promise<void> {
    const { model } = await newModel(url);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await post(url, 'get_info', { model_id: model, type: 'get_info' });
      if (r.status === 404) {
        assert.match(String(r.json.detail), /not loaded/);
        break;
      }
      assert.ok(Date.now() < deadline, 'the model was released within 20 s');
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  it('rejects malformed bodies naming the field', async () => {
    const r = await post(server.url, 'create_model', { session_id: 'x', base_model: RANDOM_MODEL, lora_config: { rank: 'eight' } });
    assert.strictEqual(r.status, 422);
    assert.match(String(r.json.detail), /lora_config\.rank/);
    const u = await post(server.url, 'retrieve_future', { request_id: 'ffffffff-1' });
    assert.strictEqual(u.status, 410, 'an id from another boot is expired, not unknown');
  });
});
