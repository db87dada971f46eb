#!/usr/bin/env node
// Writes test/fixtures/samples/arith-tools-episodes.jsonl: one iteration of an environment run as its
// sample records (transcripts included), made by Tinker Studio's own episode code — the real
// examples/arith-tools environment in real Python (its workers), runEpisodeGroups, the chatml
// renderer with the engine's byte tokenizer, episodeRecords — with one stand-in: the model. Its
// replies are scripted (fixed texts, a fixed log-prob pattern), so the fixture is the same on every
// machine and does not depend on what arith-chat's weights answer. Four problems, three episodes
// each: a tool call then the right answer, a malformed call (twice) then the answer, a wrong answer,
// calls until max_turns, and a problem line without "y" whose constructor raises (an env error with
// its traceback). The UI test (test/ui/transcript-steps.mjs) shows it in the group breakdown; the
// unit test test/unit/runs/episodeFixture.test.ts checks it still parses and matches the view model.
// Run after `npm run compile-tests`: node scripts/make-episode-fixture.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const out = (p) => require(path.join(root, 'out/src', p));
const { ByteTokenizer } = out('core/render/byteTokenizer.js');
const { getRenderer } = out('core/render/registry.js');
const { createEnvRunner } = out('core/env/runner.js');
const { runEpisodeGroups, episodeRecords } = out('core/env/episodeGroups.js');
const { totalRewards, trajectoryAdvantages } = out('core/env/trajectory.js');

const renderer = getRenderer('chatml', new ByteTokenizer());
const tok = renderer.tokenizer;
const imEnd = tok.encodeWithSpecialTokens('<|im_end|>');

// the env file is copied to a temp folder, so the tracebacks name its file and line but no machine's path
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'episode-fixture-'));
const envFile = path.join(dir, 'arith_tools.env.py');
fs.copyFileSync(path.join(root, 'examples/arith-tools/arith_tools.env.py'), envFile);

const call = (a, b) => `<tool_call>{"name": "add", "arguments": {"a": ${a}, "b": ${b}}}</tool_call>`;
const problems = [
  { x: 123, y: 456 },
  { x: 298, y: 333 },
  { x: 291, y: 146 },
  { x: 5 }, // no "y": the constructor raises KeyError
];
const scripts = {
  toolThenAnswer: (p) => [call(p.x, p.y), String(p.x + p.y)],
  malformedTwice: (p) => [`<tool_call>{"name": "add", "arguments": {"a": ${p.x}, "b": ${p.y}</tool_call>`, `<tool_call>{"name": "add", "arguments": {"a": ${p.x} "b": ${p.y}}}</tool_call>`, String(p.x + p.y)],
  wrong: (p) => [String(p.x + p.y - 10)],
  callsForever: (p) => [call(p.x, p.y), call(p.x, p.y), call(p.y, p.x)],
};
const plan = [
  ['toolThenAnswer', 'malformedTwice', 'callsForever'],
  ['toolThenAnswer', 'callsForever', 'callsForever'],
  ['wrong', 'malformedTwice', 'callsForever'],
  ['toolThenAnswer', 'wrong', 'callsForever'],
];
const G = 3;

/** The stand-in model: the episode's scripted reply for the turn its prompt is at (its seed names the episode). */
const sampler = {
  async sample(input, params) {
    const ob = input.chunks.flatMap((c) => [...c.tokens]);
    const turn = tok.decode(ob).split('<|im_start|>assistant').length - 2;
    const k = Math.floor(params.seed / G);
    const replies = scripts[plan[k][params.seed % G]](problems[k]);
    const text = replies[Math.min(turn, replies.length - 1)];
    const tokens = [...tok.encode(text), ...imEnd];
    return { sequences: [{ tokens, logprobs: tokens.map((_, i) => -((i * 7 + params.seed) % 11) / 4), stop_reason: 'stop' }] };
  },
};

const env = await createEnvRunner({ file: envFile, workers: 1, timeoutMs: 20_000 });
try {
  const pool = problems.map((row, k) => ({ id: `train.jsonl:${k + 1}`, messages: [{ role: 'user', content: `What is ${row.x} + ${row.y ?? '?'}?` }], groundTruth: row.y === undefined ? '' : String(row.x + row.y), row }));
  const limits = { maxTurns: 3, maxTokens: 48, failedParseReward: -1, terminateOnParseError: false, contextOverflowReward: -0.1 };
  const groups = await runEpisodeGroups(env, pool, G, sampler, renderer, (k, j) => ({ max_tokens: 48, temperature: 1, seed: k * G + j }), limits, undefined, () => {});
  const records = episodeRecords(renderer, groups, groups.map(totalRewards), trajectoryAdvantages(groups));
  // the temp folder out of the tracebacks
  const text = records.map((r) => JSON.stringify(r)).join('\n').split(dir + path.sep).join('').split(dir).join('.');
  const file = path.join(root, 'test/fixtures/samples/arith-tools-episodes.jsonl');
  fs.writeFileSync(file, text + '\n');
  console.log(`wrote ${path.relative(root, file)} (${records.length} episodes)`);
} finally {
  await env.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
