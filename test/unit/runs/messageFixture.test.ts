// The sample records the message UI test shows (test/fixtures/samples/qwen3-tool-call.jsonl, written by
// scripts/make-message-fixture.mjs) are what Tinker Studio's qwen3 renderer parses from their token
// ids with the real Qwen3 tokenizer (offline): reasoning, a tool call, a malformed call.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { loadHfTokenizer } from '../../../src/core/render/hfTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { parseSamples } from '../../../src/core/runs/sampleRecord';
import { parsedMessageFields } from '../../../src/protocol/sampleSchema';
import { QWEN3_DIR } from '../render/fixtures';

const FIXTURE = path.resolve(__dirname, '../../../../test/fixtures/samples/qwen3-tool-call.jsonl');

describe('the qwen3 tool-call sample fixture', () => {
  it('holds the qwen3 renderer’s parse of each completion (thinking, tool call, malformed call)', () => {
    const read = parseSamples(fs.readFileSync(FIXTURE, 'utf8'), FIXTURE);
    assert.deepStrictEqual(read.problems, []);
    assert.strictEqual(read.records.length, 4);
    const renderer = getRenderer('qwen3', loadHfTokenizer('Qwen/Qwen3-8B', QWEN3_DIR));
    for (const r of read.records) {
      const parsed = renderer.parseResponse(r.completion_tokens);
      assert.strictEqual(r.content, parsed.message.content);
      assert.deepStrictEqual(parsedMessageFields(r), parsedMessageFields(parsed.message));
      assert.strictEqual(r.completion, renderer.tokenizer.decode(r.completion_tokens));
    }
    const [call, malformed] = read.records;
    assert.strictEqual(call!.tool_calls?.[0]?.function.name, 'add');
    assert.ok(call!.thinking?.startsWith('The user wants 123 + 456.'));
    assert.strictEqual(malformed!.unparsed_tool_calls?.length, 1);
  });
});
