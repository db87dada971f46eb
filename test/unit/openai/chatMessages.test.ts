// A renderer's parsed reply as OpenAI's message and stream deltas (src/core/openai/chatMessages.ts),
// with real renderers and tokenizers: a reasoning renderer's thinking goes to reasoning_content (the
// engine serves only chatml, so Qwen3 with its own tokenizer stands for the service's models), calls go
// to tool_calls, a call that does not parse comes back as the text the model wrote; the deltas join to
// the message. Which models declare tool calling agrees with each renderer's own supportsTools.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { replyDeltas, replyMessage, tokenPieces, type ReplyMessage } from '../../../src/core/openai/chatMessages';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { ChatmlRenderer } from '../../../src/core/render/chatml';
import { loadHfTokenizer } from '../../../src/core/render/hfTokenizer';
import { MODELS, modelHasToolCalling } from '../../../src/core/render/modelInfo';
import { getRenderer } from '../../../src/core/render/registry';
import type { Renderer } from '../../../src/core/render/types';

const root = path.resolve(__dirname, '../../../..');
const FIXTURES = path.join(root, 'test/fixtures/renderers');

function fixtureRenderer(name: string): Renderer {
  const fx = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as { tokenizer: { source: string } };
  return getRenderer(name, loadHfTokenizer(`${name}-openai-test:${fx.tokenizer.source}`, path.join(root, fx.tokenizer.source)));
}

/** The reply as the route makes it, and its deltas joined the way OpenAI clients join them. */
function reply(renderer: Renderer, text: string, callsAsText = false): { message: ReplyMessage; joined: Record<string, unknown> } {
  const tokens = renderer.tokenizer.encodeWithSpecialTokens(text);
  const stop = renderer.stopSequences();
  const replyTokens = stop.kind === 'tokens' && stop.tokens.includes(tokens[tokens.length - 1]!) ? tokens.slice(0, -1) : tokens;
  let n = 0;
  const message = replyMessage(renderer.parseResponse(tokens), { rawText: renderer.tokenizer.decode(replyTokens), callsAsText, newCallId: () => `call_${n++}` });
  const deltas = replyDeltas(message, tokenPieces(replyTokens, (ids) => renderer.tokenizer.decode(ids)));
  const joined: Record<string, unknown> = { content: null };
  const calls: Array<{ id: string; type: string; function: { name: string; arguments: string } }> = [];
  for (const d of deltas) {
    if (typeof d.content === 'string' && d.content) joined.content = ((joined.content as string | null) ?? '') + d.content;
    if (typeof d.reasoning_content === 'string') joined.reasoning_content = ((joined.reasoning_content as string | undefined) ?? '') + d.reasoning_content;
    for (const c of (d.tool_calls as Array<{ index: number; id?: string; type?: string; function: { name?: string; arguments: string } }> | undefined) ?? []) {
      const at = (calls[c.index] ??= { id: '', type: '', function: { name: '', arguments: '' } });
      if (c.id) at.id = c.id;
      if (c.type) at.type = c.type;
      if (c.function.name) at.function.name = c.function.name;
      at.function.arguments += c.function.arguments;
    }
  }
  if (calls.length) joined.tool_calls = calls;
  return { message, joined };
}

/** The message without finish_reason, as the non-streamed route returns it. */
const body = (m: ReplyMessage) => {
  const { finish_reason: _, ...rest } = m;
  return { ...rest, content: rest.content === '' ? null : rest.content };
};

describe('OpenAI replies from parsed renderer output', () => {
  it('a reasoning renderer: the thinking goes to reasoning_content, not content, also beside a call', () => {
    const qwen3 = fixtureRenderer('qwen3');
    const plain = reply(qwen3, '<think>\nI add 123 and 456.\n</think>\n\n579<|im_end|>');
    assert.deepStrictEqual(plain.message, { content: '579', reasoning_content: 'I add 123 and 456.', finish_reason: 'stop' });
    assert.deepStrictEqual(plain.joined, body(plain.message));

    const call = reply(qwen3, '<think>\nA tool adds.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 123, "b": 456}}\n</tool_call><|im_end|>');
    assert.strictEqual(call.message.finish_reason, 'tool_calls');
    assert.strictEqual(call.message.reasoning_content, 'A tool adds.');
    assert.ok(!String(call.message.content ?? '').includes('A tool adds'), JSON.stringify(call.message));
    assert.deepStrictEqual(call.message.tool_calls, [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } }]);
    assert.deepStrictEqual(call.joined, body(call.message));
  });

  it('chatml: text before a call stays content; several calls keep their order; the deltas join to the message', () => {
    const chatml = new ChatmlRenderer(new ByteTokenizer());
    const r = reply(chatml, 'Let me add.\n<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>\n<tool_call>{"name": "add", "arguments": {"a": 3, "b": 4.0}}</tool_call><|im_end|>');
    assert.strictEqual(r.message.finish_reason, 'tool_calls');
    assert.strictEqual(r.message.content, 'Let me add.');
    assert.deepStrictEqual(
      r.message.tool_calls!.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['call_0', 'add', { a: 1, b: 2 }],
        ['call_1', 'add', { a: 3, b: 4 }],
      ],
    );
    assert.deepStrictEqual(r.joined, body(r.message));
  });

  it('a call that does not parse comes back as the text the model wrote, finish_reason "stop"; so does any call under tool_choice "none"', () => {
    const chatml = new ChatmlRenderer(new ByteTokenizer());
    const bad = '<tool_call>{"name": "add", "arguments": {"a": 1</tool_call>';
    const r = reply(chatml, `${bad}<|im_end|>`);
    assert.deepStrictEqual(r.message, { content: bad, finish_reason: 'stop' });
    assert.deepStrictEqual(r.joined, { content: bad });
    const good = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>';
    assert.deepStrictEqual(reply(chatml, `${good}<|im_end|>`, true).message, { content: good, finish_reason: 'stop' });
  });

  it('a model declares tool calling exactly when its default renderer has it', () => {
    const fixtures = new Set(fs.readdirSync(FIXTURES).map((f) => f.replace(/\.json$/, '')));
    let checked = 0;
    const supports = new Map<string, boolean>();
    for (const m of MODELS) {
      const name = m.renderers[0]!;
      if (name !== 'chatml' && !fixtures.has(name)) continue;
      if (!supports.has(name)) supports.set(name, (name === 'chatml' ? new ChatmlRenderer(new ByteTokenizer()) : fixtureRenderer(name)).supportsTools);
      assert.strictEqual(modelHasToolCalling(m.name), supports.get(name), `${m.name} (${name})`);
      checked++;
    }
    assert.ok(checked >= 30, `checked ${checked} models`);
    assert.strictEqual(modelHasToolCalling('tinker-studio/arith-chat'), true);
    assert.strictEqual(modelHasToolCalling('meta-llama/Llama-3.1-8B'), false);
    assert.strictEqual(modelHasToolCalling('nobody/unknown-model'), false);
  });
});
