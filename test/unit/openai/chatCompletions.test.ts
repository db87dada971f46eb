// The streamed chat-completions client the VS Code chat models use, over real HTTP against the
// embedded engine: pieces arrive one per token and concatenate to the non-streamed reply (taken with
// the official `openai` client), an abort ends the stream, errors carry the server's message and never
// the key, and a server that does not stream is named as such. openAiBaseUrl gives each backend's path.
// A tool loop on arith-chat, streamed and not: the call, its result sent back, the final answer.
import * as assert from 'assert';
import * as fs from 'fs';
import * as http from 'http';
import OpenAI from 'openai';
import * as os from 'os';
import * as path from 'path';
import { type ChatMessageIn, type ChatStreamPart, type ChatToolCall, completeChat, OpenAiEndpointError, streamChatCompletion } from '../../../src/core/openai/chatCompletions';
import { openAiBaseUrl } from '../../../src/core/openai/endpoint';
import { createComputeBackend } from '../../../src/engine/model';
import { ARITH_CHAT_MODEL, ARITH_MODEL } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';
import type { ComputeBackend } from '../../../src/engine/contract';

const KEY = 'tml-local-stream-client-test-key';

async function collect(gen: AsyncGenerator<ChatStreamPart, { finishReason: string | undefined }>): Promise<{ pieces: string[]; calls: ChatToolCall[]; finishReason: string | undefined }> {
  const pieces: string[] = [];
  const calls: ChatToolCall[] = [];
  for (;;) {
    const r = await gen.next();
    if (r.done) return { pieces, calls, finishReason: r.value.finishReason };
    if (r.value.kind === 'text') pieces.push(r.value.text);
    else calls.push(r.value.call);
  }
}

describe('OpenAI-compatible chat stream client (against the engine)', function () {
  this.timeout(120_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-oai-stream-'));
    backend = await createComputeBackend({});
    server = await startEngineServer({ dataDir: path.join(dir, 'data'), backend, apiKey: KEY });
  });
  after(async () => {
    await server?.close();
    await backend?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('openAiBaseUrl: the engine under /v1, a service under /oai/api/v1', () => {
    assert.strictEqual(openAiBaseUrl('local', 'http://127.0.0.1:8765/'), 'http://127.0.0.1:8765/v1');
    assert.strictEqual(openAiBaseUrl('cloud', 'https://tinker.thinkingmachines.dev/services/tinker-prod'), 'https://tinker.thinkingmachines.dev/services/tinker-prod/oai/api/v1');
    assert.strictEqual(openAiBaseUrl('custom', 'http://10.0.0.2:8000'), 'http://10.0.0.2:8000/oai/api/v1');
  });

  it('yields the reply a piece at a time; the pieces are the non-streamed reply of the same seed', async () => {
    const endpoint = { baseUrl: openAiBaseUrl('local', server.url), apiKey: KEY };
    const messages = [{ role: 'user' as const, content: 'What is 67 + 58?' }];
    const whole = await new OpenAI({ baseURL: endpoint.baseUrl, apiKey: KEY, maxRetries: 0 }).chat.completions.create({ model: ARITH_MODEL, messages, temperature: 0, seed: 7 });
    const { pieces, finishReason } = await collect(streamChatCompletion(endpoint, ARITH_MODEL, messages, { temperature: 0, seed: 7 }));
    assert.ok(pieces.length >= 2, JSON.stringify(pieces));
    assert.strictEqual(pieces.join(''), whole.choices[0]!.message.content);
    assert.strictEqual(finishReason, whole.choices[0]!.finish_reason);
    // also under the cloud's layout
    const cloudLayout = await collect(streamChatCompletion({ baseUrl: `${server.url}/oai/api/v1`, apiKey: KEY }, ARITH_MODEL, messages, { temperature: 0, seed: 7 }));
    assert.deepStrictEqual(cloudLayout.pieces, pieces);
  });

  it('a tool loop on arith-chat, streamed: the call arrives whole (as the openai client reads it), the result goes back, the final text answers', async () => {
    const endpoint = { baseUrl: openAiBaseUrl('local', server.url), apiKey: KEY };
    const tools = [{ type: 'function' as const, function: { name: 'add', description: 'Add two integers.', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } } } }];
    const messages: ChatMessageIn[] = [{ role: 'user', content: 'What is 123 + 456?' }];
    const first = await collect(streamChatCompletion(endpoint, ARITH_CHAT_MODEL, messages, { temperature: 0, tools }));
    assert.strictEqual(first.finishReason, 'tool_calls');
    assert.deepStrictEqual(first.pieces, []);
    assert.strictEqual(first.calls.length, 1, JSON.stringify(first.calls));
    const call = first.calls[0]!;
    assert.deepStrictEqual(call.function, { name: 'add', arguments: '{"a": 123, "b": 456}' });
    const whole = await new OpenAI({ baseURL: endpoint.baseUrl, apiKey: KEY, maxRetries: 0 }).chat.completions.create({ model: ARITH_CHAT_MODEL, messages, tools, temperature: 0 });
    const wholeCall = whole.choices[0]!.message.tool_calls![0]!;
    assert.ok(wholeCall.type === 'function');
    assert.deepStrictEqual(call.function, wholeCall.function, 'the streamed call is the non-streamed one');

    const args = JSON.parse(call.function.arguments) as { a: number; b: number };
    const next: ChatMessageIn[] = [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: String(args.a + args.b) }];
    const final = await collect(streamChatCompletion(endpoint, ARITH_CHAT_MODEL, next, { temperature: 0, tools }));
    assert.strictEqual(final.finishReason, 'stop');
    assert.deepStrictEqual(final.calls, []);
    assert.strictEqual(final.pieces.join(''), '579');
  });

  it('the same tool loop not streamed (completeChat); errors as the stream’s', async () => {
    const endpoint = { baseUrl: openAiBaseUrl('local', server.url), apiKey: KEY };
    const messages: ChatMessageIn[] = [{ role: 'system', content: 'Tools: add(a, b) - Add two integers.' }, { role: 'user', content: 'What is 123 + 456?' }];
    const first = await completeChat(endpoint, ARITH_CHAT_MODEL, messages, { temperature: 0 });
    assert.strictEqual(first.finishReason, 'tool_calls');
    assert.strictEqual(first.content, null);
    assert.strictEqual(first.toolCalls.length, 1);
    const call = first.toolCalls[0]!;
    assert.deepStrictEqual(call.function, { name: 'add', arguments: '{"a": 123, "b": 456}' });
    const streamed = await collect(streamChatCompletion(endpoint, ARITH_CHAT_MODEL, messages, { temperature: 0 }));
    assert.deepStrictEqual(streamed.calls.map((c) => c.function), [call.function]);

    const args = JSON.parse(call.function.arguments) as { a: number; b: number };
    const final = await completeChat(endpoint, ARITH_CHAT_MODEL, [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: String(args.a + args.b) }], { temperature: 0 });
    assert.deepStrictEqual(final, { content: '579', toolCalls: [], finishReason: 'stop' });

    await assert.rejects(completeChat(endpoint, ARITH_CHAT_MODEL, messages, { tool_choice: 'required' }), (e: unknown) => e instanceof OpenAiEndpointError && e.status === 400 && /tool_choice: "required" is not supported/.test(e.message));
    await assert.rejects(completeChat({ ...endpoint, apiKey: 'tml-wrong-key-0123456789' }, ARITH_CHAT_MODEL, messages), (e: unknown) => e instanceof OpenAiEndpointError && e.status === 401 && !e.message.includes('tml-wrong-key-0123456789'));
  });

  it('an abort ends the stream at the next piece', async () => {
    const ac = new AbortController();
    const got: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const p of streamChatCompletion({ baseUrl: `${server.url}/v1`, apiKey: KEY }, ARITH_MODEL, [{ role: 'user', content: 'What is 67 + 58?' }], { temperature: 0, seed: 7 }, { signal: ac.signal })) {
          got.push(p.kind === 'text' ? p.text : '');
          ac.abort();
        }
      })(),
      (e: unknown) => e instanceof Error && e.name === 'AbortError',
    );
    assert.strictEqual(got.length, 1);
  });

  it('errors carry the server’s message and code, never the key; options are checked before sending', async () => {
    const ep = { baseUrl: `${server.url}/v1`, apiKey: KEY };
    await assert.rejects(collect(streamChatCompletion(ep, 'no/such-model', [{ role: 'user', content: 'hi' }])), (e: unknown) => e instanceof OpenAiEndpointError && e.status === 404 && e.code === 'model_not_found');
    await assert.rejects(
      collect(streamChatCompletion({ ...ep, apiKey: 'tml-wrong-key-0123456789' }, ARITH_MODEL, [{ role: 'user', content: 'hi' }])),
      (e: unknown) => e instanceof OpenAiEndpointError && e.status === 401 && !e.message.includes('tml-wrong-key-0123456789'),
    );
    await assert.rejects(collect(streamChatCompletion(ep, ARITH_MODEL, [{ role: 'user', content: 'hi' }], { temperature: 9 })), /temperature/);
  });

  it('a server that answers without streaming is named as not OpenAI-compatible', async () => {
    const plain = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const port = (plain.address() as { port: number }).port;
      await assert.rejects(collect(streamChatCompletion({ baseUrl: `http://127.0.0.1:${port}/v1` }, ARITH_MODEL, [{ role: 'user', content: 'hi' }])), /did not stream.*may not be an OpenAI-compatible endpoint/);
    } finally {
      await new Promise((r) => plain.close(r));
    }
  });
});
