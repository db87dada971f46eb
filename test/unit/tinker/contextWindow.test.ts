// The client's context-window capping (the cookbook's completer) against the real engine over HTTP,
// with a recording proxy in between to see what is actually sent: max_tokens is cut so that prompt +
// completion fit the model's context (as get_server_capabilities reports it, for base-model and
// path samplers alike), and a prompt that fills the context is an error naming its length, sent never.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceClient } from '../../../src/core/tinker/client';
import { ContextWindowError } from '../../../src/core/tinker/errors';
import { textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { FaultProxy } from './faultProxy';
import { startEngine } from './engineFixtures';

describe('Tinker client: context-window capping against the engine', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let proxy: FaultProxy;
  let client: ServiceClient;
  /** max_tokens of every asample the engine received */
  const sent: unknown[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-context-'));
    engine = await startEngine(dir);
    proxy = await FaultProxy.start({ upstream: engine.server.url });
    // a rule that never fires: it only records what the client sends
    proxy.inject({
      match: (r) => {
        if (r.path === '/api/v1/asample') sent.push((r.json?.['sampling_params'] as { max_tokens?: number } | undefined)?.max_tokens);
        return false;
      },
      fault: { kind: 'delay', ms: 0 },
    });
    client = await ServiceClient.connect({ baseUrl: proxy.url, clientVersion: 'test', heartbeatIntervalMs: 60_000 });
  });
  after(async () => {
    client?.close();
    await proxy?.close();
    await engine?.server.close();
    await engine?.backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const prompt = (n: number) => textInput(Array.from({ length: n }, (_, i) => 97 + (i % 26)));

  it('reads the model\'s context from the server', async () => {
    const caps = await client.capabilities();
    const ctx = caps.supported_models.find((m) => m.model_name === RANDOM_MODEL)?.max_context_length;
    assert.strictEqual(ctx, 64);
    assert.strictEqual(await client.contextLength(RANDOM_MODEL), 64);
    assert.strictEqual(await client.contextLength('no/such-model'), undefined);
  });

  it('caps max_tokens so that prompt + completion fit; leaves a request that fits as it is', async () => {
    const sc = await client.createSamplingClient({ baseModel: RANDOM_MODEL });
    sent.length = 0;
    const r = await sc.sample(prompt(60), { max_tokens: 20, temperature: 1, seed: 1 }, {});
    assert.ok(r.sequences[0]!.tokens.length <= 4);
    await sc.sample(prompt(10), { max_tokens: 20, temperature: 1, seed: 1 }, {});
    assert.deepStrictEqual(sent, [4, 20]);
  });

  it('a sampler made from a checkpoint path learns its base model from the server and caps too', async () => {
    const tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
    const sc = await tc.saveWeightsAndGetSamplingClient();
    const saved = await (await tc.saveWeightsForSampler('ctx')).result();
    const byPath = await client.createSamplingClient({ modelPath: saved.path! });
    sent.length = 0;
    await sc.sample(prompt(50), { max_tokens: 30, seed: 2 }, {});
    await byPath.sample(prompt(63), { max_tokens: 30, seed: 2 }, {});
    assert.deepStrictEqual(sent, [14, 1]);
    assert.deepStrictEqual(await byPath.contextLength(), { model: RANDOM_MODEL, length: 64 });
  });

  it('a prompt as long as the context, or longer, is an error naming its length, and nothing is sent', async () => {
    const sc = await client.createSamplingClient({ baseModel: RANDOM_MODEL });
    sent.length = 0;
    await assert.rejects(sc.sample(prompt(64), { max_tokens: 5 }, {}), (e: unknown) => {
      assert.ok(e instanceof ContextWindowError);
      assert.strictEqual(e.message.split(':')[0], `the prompt is 64 tokens, as long as the context of ${RANDOM_MODEL} (64 tokens)`);
      return true;
    });
    await assert.rejects(sc.sample(prompt(100), { max_tokens: 5 }, {}), /the prompt is 100 tokens, longer than the context of tinker-studio\/random-gpt \(64 tokens\): no room is left for a completion/);
    await assert.rejects(sc.computeLogprobs(prompt(80)), ContextWindowError);
    assert.deepStrictEqual(sent, []);
  });
});
