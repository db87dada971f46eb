// The engine's OpenAI-compatible routes, driven by the official `openai` npm client over real HTTP:
// chat and text completions, streamed and not, the three `model` forms (base model, sampler
// checkpoint path, "<base>;<path>"), errors in OpenAI's shape (unknown model 404, missing or wrong
// key 401), the key as Bearer or X-API-Key, and the Host/Origin checks of the Tinker routes.
import * as assert from 'assert';
import * as fs from 'fs';
import * as http from 'http';
import OpenAI from 'openai';
import * as os from 'os';
import * as path from 'path';
import { ServiceClient } from '../../../src/core/tinker/client';
import { createComputeBackend } from '../../../src/engine/model';
import { ARITH_MODEL } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';
import { resolveModel, streamPieces } from '../../../src/engine/server/openaiRoutes';
import type { ComputeBackend } from '../../../src/engine/contract';

const KEY = 'tml-local-openai-test-key';

function raw(url: string, o: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: o.method ?? 'POST', headers: o.headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('engine: OpenAI-compatible inference (openai npm client)', function () {
  this.timeout(120_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  let oai: OpenAI;
  let samplerPath: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-oai-'));
    backend = await createComputeBackend({});
    server = await startEngineServer({ dataDir: path.join(dir, 'data'), backend, apiKey: KEY });
    oai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const client = await ServiceClient.connect({ baseUrl: server.url, apiKey: KEY, clientVersion: 'test' });
    try {
      const tc = await client.createLoraTrainingClient(ARITH_MODEL, { rank: 2, seed: 1 });
      samplerPath = (await (await tc.saveWeightsForSampler('oai')).result()).path!;
    } finally {
      client.close();
    }
  });
  after(async () => {
    await server?.close();
    await backend?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a chat completion on a base model, rendered with its chat template', async () => {
    const r = await oai.chat.completions.create({ model: ARITH_MODEL, messages: [{ role: 'user', content: 'What is 2 + 3?' }], temperature: 0, seed: 1 });
    assert.strictEqual(r.object, 'chat.completion');
    assert.strictEqual(r.choices.length, 1);
    assert.strictEqual(r.choices[0]!.message.role, 'assistant');
    assert.ok(typeof r.choices[0]!.message.content === 'string' && r.choices[0]!.message.content.length > 0, JSON.stringify(r.choices[0]));
    assert.ok(!r.choices[0]!.message.content!.includes('<|im_end|>'), 'the stop token is not part of the reply');
    assert.strictEqual(r.choices[0]!.finish_reason, 'stop');
    assert.ok(r.usage && r.usage.prompt_tokens > 10 && r.usage.total_tokens === r.usage.prompt_tokens + r.usage.completion_tokens);
  });

  it('streams a chat reply whose chunks (two or more) concatenate to the non-streamed reply at temperature 0', async () => {
    const req = { model: ARITH_MODEL, messages: [{ role: 'user' as const, content: 'What is 67 + 58?' }], temperature: 0, seed: 7 };
    const whole = await oai.chat.completions.create(req);
    const pieces: string[] = [];
    let finish: string | null | undefined;
    for await (const chunk of await oai.chat.completions.create({ ...req, stream: true })) {
      assert.strictEqual(chunk.object, 'chat.completion.chunk');
      const c = chunk.choices[0];
      if (c?.delta.content) pieces.push(c.delta.content);
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.ok(pieces.length >= 2, `at least two content chunks (got ${JSON.stringify(pieces)})`);
    assert.strictEqual(pieces.join(''), whole.choices[0]!.message.content);
    assert.strictEqual(finish, whole.choices[0]!.finish_reason);
  });

  it('answers n choices, honours max_tokens and reports per-token logprobs', async () => {
    const r = await oai.chat.completions.create({ model: ARITH_MODEL, messages: [{ role: 'user', content: 'What is 10 + 20?' }], n: 3, max_tokens: 2, seed: 3, logprobs: true });
    assert.deepStrictEqual(r.choices.map((c) => c.index), [0, 1, 2]);
    for (const c of r.choices) {
      assert.ok(c.logprobs?.content && c.logprobs.content.length <= 2 && c.logprobs.content.every((t) => t.logprob <= 0));
      assert.ok(c.finish_reason === 'length' || c.finish_reason === 'stop');
    }
    assert.ok(r.usage!.completion_tokens <= 6);
  });

  it('answers text completions, streamed and not, with stop strings left out', async () => {
    const prompt = '<|im_start|>user\nWhat is 40 + 2?<|im_end|>\n<|im_start|>assistant\n';
    const whole = await oai.completions.create({ model: ARITH_MODEL, prompt, temperature: 0, seed: 2, stop: ['<|im_end|>'], logprobs: 1 });
    assert.strictEqual(whole.object, 'text_completion');
    const text = whole.choices[0]!.text;
    assert.ok(text.length > 0 && !text.includes('<|im_end|>'), JSON.stringify(text));
    assert.strictEqual(whole.choices[0]!.finish_reason, 'stop');
    assert.ok(whole.choices[0]!.logprobs?.token_logprobs?.length);
    let streamed = '';
    for await (const chunk of await oai.completions.create({ model: ARITH_MODEL, prompt, temperature: 0, seed: 2, stop: ['<|im_end|>'], stream: true })) streamed += chunk.choices[0]?.text ?? '';
    assert.strictEqual(streamed, text);
  });

  it('samples a sampler checkpoint by its path and as "<base>;<path>", and refuses a mismatched base', async () => {
    const messages = [{ role: 'user' as const, content: 'What is 7 + 8?' }];
    const byPath = await oai.chat.completions.create({ model: samplerPath, messages, temperature: 0, seed: 1 });
    assert.strictEqual(byPath.model, samplerPath);
    const both = await oai.chat.completions.create({ model: `${ARITH_MODEL};${samplerPath}`, messages, temperature: 0, seed: 1 });
    assert.strictEqual(both.choices[0]!.message.content, byPath.choices[0]!.message.content);
    const ctx = await oai.chat.completions.create({ model: `${ARITH_MODEL}:peft:64`, messages, temperature: 0, seed: 1 });
    assert.ok(ctx.choices[0]!.message.content !== null);
    await assert.rejects(oai.chat.completions.create({ model: `tinker-studio/random-gpt;${samplerPath}`, messages }), (e: unknown) => e instanceof OpenAI.BadRequestError && /trained on tinker-studio\/arith-gpt/.test(e.message));
    await assert.rejects(oai.chat.completions.create({ model: samplerPath.replace('sampler_weights', 'weights'), messages }), (e: unknown) => e instanceof OpenAI.BadRequestError && /not a sampler checkpoint/.test(e.message));
  });

  it('answers an unknown model with a 404 in OpenAI\'s shape', async () => {
    await assert.rejects(
      oai.chat.completions.create({ model: 'no/such-model', messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found' && e.param === 'model' && e.type === 'invalid_request_error',
    );
    await assert.rejects(
      oai.chat.completions.create({ model: samplerPath.replace(/oai$/, 'gone'), messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found',
    );
  });

  it('refuses a missing or wrong key (401), takes X-API-Key too, and keeps the Host and Origin checks', async () => {
    const noKey = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    await assert.rejects(noKey.chat.completions.create({ model: ARITH_MODEL, messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => e instanceof OpenAI.AuthenticationError);
    const body = JSON.stringify({ model: ARITH_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
    const missing = await raw(`${server.url}/v1/chat/completions`, { headers: { 'content-type': 'application/json' }, body });
    assert.strictEqual(missing.status, 401);
    assert.strictEqual((JSON.parse(missing.body) as { error: { code: string } }).error.code, 'invalid_api_key');
    const xKey = await raw(`${server.url}/v1/chat/completions`, { headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
    assert.strictEqual(xKey.status, 200, xKey.body);
    const origin = await raw(`${server.url}/v1/chat/completions`, { headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, origin: 'https://evil.example' }, body });
    assert.strictEqual(origin.status, 403);
    const host = await raw(`${server.url}/v1/chat/completions`, { headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, host: 'evil.example' }, body });
    assert.strictEqual(host.status, 421);
    // the Tinker routes still want X-API-Key: a Bearer token is for the OpenAI-compatible routes only
    const tinker = await raw(`${server.url}/api/v1/get_server_capabilities`, { method: 'GET', headers: { authorization: `Bearer ${KEY}` } });
    assert.strictEqual(tinker.status, 401);
    // the cloud's layout (/oai/api/v1) answers too
    const cloudLayout = await raw(`${server.url}/oai/api/v1/chat/completions`, { headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
    assert.strictEqual(cloudLayout.status, 200, cloudLayout.body);
  });

  it('reads the three model forms and splits streamed text only where tokens end a whole character', () => {
    const served = new Set([ARITH_MODEL]);
    assert.deepStrictEqual(resolveModel(`${ARITH_MODEL}:peft:32`, served), { source: { baseModel: ARITH_MODEL }, context: 32 });
    assert.deepStrictEqual(resolveModel('tinker://r:train:0/sampler_weights/x', served), { source: { modelPath: 'tinker://r:train:0/sampler_weights/x' } });
    assert.deepStrictEqual(resolveModel(`${ARITH_MODEL};tinker://r:train:0/sampler_weights/x`, served), {
      source: { modelPath: 'tinker://r:train:0/sampler_weights/x' },
      baseModel: ARITH_MODEL,
    });
    assert.throws(() => resolveModel('Qwen/Qwen3-8B', served), /does not exist/);
    const bytes = [...Buffer.from('a€b', 'utf8')];
    const decode = (ids: readonly number[]) => Buffer.from(ids).toString('utf8');
    assert.deepStrictEqual(streamPieces(bytes, 'a€b', decode), ['a', '€', 'b']);
  });
});
