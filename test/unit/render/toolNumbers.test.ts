// Numbers in tool JSON keep the form Python's json gives them, as the cookbook's renderers write them:
// 100.0 stays 100.0 (JSON.parse would make it 100), 1e5 becomes 100000.0, an integer past 2^53 keeps
// its value. Checked through the renderers (calls rendered and parsed back) and against real python3.
import * as assert from 'assert';
import { execFileSync } from 'node:child_process';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { pyJsonDumps } from '../../../src/core/render/parsing';
import { parseJsonKeepingNumbers } from '../../../src/core/render/pyJson';
import { getRenderer } from '../../../src/core/render/registry';
import type { Message, ToolCall } from '../../../src/core/render/types';
import { encodeChat } from '../../../src/engine/model/models';
import { qwen3Tokenizer, standinTokenizer } from './fixtures';

const ARGS = '{"amount": 100.0, "account": 98765432109876543210, "fee": 1e5, "rate": 1e-05}';
/** what Python's json.dumps(json.loads(ARGS)) writes (checked against python3 below) */
const PY_ARGS = '{"amount": 100.0, "account": 98765432109876543210, "fee": 100000.0, "rate": 1e-05}';
const transfer: ToolCall = { type: 'function', function: { name: 'transfer', arguments: ARGS } };
const conversation: Message[] = [
  { role: 'user', content: 'Send 100.' },
  { role: 'assistant', content: '', tool_calls: [transfer] },
];

describe('render: numbers in tool JSON (Python json forms)', () => {
  it('qwen3 renders a call\'s arguments as the cookbook re-serialises them, and parses 100.0 back as 100.0', () => {
    const r = getRenderer('qwen3_instruct', qwen3Tokenizer());
    const text = r.tokenizer.decode(r.buildSupervisedExample(conversation).tokens);
    assert.ok(text.includes(`"arguments": ${PY_ARGS}`), text);
    const reply = r.tokenizer.encodeWithSpecialTokens(`<tool_call>\n{"name": "transfer", "arguments": ${ARGS}}\n</tool_call><|im_end|>`);
    const parsed = r.parseResponse(reply).message.tool_calls?.[0];
    assert.strictEqual(parsed?.function.arguments, PY_ARGS);
  });

  it('qwen3_5 writes XML parameters with Python\'s str() of each value and reads 100.0 back as 100.0', () => {
    const r = getRenderer('qwen3_5_disable_thinking', standinTokenizer('qwen3_5'));
    const text = r.tokenizer.decode(r.buildSupervisedExample(conversation).tokens);
    for (const v of ['100.0', '98765432109876543210', '100000.0', '1e-05']) assert.ok(text.includes(`\n${v}\n</parameter>`), `${v} in ${text}`);
    const xml = '<tool_call>\n<function=transfer>\n<parameter=amount>\n100.0\n</parameter>\n<parameter=account>\n98765432109876543210\n</parameter>\n</function>\n</tool_call><|im_end|>';
    const parsed = r.parseResponse(r.tokenizer.encodeWithSpecialTokens(xml)).message.tool_calls?.[0];
    assert.strictEqual(parsed?.function.arguments, '{"amount": 100.0, "account": 98765432109876543210}');
  });

  it('the engine\'s chatml keeps the numbers of a parsed call', () => {
    const r = getRenderer('chatml', new ByteTokenizer());
    const reply = encodeChat('<tool_call>{"name": "add", "arguments": {"a": 1.0, "b": 98765432109876543210}}</tool_call><|im_end|>');
    const parsed = r.parseResponse(reply).message.tool_calls?.[0];
    assert.strictEqual(parsed?.function.arguments, '{"a": 1.0, "b": 98765432109876543210}');
  });

  it('reads and writes numbers as python3\'s json.loads then json.dumps do', () => {
    const texts = [
      ARGS,
      '[0.0, -0.0, -0, 1.0, 2.50, 1E2, 1e16, 1e15, 123456789012345678.0, 1e-4, 1e-5, 0.1, 1.5e300, 5e-324, 9007199254740993, -98765432109876543210]',
      '{"nested": {"list": [{"x": 21.0}, [5.0, [7.0]]]}, "flag": true, "none": null, "s": "caf\\u00e9 1.0"}',
    ];
    // a spread of floats: the shortest round-trip digits and Python's switch to exponents
    for (let i = 0; i < 200; i++) texts.push(`[${(Math.sin(i + 1) * 10 ** ((i % 40) - 20)).toString()}, ${i * 1e14}.0]`);
    const py = execFileSync('python3', ['-c', 'import json,sys\nfor t in json.load(sys.stdin): print(json.dumps(json.loads(t)))'], { input: JSON.stringify(texts), encoding: 'utf8' });
    const want = py.trimEnd().split('\n');
    assert.strictEqual(want.length, texts.length);
    texts.forEach((t, i) => assert.strictEqual(pyJsonDumps(parseJsonKeepingNumbers(t)), want[i], t));
    assert.strictEqual(want[0], PY_ARGS);
  });

  it('refuses what is not JSON with a SyntaxError, deep nesting included (never a stack overflow)', () => {
    for (const bad of ['{"a": 1.}', '[1, 2', '{"a" 1}', '01', '"\u0001"', '[1] x', '', '{"a": NaN}']) assert.throws(() => parseJsonKeepingNumbers(bad), SyntaxError, bad);
    assert.throws(() => parseJsonKeepingNumbers('['.repeat(100_000) + ']'.repeat(100_000)), /nested deeper than 1000 levels/);
    const proto = parseJsonKeepingNumbers('{"__proto__": {"x": 1.0}}') as Record<string, unknown>;
    assert.strictEqual(Object.getPrototypeOf(proto), Object.prototype);
    assert.strictEqual(pyJsonDumps(proto), '{"__proto__": {"x": 1.0}}');
  });
});
