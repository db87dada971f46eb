// Tool calls through the engine's OpenAI-compatible chat route, with the official `openai` npm client
// over real HTTP on arith-chat (pretrained on chatml's tool format): the model's call comes back as
// tool_calls (finish_reason "tool_calls"), the result goes back as a tool message and the final text
// answers, streamed (OpenAI's tool-call deltas) and not, the same reply at temperature 0. A request's
// tool calls, tool results and `tools` are rendered as the training path renders them (the same
// tokens); what the engine cannot honour is a 400 naming the field.
import * as assert from 'assert';
import * as fs from 'fs';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import * as os from 'os';
import * as path from 'path';
import { ARITH_PHRASES, CALCULATOR_TOOL } from '../../../src/core/data/arithChat';
import { withTools } from '../../../src/core/env/episode';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { ChatmlRenderer } from '../../../src/core/render/chatml';
import { toolCall, toolSystemMessage } from '../../../src/core/render/chatmlTools';
import { parseJsonKeepingNumbers } from '../../../src/core/render/pyJson';
import { getRenderer } from '../../../src/core/render/registry';
import type { Renderer } from '../../../src/core/render/types';
import { createComputeBackend } from '../../../src/engine/model';
import { ARITH_CHAT_MODEL } from '../../../src/engine/model/models';
import { EngineServer, startEngineServer } from '../../../src/engine/server';
import { ChatCompletionRequest, chatPrompt, parseChatBody } from '../../../src/engine/server/openaiRoutes';
import type { ComputeBackend } from '../../../src/engine/contract';
import { type ChatMessage, ToolSpec } from '../../../src/protocol/chatMessage';
import { qwen3Tokenizer } from '../render/fixtures';

const KEY = 'tml-local-openai-tools-test-key';
const ADD: ChatCompletionTool = {
  type: 'function',
  function: { name: 'add', description: 'Add two integers.', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } },
};
const QUESTION = 'What is 123 + 456?';

describe('engine: tool calls on the OpenAI-compatible chat route (openai npm client, arith-chat)', function () {
  this.timeout(180_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  let oai: OpenAI;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-oai-tools-'));
    backend = await createComputeBackend({});
    server = await startEngineServer({ dataDir: path.join(dir, 'data'), backend, apiKey: KEY });
    oai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await backend?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The answer to the call: the sum of its arguments. */
  function run(args: string): string {
    const a = JSON.parse(args) as { a: number; b: number };
    return String(a.a + a.b);
  }

  it('a full tool loop, not streamed: the call as tool_calls, the result back, the final answer', async () => {
    for (const start of [
      { messages: [{ role: 'user', content: QUESTION }] as ChatCompletionMessageParam[], tools: [ADD] },
      // the declaration written in the system message, as arith-chat was pretrained
      { messages: [{ role: 'system', content: 'Tools: add(a, b) - Add two integers.' }, { role: 'user', content: QUESTION }] as ChatCompletionMessageParam[] },
    ]) {
      const first = await oai.chat.completions.create({ model: ARITH_CHAT_MODEL, ...start, temperature: 0 });
      const choice = first.choices[0]!;
      assert.strictEqual(choice.finish_reason, 'tool_calls', JSON.stringify(choice));
      assert.strictEqual(choice.message.content, null);
      const calls = choice.message.tool_calls ?? [];
      assert.strictEqual(calls.length, 1, JSON.stringify(calls));
      const call = calls[0]!;
      assert.strictEqual(call.type, 'function');
      assert.match(call.id, /^call_[0-9a-f]+$/);
      assert.ok(call.type === 'function');
      assert.strictEqual(call.function.name, 'add');
      // the model's own text of the arguments, its number literals kept
      assert.strictEqual(call.function.arguments, '{"a": 123, "b": 456}');

      const second = await oai.chat.completions.create({
        model: ARITH_CHAT_MODEL,
        ...start,
        messages: [...start.messages, choice.message, { role: 'tool', tool_call_id: call.id, content: run(call.function.arguments) }],
        temperature: 0,
      });
      assert.strictEqual(second.choices[0]!.finish_reason, 'stop');
      assert.strictEqual(second.choices[0]!.message.content, '579');
      assert.strictEqual(second.choices[0]!.message.tool_calls, undefined);
    }
  });

  it('a full tool loop, streamed: OpenAI’s tool-call deltas, the same reply as not streamed', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: QUESTION }];
    const req = { model: ARITH_CHAT_MODEL, messages, tools: [ADD], temperature: 0 };
    const whole = await oai.chat.completions.create(req);
    // the raw chunks: the call's id, type and name first with empty arguments, then the arguments in pieces
    const deltas: Array<{ index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }> = [];
    let finish: string | null | undefined;
    for await (const chunk of await oai.chat.completions.create({ ...req, stream: true })) {
      const c = chunk.choices[0];
      deltas.push(...(c?.delta.tool_calls ?? []));
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.strictEqual(finish, 'tool_calls');
    assert.ok(deltas.length >= 3, `the arguments in pieces: ${JSON.stringify(deltas)}`);
    assert.deepStrictEqual({ ...deltas[0], id: undefined }, { index: 0, id: undefined, type: 'function', function: { name: 'add', arguments: '' } });
    assert.match(deltas[0]!.id!, /^call_/);
    assert.ok(deltas.slice(1).every((d) => d.index === 0 && d.id === undefined && d.function?.name === undefined));
    assert.strictEqual(deltas.map((d) => d.function?.arguments ?? '').join(''), whole.choices[0]!.message.tool_calls![0]!.type === 'function' ? (whole.choices[0]!.message.tool_calls![0] as { function: { arguments: string } }).function.arguments : '');

    // the client's own stream helper assembles the same message as the non-streamed reply
    const streamed = await oai.chat.completions.stream(req).finalChatCompletion();
    // (the ids differ: each reply has new ones)
    const strip = (m: (typeof whole.choices)[number]) => ({ finish: m.finish_reason, role: m.message.role, content: m.message.content, calls: m.message.tool_calls?.map((c) => ({ ...c, id: '' })) });
    assert.deepStrictEqual(strip(streamed.choices[0]! as (typeof whole.choices)[number]), strip(whole.choices[0]!));

    const call = streamed.choices[0]!.message.tool_calls![0]!;
    assert.ok(call.type === 'function');
    const next = [...messages, streamed.choices[0]!.message, { role: 'tool' as const, tool_call_id: call.id, content: run(call.function.arguments) }];
    const final = await oai.chat.completions.stream({ ...req, messages: next }).finalChatCompletion();
    assert.strictEqual(final.choices[0]!.finish_reason, 'stop');
    assert.strictEqual(final.choices[0]!.message.content, '579');
  });

  it('renders tool calls, tool results and tools as the training path renders them (the same tokens)', async () => {
    const renderer = new ChatmlRenderer(new ByteTokenizer());
    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":123,"b":456}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '579' },
    ];
    const body = ChatCompletionRequest.parse({ model: ARITH_CHAT_MODEL, tools: [ADD], messages });
    // arith-chat's pretraining episode of the same sum (src/core/data/arithChat.ts), and an environment's
    // episode declaring the calculator tool (core/env/episode.ts withTools), before the final answer
    const call: ChatMessage = { role: 'assistant', content: '', tool_calls: [toolCall(CALCULATOR_TOOL.name, { a: 123, b: 456 })] };
    const pretrained: ChatMessage[] = [toolSystemMessage([CALCULATOR_TOOL]), { role: 'user', content: ARITH_PHRASES.question(123, 456) }, call, { role: 'tool', name: 'add', content: '579' }];
    const episode = withTools(renderer, pretrained.slice(1), [CALCULATOR_TOOL]);
    const expected = renderer.buildGenerationPrompt(pretrained);
    assert.deepStrictEqual(renderer.buildGenerationPrompt(episode), expected);
    assert.deepStrictEqual(chatPrompt(renderer, body).prompt, expected, new ByteTokenizer().decode(chatPrompt(renderer, body).prompt));

    // over HTTP: the chat request samples exactly what the rendered tokens sample as a text completion
    const chat = await oai.chat.completions.create({ model: ARITH_CHAT_MODEL, messages, tools: [ADD], temperature: 0 });
    const text = await oai.completions.create({ model: ARITH_CHAT_MODEL, prompt: expected, temperature: 0, stop: ['<|im_end|>'] });
    assert.strictEqual(chat.usage!.prompt_tokens, expected.length);
    assert.strictEqual(chat.choices[0]!.message.content, text.choices[0]!.text);
    assert.strictEqual(chat.choices[0]!.message.content, '579');
  });

  it('keeps a request\'s number forms as training does: 5.0, 21.0 and 2.0 in a declaration, 21.0 in a call', async () => {
    const declaration = '{"name": "add", "description": "Add two integers.", "parameters": {"type": "object", "properties": {"a": {"type": "integer", "minimum": 5.0, "default": 21.0}, "b": {"type": "integer"}}, "required": ["a", "b"], "minProperties": 2.0}}';
    const args = '{"a": 21.0, "b": 456}';
    // the raw body: the openai client would re-serialise 21.0 as 21
    const text = `{"model": "${ARITH_CHAT_MODEL}", "temperature": 0, "tools": [{"type": "function", "function": ${declaration}}], "messages": [{"role": "user", "content": "${QUESTION}"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": ${JSON.stringify(args)}}}]}, {"role": "tool", "tool_call_id": "call_1", "content": "477"}]}`;
    // the training path: the declaration read from the same JSON text, as an environment's tools are
    const training = (renderer: Renderer): number[] => {
      const call = { type: 'function' as const, id: 'call_1', function: { name: 'add', arguments: args } };
      const messages: ChatMessage[] = [{ role: 'user', content: QUESTION }, { role: 'assistant', content: '', tool_calls: [call] }, { role: 'tool', content: '477', tool_call_id: 'call_1', name: 'add' }];
      return renderer.buildGenerationPrompt(withTools(renderer, messages, [ToolSpec.parse(parseJsonKeepingNumbers(declaration))]));
    };
    // the route's reading of the body: qwen3 writes the schema itself, chatml (arith-chat's) the call
    const qwen3 = getRenderer('qwen3', qwen3Tokenizer());
    const chatml = new ChatmlRenderer(new ByteTokenizer());
    const body = () => parseChatBody({ body: Buffer.from(text) });
    const qwen3Prompt = chatPrompt(qwen3, body()).prompt;
    assert.deepStrictEqual(qwen3Prompt, training(qwen3));
    const qwen3Text = qwen3.tokenizer.decode(qwen3Prompt);
    assert.ok(qwen3Text.includes('"a": {"type": "integer", "minimum": 5.0, "default": 21.0}'), qwen3Text);
    // a number directly in `parameters` too (a copy of that object would lose its form)
    assert.ok(qwen3Text.includes('"required": ["a", "b"], "minProperties": 2.0}'), qwen3Text);
    assert.ok(qwen3Text.includes('"arguments": {"a": 21.0, "b": 456}'), qwen3Text);
    const expected = training(chatml);
    assert.deepStrictEqual(chatPrompt(chatml, body()).prompt, expected);
    assert.ok(new ByteTokenizer().decode(expected).includes('{"name": "add", "arguments": {"a": 21.0, "b": 456}}'));

    // over HTTP on arith-chat: the same prompt, so the same reply as its tokens sampled as text
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: text });
    const chat = (await res.json()) as OpenAI.ChatCompletion;
    assert.strictEqual(res.status, 200, JSON.stringify(chat));
    const plain = await oai.completions.create({ model: ARITH_CHAT_MODEL, prompt: expected, temperature: 0, stop: ['<|im_end|>'] });
    assert.strictEqual(chat.usage!.prompt_tokens, expected.length);
    assert.strictEqual(chat.choices[0]!.message.content, plain.choices[0]!.text);
  });

  it('tool_choice "none": no tools declared and no tool_calls; "auto" is the default', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: QUESTION }];
    const auto = await oai.chat.completions.create({ model: ARITH_CHAT_MODEL, messages, tools: [ADD], tool_choice: 'auto', temperature: 0 });
    assert.strictEqual(auto.choices[0]!.finish_reason, 'tool_calls');
    const none = await oai.chat.completions.create({ model: ARITH_CHAT_MODEL, messages, tools: [ADD], tool_choice: 'none', temperature: 0 });
    const plain = await oai.chat.completions.create({ model: ARITH_CHAT_MODEL, messages, temperature: 0 });
    assert.strictEqual(none.choices[0]!.finish_reason, 'stop');
    assert.strictEqual(none.choices[0]!.message.tool_calls, undefined);
    assert.strictEqual(none.usage!.prompt_tokens, plain.usage!.prompt_tokens);
    assert.strictEqual(none.choices[0]!.message.content, plain.choices[0]!.message.content);
  });

  it('what the engine cannot honour or render is a 400 naming the field', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: QUESTION }];
    const refused = async (body: Record<string, unknown>, param: string, message: RegExp) => {
      await assert.rejects(
        oai.chat.completions.create({ model: ARITH_CHAT_MODEL, messages, ...body } as unknown as Parameters<typeof oai.chat.completions.create>[0]),
        (e: unknown) => {
          assert.ok(e instanceof OpenAI.BadRequestError, String(e));
          assert.strictEqual((e.error as { param?: string }).param, param);
          assert.match(e.message, message);
          return true;
        },
      );
    };
    await refused({ tools: [ADD], tool_choice: 'required' }, 'tool_choice', /"required" is not supported/);
    await refused({ tools: [ADD], tool_choice: { type: 'function', function: { name: 'add' } } }, 'tool_choice', /named function \("add"\)/);
    await refused({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 'response_format.type', /"json_schema" is not supported/);
    await refused({ tools: [{ ...ADD, function: { ...ADD.function, strict: true } }] }, 'tools.0.function.strict', /strict/);
    await refused({ messages: [{ role: 'user', content: null }] }, 'messages.0.content', /needs content/);
    const call = { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a": 1, "b": 2}' } };
    await refused({ messages: [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', content: '3' }] }, 'messages.2.tool_call_id', /needs the tool_call_id/);
    await refused({ messages: [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_2', content: '3' }] }, 'messages.2.tool_call_id', /no earlier assistant message has a tool call with id "call_2"/);
    await refused({ messages: [...messages, { role: 'assistant', content: null, tool_calls: [{ ...call, function: { name: 'add', arguments: '[1, 2]' } }] }] }, 'messages.1.tool_calls.0.function.arguments', /must be a JSON object/);

    // the text route names its own prompt field in a context error
    await assert.rejects(
      oai.completions.create({ model: ARITH_CHAT_MODEL, prompt: 'x'.repeat(300) }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as { param?: string }).param === 'prompt' && (e as { code?: string }).code === 'context_length_exceeded',
    );
  });
});
