// Sample records keep the parsed reply of each completion (reasoning, tool calls, malformed calls):
// the GRPO writer writes them from the renderer's parse, readers parse them back with zod, records
// written before these fields still load, the breakdown's list carries flags only, and the sample
// documents show the parsed reply under its own heading.
import * as assert from 'assert';
import { sampleRecords } from '../../../src/core/rollouts/records';
import type { RolloutGroup, ScoredRollout } from '../../../src/core/rollouts/rollout';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { parseSamples } from '../../../src/core/runs/sampleRecord';
import { sampleText } from '../../../src/core/runs/sampleText';
import { recordMessage, summarizeSample, SampleSummary } from '../../../src/protocol/sampleSchema';

describe('sample records: the parsed reply', () => {
  const tok = new ByteTokenizer();
  const chatml = getRenderer('chatml', tok);
  const completion = 'Adding.\n<tool_call>{"name": "add", "arguments": {"a": 123, "b": 456}}</tool_call>\n<tool_call>{"name": broken}</tool_call><|im_end|>';
  const tokens = tok.encodeWithSpecialTokens(completion);

  function group(): RolloutGroup<ScoredRollout> {
    const parsed = chatml.parseResponse(tokens);
    return {
      problem: { id: 'p:1', messages: [{ role: 'user', content: 'What is 123 + 456?' }], groundTruth: '579' },
      promptTokens: chatml.buildGenerationPrompt([{ role: 'user', content: 'What is 123 + 456?' }]),
      rollouts: [
        { tokens, logprobs: tokens.map(() => -0.5), stopReason: 'stop', response: parsed, reward: 0, metrics: {} },
        // a reasoning renderer's parse (the record keeps what the renderer gave)
        { tokens: tok.encode('579'), logprobs: [-1, -1, -1], stopReason: 'stop', response: { message: { role: 'assistant', content: '579', thinking: 'units: 9, tens: 7, hundreds: 5' }, termination: 'eos' }, reward: 1, metrics: {} },
        { tokens: tok.encode('579'), logprobs: [-1, -1, -1], stopReason: 'stop', response: { message: { role: 'assistant', content: '579' }, termination: 'eos' }, reward: 1, metrics: {} },
      ],
    };
  }

  it('writes the renderer’s parse (calls, malformed calls, reasoning) and reads it back through the schema', () => {
    const written = sampleRecords(chatml, [group()], [[-1, 0.5, 0.5]]);
    const read = parseSamples(written.map((r) => JSON.stringify(r)).join('\n') + '\n', 'train_samples.jsonl');
    assert.deepStrictEqual(read.problems, []);
    assert.deepStrictEqual(read.records, written);
    const [calls, thinking, plain] = read.records;
    assert.strictEqual(calls!.content, 'Adding.');
    assert.deepStrictEqual(calls!.tool_calls, [{ type: 'function', function: { name: 'add', arguments: '{"a": 123, "b": 456}' } }]);
    assert.strictEqual(calls!.unparsed_tool_calls?.length, 1);
    assert.match(calls!.unparsed_tool_calls![0]!.error, /^not JSON/);
    assert.strictEqual(calls!.thinking, undefined);
    assert.strictEqual(thinking!.thinking, 'units: 9, tens: 7, hundreds: 5');
    assert.ok(!('thinking' in plain!) && !('tool_calls' in plain!) && !('unparsed_tool_calls' in plain!), 'a plain reply adds no fields');
    assert.deepStrictEqual(recordMessage(thinking!), { role: 'assistant', content: '579', thinking: 'units: 9, tens: 7, hundreds: 5' });
  });

  it('records written before these fields load; malformed fields are named by line', () => {
    const old = { group_idx: 0, traj_idx: 0, problem_id: 'p', prompt: 'q', completion: '5', content: '5', ground_truth: '5', completion_tokens: [53], logprobs: [-1], reward: 1, advantage: 0, stop_reason: 'stop', termination: 'eos' };
    const bad = { ...old, traj_idx: 1, tool_calls: [{ function: { name: 'add', arguments: { a: 1 } } }] };
    const read = parseSamples(`${JSON.stringify(old)}\n${JSON.stringify(bad)}\n`, 'train_samples.jsonl');
    assert.strictEqual(read.records.length, 1);
    assert.deepStrictEqual(recordMessage(read.records[0]!), { role: 'assistant', content: '5' });
    assert.strictEqual(read.problems.length, 1);
    assert.strictEqual(read.problems[0]!.line, 2);
    assert.match(read.problems[0]!.message, /tool_calls/);
  });

  it('the breakdown’s list carries flags, not the reasoning or the calls', () => {
    const [calls, thinking] = sampleRecords(chatml, [group()], [[0, 0, 0]]);
    const s = summarizeSample(calls!);
    assert.strictEqual(s.tool_call_count, 1);
    assert.strictEqual(s.malformed_call_count, 1);
    assert.strictEqual(s.has_thinking, undefined);
    assert.ok(!('tool_calls' in s));
    assert.ok(SampleSummary.safeParse(s).success);
    assert.strictEqual(summarizeSample(thinking!).has_thinking, true);
  });

  it('a sample’s document shows the parsed reply after the completion; a plain one has none', () => {
    const [calls, , plain] = sampleRecords(chatml, [group()], [[0, 0, 0]]);
    const at = { runDir: '/runs/a', iteration: 1, split: 'train' as const, groupIdx: 0, trajIdx: 0 };
    const text = sampleText(at, calls!);
    const tail = text.slice(text.indexOf('## parsed reply'));
    assert.ok(tail.startsWith('## parsed reply\nAdding.\n### tool call 1: add\n  {\n    "a": 123,\n    "b": 456\n  }\n### ⚠ malformed tool call 1: not JSON'), tail);
    assert.ok(!sampleText(at, plain!).includes('## parsed reply'));
  });
});
