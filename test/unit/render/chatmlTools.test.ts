// The chatml tool format (src/core/render/chatmlTools.ts) through the chatml renderer: the one-line
// declaration, the <tool_call> block, the tool turn, and parse_response giving the shared ChatMessage
// shape back (tool_calls, or unparsed_tool_calls with the reason).
import * as assert from 'assert';
import { ChatMessage } from '../../../src/protocol/chatMessage';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { dumpsJson, parseToolCalls, renderAssistantText, toolCall, toolDeclarationLine } from '../../../src/core/render/chatmlTools';
import { getRenderer } from '../../../src/core/render/registry';
import type { ToolSpec } from '../../../src/core/render/types';
import { CALCULATOR_TOOL } from '../../../src/core/data/arithChat';
import { encodeChat } from '../../../src/engine/model/models';

const tok = new ByteTokenizer();
const r = getRenderer('chatml', tok);
const weather: ToolSpec = { name: 'weather', description: 'Today\'s weather\n in a city.', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

describe('chatml tool format', () => {
  it('declares tools in one line of the system message, after the system prompt', () => {
    assert.strictEqual(r.supportsTools, true);
    assert.deepStrictEqual(r.createConversationPrefixWithTools([CALCULATOR_TOOL]), [{ role: 'system', content: 'Tools: add(a, b) - Add two integers.' }]);
    assert.deepStrictEqual(r.createConversationPrefixWithTools([CALCULATOR_TOOL, weather], 'Be brief.'), [
      { role: 'system', content: "Be brief.\nTools: add(a, b) - Add two integers.; weather(city) - Today's weather in a city." },
    ]);
    assert.strictEqual(toolDeclarationLine([{ name: 'now', description: '', parameters: {} }]), 'Tools: now()');
  });

  it('renders a call as <tool_call>{json}</tool_call> and the result as a tool turn', () => {
    const messages: ChatMessage[] = [
      ...r.createConversationPrefixWithTools([CALCULATOR_TOOL]),
      { role: 'user', content: 'What is 123 + 456?' },
      { role: 'assistant', content: '', tool_calls: [toolCall('add', { a: 123, b: 456 })] },
      { role: 'tool', name: 'add', content: '579' },
      { role: 'assistant', content: '579' },
    ];
    assert.strictEqual(
      tok.decode(r.buildSupervisedExample(messages).tokens),
      '<|im_start|>system\nTools: add(a, b) - Add two integers.<|im_end|>\n<|im_start|>user\nWhat is 123 + 456?<|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>{"name": "add", "arguments": {"a": 123, "b": 456}}</tool_call><|im_end|>\n' +
        '<|im_start|>tool\n579<|im_end|>\n<|im_start|>assistant\n579<|im_end|>',
    );
  });

  it('parse_response returns the calls in the shared ChatMessage shape, and renders them back to the same tokens', () => {
    const sampled = encodeChat('<tool_call>{"name": "add", "arguments": {"a": 1234, "b": 5678}}</tool_call><|im_end|>');
    const parsed = r.parseResponse(sampled);
    assert.strictEqual(parsed.termination, 'stop_sequence');
    assert.deepStrictEqual(parsed.message, { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'add', arguments: '{"a": 1234, "b": 5678}' } }] });
    ChatMessage.parse(parsed.message);
    const rendered = r.buildSupervisedExample([{ role: 'user', content: 'x' }, parsed.message]).tokens;
    assert.deepStrictEqual(rendered.slice(-sampled.length), sampled);
  });

  it('keeps text before the calls, and several calls, one per line', () => {
    const m: ChatMessage = { role: 'assistant', content: 'Let me add.', tool_calls: [toolCall('add', { a: 1, b: 2 }), toolCall('weather', { city: 'Zürich' })] };
    const text = renderAssistantText(m);
    assert.strictEqual(text, 'Let me add.\n<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>\n<tool_call>{"name": "weather", "arguments": {"city": "Zürich"}}</tool_call>');
    const back = r.parseResponse([...tok.encode(text), 258]).message;
    assert.deepStrictEqual(back, { role: 'assistant', content: 'Let me add.', tool_calls: m.tool_calls });
  });

  it('keeps a call that does not parse as an unparsed call, with the reason, and the plain text as content', () => {
    const bad = r.parseResponse(encodeChat('<tool_call>{"name": "add", "arguments": {"a": 12</tool_call><|im_end|>')).message;
    assert.strictEqual(bad.content, '');
    assert.strictEqual(bad.tool_calls, undefined);
    assert.strictEqual(bad.unparsed_tool_calls?.length, 1);
    assert.match(bad.unparsed_tool_calls![0]!.error, /not JSON/);
    assert.strictEqual(bad.unparsed_tool_calls![0]!.raw_text, '<tool_call>{"name": "add", "arguments": {"a": 12</tool_call>');
    ChatMessage.parse(bad);
    assert.match(parseToolCalls('<tool_call>{"arguments": {}}</tool_call>').unparsed_tool_calls[0]!.error, /expected \{"name"/);
    assert.match(parseToolCalls('<tool_call>{"name": "add", "arguments": [1]}</tool_call>').unparsed_tool_calls[0]!.error, /not a JSON object/);
    assert.match(parseToolCalls('579 <tool_call>{"name": "a').unparsed_tool_calls[0]!.error, /without <\/tool_call>/);
    assert.deepStrictEqual(r.parseResponse(encodeChat('579<|im_end|>')).message, { role: 'assistant', content: '579' });
  });

  it('writes JSON as Python json.dumps does', () => {
    assert.strictEqual(dumpsJson({ a: [1, 'x', null, { b: true }], c: 1.5 }), '{"a": [1, "x", null, {"b": true}], "c": 1.5}');
    assert.throws(() => renderAssistantText({ content: '', tool_calls: [{ function: { name: 'add', arguments: '{"a": ' } }] }), /arguments are not JSON/);
  });
});
