// The formatting rules of a chat message with reasoning and tool calls (src/protocol/messageFormat.ts),
// which the webviews' message view and the host's sample documents follow: pretty JSON arguments,
// a malformed call flagged (never thrown), the reasoning's folded summary, and the plain-text form.
import * as assert from 'assert';
import { formatArguments, formatToolCall, hasStructure, messageDisplay, messageText, thinkingSummary, toolResultTitle } from '../../../src/protocol/messageFormat';
import { continueWith, PlaygroundForm, DEFAULT_PARAMS, SampleView, type ChatMessage } from '../../../src/protocol/playgroundProtocol';

describe('message formatting (thinking, tool calls)', () => {
  it('pretty-prints a call’s JSON arguments, with its name and id', () => {
    assert.deepStrictEqual(formatToolCall({ type: 'function', id: 'functions.add:0', function: { name: 'add', arguments: '{"a": 123, "b": [4, 5]}' } }), {
      name: 'add',
      id: 'functions.add:0',
      arguments: '{\n  "a": 123,\n  "b": [\n    4,\n    5\n  ]\n}',
    });
    assert.deepStrictEqual(formatArguments(''), { text: '{}' }, 'no arguments: an empty object');
  });

  it('flags arguments that are not JSON, or not an object, and keeps them as written', () => {
    const bad = formatArguments('{"a": 1,');
    assert.strictEqual(bad.text, '{"a": 1,');
    assert.match(bad.problem ?? '', /^the arguments are not JSON \(/);
    assert.deepStrictEqual(formatArguments('[1, 2]'), { text: '[\n  1,\n  2\n]', problem: 'the arguments are not a JSON object' });
    assert.deepStrictEqual(formatArguments('7'), { text: '7', problem: 'the arguments are not a JSON object' });
  });

  it('summarises folded reasoning by its length', () => {
    assert.strictEqual(thinkingSummary('Add the units first.\nThen the tens.'), 'Thinking · 7 words');
    assert.strictEqual(thinkingSummary('ok'), 'Thinking · 1 word');
    assert.strictEqual(thinkingSummary('  '), 'Thinking · 0 words');
  });

  it('says which call a tool result answers', () => {
    assert.strictEqual(toolResultTitle({ name: 'add', tool_call_id: 'call_1' }), 'Tool result of add · id call_1');
    assert.strictEqual(toolResultTitle({}), 'Tool result');
  });

  it('orders a message’s parts: reasoning, text, calls, malformed calls; a plain message has no structure', () => {
    const m: ChatMessage = {
      role: 'assistant',
      content: 'Let me add them.',
      thinking: 'I should call the tool.',
      tool_calls: [{ type: 'function', function: { name: 'add', arguments: '{"a": 1, "b": 2}' } }],
    };
    const d = messageDisplay({ ...m, unparsed_tool_calls: [{ raw_text: '<tool_call>{oops</tool_call>', error: 'not JSON: Unexpected token' }] });
    assert.strictEqual(d.thinking, 'I should call the tool.');
    assert.strictEqual(d.content, 'Let me add them.');
    assert.deepStrictEqual(d.toolCalls.map((c) => c.name), ['add']);
    assert.strictEqual(d.unparsed.length, 1);
    assert.strictEqual(d.toolResult, undefined);
    assert.ok(hasStructure(m));
    assert.ok(!hasStructure({ role: 'assistant', content: 'plain' }));
    assert.ok(!hasStructure({ role: 'assistant', content: 'plain', thinking: '' }), 'an empty reasoning is no reasoning');
    assert.ok(hasStructure({ role: 'tool', content: '3' }));
  });

  it('writes a message as plain text for the sample documents, sections lined up for a diff', () => {
    const text = messageText({
      role: 'assistant',
      content: '',
      thinking: 'add them',
      tool_calls: [{ function: { name: 'add', arguments: '{"a": 1, "b": 2}' } }, { id: 'c2', function: { name: 'mul', arguments: 'not json' } }],
      unparsed_tool_calls: [{ raw_text: '<tool_call>{', error: '<tool_call> without </tool_call>' }],
    });
    assert.strictEqual(
      text,
      [
        '### thinking',
        'add them',
        '### answer',
        '',
        '### tool call 1: add',
        '  {',
        '    "a": 1,',
        '    "b": 2',
        '  }',
        '### tool call 2: mul  · id c2  ⚠ the arguments are not JSON (' + (formatArguments('not json').problem ?? '').replace(/^the arguments are not JSON \(/, ''),
        '  not json',
        '### ⚠ malformed tool call 1: <tool_call> without </tool_call>',
        '  <tool_call>{',
      ].join('\n'),
    );
    assert.strictEqual(messageText({ role: 'tool', content: '3', name: 'add' }, 2), '## tool result of add\n3');
  });
});

describe('playground: continuing from a sampled reply', () => {
  const user: ChatMessage = { role: 'user', content: 'What is 123 + 456?' };

  it('appends the reply with its reasoning and calls, then one tool result per call with its id and name', () => {
    const next = continueWith([user], {
      content: '',
      thinking: 'use the tool',
      tool_calls: [
        { type: 'function', id: 'functions.add:0', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } },
        { type: 'function', function: { name: 'mul', arguments: '{"a": 2, "b": 3}' } },
      ],
      unparsed_tool_calls: [{ raw_text: '<tool_call>x</tool_call>', error: 'not JSON' }],
    });
    assert.deepStrictEqual(next, [
      user,
      {
        role: 'assistant',
        content: '',
        thinking: 'use the tool',
        tool_calls: [
          { type: 'function', id: 'functions.add:0', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } },
          { type: 'function', function: { name: 'mul', arguments: '{"a": 2, "b": 3}' } },
        ],
      },
      { role: 'tool', content: '', name: 'add', tool_call_id: 'functions.add:0' },
      { role: 'tool', content: '', name: 'mul' },
    ]);
    // the host accepts the conversation the webview sends next (zod at the edge)
    const form = PlaygroundForm.parse({ messages: next.map((m) => (m.role === 'tool' ? { ...m, content: '579' } : m)), params: DEFAULT_PARAMS });
    assert.strictEqual(form.messages.length, 4);
  });

  it('a reply without calls is followed by a user turn to write', () => {
    assert.deepStrictEqual(continueWith([user], { content: '579' }), [user, { role: 'assistant', content: '579' }, { role: 'user', content: '' }]);
  });

  it('older forms and samples (no reasoning, calls or parsed reply) still parse', () => {
    assert.ok(PlaygroundForm.safeParse({ messages: [{ role: 'system', content: 's' }, user], params: DEFAULT_PARAMS }).success);
    assert.ok(SampleView.safeParse({ side: 'A', index: 0, text: '5', stopReason: 'stop', tokens: 2, ms: 10 }).success);
    const bad = PlaygroundForm.safeParse({ messages: [{ role: 'assistant', content: '', tool_calls: [{ function: { name: 'add', arguments: { a: 1 } } }] }], params: DEFAULT_PARAMS });
    assert.ok(!bad.success, 'a call’s arguments are a JSON text, not an object');
  });
});
