// Off-policy distillation data on the embedded engine: a teacher (a base model, or a tinker://
// sampler checkpoint whose base model the server names) answers a prompt set n times; the chats file
// is what an SFT spec reads, each line with its provenance; a reward file keeps only what it accepts;
// the same seed gives the same file; the CLI's arguments.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { parseArgs } from '../../../src/cli/args';
import { distillData } from '../../../src/core/distill/distillData';
import { recordToChat } from '../../../src/core/training/chats';
import { EngineClient, readJsonl, startEngineClient, writeReward } from './engineFixture';

describe('distill-data (off-policy distillation data)', function () {
  this.timeout(180_000);
  let ec: EngineClient;
  let prompts: string;
  const connect = async () => {
    const { ServiceClient } = await import('../../../src/core/tinker/client');
    return ServiceClient.connect({ baseUrl: ec.engine.server.url, clientVersion: 'test' });
  };
  before(async () => {
    ec = await startEngineClient('tinker-distill-data-');
    prompts = path.join(ec.dir, 'prompts.jsonl');
    fs.writeFileSync(prompts, '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 3?","answer":5}\n{"messages":[{"role":"user","content":"Hi"}],"answer":"x"}\n');
    writeReward(ec.dir);
  });
  after(async () => ec?.close());

  it('samples a base-model teacher n times per prompt into SFT chats with provenance; the same seed gives the same file', async () => {
    const out = path.join(ec.dir, 'chats.jsonl');
    const o = { teacher: 'tinker-studio/random-gpt', prompts, out, n: 3, maxTokens: 5, seed: 7, connect, cacheDir: path.join(ec.dir, 'cache') };
    const r = await distillData(o);
    assert.deepStrictEqual([r.prompts, r.sampled, r.kept, r.rewardErrors], [3, 9, 9, 0]);
    const lines = readJsonl(out) as Array<{ messages: Array<{ role: string; content: string }>; distilled: Record<string, unknown> }>;
    assert.strictEqual(lines.length, 9);
    for (const l of lines) {
      const chat = recordToChat(l, { messagesField: 'messages', promptField: 'prompt', completionField: 'completion' }, 'x');
      assert.ok(chat.ok, 'an SFT spec reads the line');
      assert.strictEqual(l.messages.at(-1)!.role, 'assistant');
      assert.strictEqual(l.distilled.teacher, 'tinker-studio/random-gpt');
      assert.strictEqual(l.distilled.temperature, 1);
      assert.strictEqual(l.distilled.max_tokens, 5);
      assert.strictEqual(l.distilled.seed, 7);
    }
    assert.deepStrictEqual(lines.map((l) => l.messages[0]!.content), ['What is 1 + 1?', 'What is 1 + 1?', 'What is 1 + 1?', 'What is 2 + 3?', 'What is 2 + 3?', 'What is 2 + 3?', 'Hi', 'Hi', 'Hi']);
    const prov = JSON.parse(fs.readFileSync(r.provenanceFile, 'utf8')) as Record<string, unknown>;
    assert.strictEqual(r.provenanceFile, path.join(ec.dir, 'chats.provenance.json'));
    assert.deepStrictEqual(prov.sampling, { n: 3, temperature: 1, max_tokens: 5, stop: [258], seed: 7 }, 'the chatml stop token of the byte tokenizer');
    assert.deepStrictEqual(prov.counts, { prompts: 3, sampled: 9, kept: 9, reward_errors: 0 });
    const first = fs.readFileSync(out, 'utf8');
    await distillData(o);
    assert.strictEqual(fs.readFileSync(out, 'utf8'), first, 'seeded: the same file again');
  });

  it('a tinker:// teacher checkpoint: its base model from the server; a reward file keeps only the samples it accepts', async () => {
    const tc = await ec.service.createLoraTrainingClient('tinker-studio/random-gpt', { rank: 4 });
    const teacher = (await (await tc.saveWeightsForSampler('teacher')).result()).path!;
    assert.match(teacher, /^tinker:\/\//);
    const out = path.join(ec.dir, 'kept.jsonl');
    const r = await distillData({ teacher, prompts, out, n: 4, maxTokens: 5, seed: 1, reward: path.join(ec.dir, 'reward.py'), connect, cacheDir: path.join(ec.dir, 'cache') });
    const lines = readJsonl(out) as Array<{ messages: Array<{ content: string }>; distilled: { reward: number; base_model: string; teacher: string } }>;
    assert.strictEqual(r.sampled, 12);
    assert.strictEqual(r.kept, lines.length);
    assert.ok(r.kept > 0 && r.kept < r.sampled, `kept ${r.kept} of ${r.sampled}: the seed must give both kinds`);
    // the test reward: even-length completions score 1
    for (const l of lines) {
      assert.strictEqual(l.distilled.reward, 1);
      assert.strictEqual(l.messages.at(-1)!.content.length % 2, 0);
      assert.strictEqual(l.distilled.base_model, 'tinker-studio/random-gpt');
      assert.strictEqual(l.distilled.teacher, teacher);
    }
  });

  it('refuses what cannot work and writes nothing', async () => {
    const out = path.join(ec.dir, 'never.jsonl');
    await assert.rejects(distillData({ teacher: 'tinker-studio/random-gpt', prompts: path.join(ec.dir, 'missing.jsonl'), out, connect, cacheDir: ec.dir }), /missing\.jsonl/);
    await assert.rejects(distillData({ teacher: 'tinker-studio/random-gpt', prompts, out, n: 0, connect, cacheDir: ec.dir }), /--n must be a whole number/);
    assert.ok(!fs.existsSync(out));
  });

  it('CLI: tinker-studio distill-data --teacher … --prompts … --out … [--n N] [--reward file]', () => {
    assert.deepStrictEqual(parseArgs(['distill-data', '--teacher', 'tinker://r/sampler_weights/final', '--prompts', 'p.jsonl', '--out', 'c.jsonl', '--n', '4', '--reward', 'r.py', '--min-reward', '0.9', '--seed', '3']), {
      command: 'distill-data',
      teacher: 'tinker://r/sampler_weights/final',
      prompts: 'p.jsonl',
      out: 'c.jsonl',
      n: 4,
      reward: 'r.py',
      minReward: 0.9,
      seed: 3,
    });
    assert.throws(() => parseArgs(['distill-data', '--teacher', 'm', '--prompts', 'p.jsonl']), /needs --out/);
    assert.throws(() => parseArgs(['distill-data', '--teacher', 'm', '--prompts', 'p', '--out', 'o', '--n', '0']), /--n must be a whole number ≥ 1/);
    assert.throws(() => parseArgs(['distill-data', '--teacher', 'm', '--prompts', 'p', '--out', 'o', '--min-reward', '1']), /--min-reward needs --reward/);
  });
});
