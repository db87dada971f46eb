// What the engine holds in memory is let go: samplers made for direct sampling requests (no sampling
// session) are released once idle, and expired archive download links are pruned.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';

async function post(url: string, p: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${url}/api/v1/${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await r.json()) as Record<string, unknown>;
}

/** waits on a condition of the engine's state (its sweep has no event to wait on), generous limit */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('engine server: releasing idle samplers and expired archive links', function () {
  this.timeout(60_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  const released: string[] = [];
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-release-'));
    const real = await createComputeBackend({ weightsDir: path.join(dir, 'none') });
    const releaseSampler = real.releaseSampler.bind(real);
    real.releaseSampler = (id) => (released.push(id), releaseSampler(id));
    backend = real;
    server = await startEngineServer({ dataDir: dir, backend, longPollMs: 300, sessionTimeoutMs: 400, archiveLinkTtlMs: 1 });
  });
  after(async () => {
    await server.close();
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('releases the sampler of direct sampling requests once it is idle, and makes a new one when asked again', async () => {
    const sampleDirect = async () => {
      const h = await post(server.url, 'asample', {
        base_model: RANDOM_MODEL,
        prompt: { chunks: [{ type: 'encoded_text', tokens: Array.from(encodeChat('hi')) }] },
        num_samples: 1,
        sampling_params: { max_tokens: 2, temperature: 1, seed: 1 },
        type: 'sample',
      });
      for (;;) {
        const r = await post(server.url, 'retrieve_future', { request_id: h.request_id });
        if (r.type !== 'try_again') return r;
      }
    };
    const first = await sampleDirect();
    assert.ok(Array.isArray(first.sequences), JSON.stringify(first));
    assert.strictEqual(server.stats().directSamplers, 1);
    await until(() => server.stats().directSamplers === 0, 'the idle direct sampler to be released');
    assert.deepStrictEqual(released, [`direct:${RANDOM_MODEL}`]);
    assert.strictEqual(server.stats().samplers, 0);
    assert.ok(Array.isArray((await sampleDirect()).sequences), 'a later direct request loads a sampler again');
  });

  it('prunes archive download links once they expired', async () => {
    const t = new Date().toISOString();
    const run = { training_run_id: 'run-a', base_model: RANDOM_MODEL, model_owner: 'local-engine', is_lora: true, corrupted: false, lora_rank: 2, train_mlp: true, train_attn: true, train_unembed: true, created: t, last_request_time: t, user_metadata: null, checkpoints: [] };
    await server.store.putRun(run);
    await server.store.writeCheckpoint(run, 'sampler_weights', '000001', new Uint8Array([1]), null);
    const r = await fetch(`${server.url}/api/v1/training_runs/run-a/checkpoints/sampler_weights/000001/archive`, { redirect: 'manual' });
    assert.strictEqual(r.status, 302);
    assert.strictEqual(server.stats().archiveLinks, 1);
    await until(() => server.stats().archiveLinks === 0, 'the expired archive link to be pruned');
    assert.strictEqual((await fetch(String(r.headers.get('location')))).status, 404);
  });
});
