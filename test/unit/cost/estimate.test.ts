// The estimate of a whole job before it starts, checked against hand computations: a GRPO run, an
// SFT run, a DPO run, a sweep (the sum of its runs) and an eval (what is left to sample), on the
// engine's byte-level models (one token per byte) and a cloud model (characters ÷ 4), priced by a
// table set in the test.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { estimateLines, estimateTextTokens, needsCostConfirmation, priceEstimate } from '../../../src/core/cost/estimate';
import type { PriceTable } from '../../../src/core/cost/prices';
import { estimateSpecFile } from '../../../src/core/kinds/estimate';
import { estimateSweep } from '../../../src/core/experiments/sweepEstimate';
import { estimateEval } from '../../../src/core/evals/estimate';

/** USD per million tokens, different in each category so that a token in the wrong one shows. */
const PRICES: PriceTable = {
  taken: '2026-11-01',
  source: 'test table',
  storage_usd_per_gb_month: 0,
  models: {
    'tinker-studio/arith-gpt': { prefill: 1, sample: 2, train: 3 },
    'tinker-studio/arith-chat': { prefill: 10, sample: 20, train: 30 },
  },
};

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);

describe('cost estimate of a whole job before it starts', () => {
  let dir: string;
  const opts = () => ({ cacheDir: path.join(dir, 'cache'), prices: PRICES });
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-estimate-'));
    // prompts of 4 and 6 bytes: 5 on average
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"1+1=","answer":"2"}\n{"question":"10+10=","answer":"20"}\n');
    fs.writeFileSync(path.join(dir, 'reward.py'), 'def compute_reward(completion, ground_truth):\n    return 0.0\n');
    fs.writeFileSync(path.join(dir, 'arith.grpo.json'), JSON.stringify({ model: 'tinker-studio/arith-gpt', iterations: 3, groups_per_batch: 2, group_size: 4, max_tokens: 8, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' } }));
    // chats of 6, 6, 10 and 10 bytes
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), ['ab|cdef', 'xy|zzzz', 'abcd|efghij', 'abcde|fghij'].map((c) => JSON.stringify({ prompt: c.split('|')[0], completion: c.split('|')[1] })).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'chats.sft.json'), JSON.stringify({ model: 'tinker-studio/arith-chat', batch_size: 2, num_epochs: 2, dataset: { path: 'chats.jsonl' } }));
    // each pair's two sides: (2+3)+(2+2) = 9 and (2+4)+(2+1) = 9 bytes
    fs.writeFileSync(path.join(dir, 'pairs.jsonl'), '{"prompt":"q?","chosen":"yes","rejected":"no"}\n{"prompt":"qq","chosen":"aaaa","rejected":"b"}\n');
    fs.writeFileSync(path.join(dir, 'prefs.dpo.json'), JSON.stringify({ model: 'tinker-studio/arith-gpt', batch_size: 1, max_steps: 3, dataset: { path: 'pairs.jsonl' } }));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('text tokens: one per byte on the engine\'s byte-level models, characters ÷ 4 (rounded up) on the others', () => {
    assert.strictEqual(estimateTextTokens('héllo', 'tinker-studio/arith-gpt'), 6);
    assert.strictEqual(estimateTextTokens('abcde', 'Qwen/Qwen3-8B'), 2);
  });

  it('GRPO: iterations × groups prompts prefilled, × group size completions at max_tokens sampled and trained with their prompts', async () => {
    const e = (await estimateSpecFile(path.join(dir, 'arith.grpo.json'), opts()))!;
    // 3 iterations × 2 groups × 5 prompt tokens; 24 samples × 8; 24 × (5 + 8)
    assert.deepStrictEqual(Object.fromEntries(e.usage), { 'tinker-studio/arith-gpt': { prefill: 30, cached_prefill: 0, sampled: 192, train: 312 } });
    close(e.usd, (30 * 1 + 192 * 2 + 312 * 3) / 1e6);
    assert.strictEqual(e.tokens, 534);
    assert.ok(e.assumptions.some((a) => /max_tokens \(8\): an upper bound/.test(a)), e.assumptions.join(' | '));
    const text = estimateLines(e).join('\n');
    assert.match(text, /^Estimated cost of GRPO run arith \(3 iterations, 2 groups × 4 samples\): \$0\.00135 \(estimate\) for 534 tokens/);
    assert.match(text, /prices taken 2026-11-01 \(test table\)/);
  });

  it('GRPO with a teacher: the teacher reads every sampled sequence at its own price', async () => {
    const file = path.join(dir, 'distill.grpo.json');
    fs.writeFileSync(file, JSON.stringify({ model: 'tinker-studio/arith-gpt', iterations: 1, groups_per_batch: 2, group_size: 1, max_tokens: 8, dataset: { path: 'train.jsonl' }, teacher: { model: 'tinker-studio/arith-chat' } }));
    const e = (await estimateSpecFile(file, opts()))!;
    assert.deepStrictEqual(e.usage.get('tinker-studio/arith-chat'), { prefill: 2 * 13, cached_prefill: 0, sampled: 0, train: 0 });
    close(e.usd, (10 * 1 + 16 * 2 + 26 * 3 + 26 * 10) / 1e6);
  });

  it('SFT: steps × batch chats trained whole (2 epochs of 2 batches of 2 chats of 8 tokens on average)', async () => {
    const e = (await estimateSpecFile(path.join(dir, 'chats.sft.json'), opts()))!;
    assert.deepStrictEqual(Object.fromEntries(e.usage), { 'tinker-studio/arith-chat': { prefill: 0, cached_prefill: 0, sampled: 0, train: 64 } });
    close(e.usd, (64 * 30) / 1e6);
    assert.match(e.what, /4 steps × 2 chats/);
  });

  it('DPO: both sides of each pair trained per step, and read once per pair by the reference', async () => {
    const e = (await estimateSpecFile(path.join(dir, 'prefs.dpo.json'), opts()))!;
    assert.deepStrictEqual(Object.fromEntries(e.usage), { 'tinker-studio/arith-gpt': { prefill: 18, cached_prefill: 0, sampled: 0, train: 27 } });
    close(e.usd, (18 * 1 + 27 * 3) / 1e6);
  });

  it('overrides (an agent\'s, a start flow\'s) change the estimate as they change the run', async () => {
    const e = (await estimateSpecFile(path.join(dir, 'arith.grpo.json'), opts(), { iterations: 6 }))!;
    assert.strictEqual(e.usage.get('tinker-studio/arith-gpt')!.sampled, 384);
  });

  it('a sweep: the sum of its runs as the sweep expands them', async () => {
    const file = path.join(dir, 'gs.sweep.json');
    fs.writeFileSync(file, JSON.stringify({ base: 'arith.grpo.json', method: 'grid', parameters: { group_size: { values: [2, 4] } }, metric: { name: 'env/all/reward/total', goal: 'maximize' } }));
    const e = (await estimateSweep(file, opts()))!;
    // prefill does not depend on the group size: 2 × 30; sampled 3·2·(2+4)·8; train 3·2·(2+4)·13
    assert.deepStrictEqual(Object.fromEntries(e.usage), { 'tinker-studio/arith-gpt': { prefill: 60, cached_prefill: 0, sampled: 288, train: 468 } });
    assert.match(e.what, /^sweep gs \(2 runs\)$/);
  });

  it('an eval: problems × n × targets at each target\'s prices, and only the samples not yet in its results folder', async () => {
    const file = path.join(dir, 'two.eval.json');
    fs.writeFileSync(file, JSON.stringify({ dataset: { path: 'train.jsonl' }, grader: { file: 'reward.py' }, n: 3, max_tokens: 5, targets: ['tinker-studio/arith-gpt', 'tinker-studio/arith-chat'] }));
    const e = (await estimateEval(file, opts()))!;
    // per target: 2 problems × 3 samples, each its own request: prefill 3 × (4 + 6), sampled 6 × 5
    assert.deepStrictEqual(Object.fromEntries(e.usage), {
      'tinker-studio/arith-gpt': { prefill: 30, cached_prefill: 0, sampled: 30, train: 0 },
      'tinker-studio/arith-chat': { prefill: 30, cached_prefill: 0, sampled: 30, train: 0 },
    });
    close(e.usd, (30 * 1 + 30 * 2 + 30 * 10 + 30 * 20) / 1e6);
    // one sample of the first problem already there for arith-gpt: it is not counted again
    const samples = path.join(dir, 'evals', 'two', 'targets', 'tinker-studio_arith-gpt', 'samples.jsonl');
    fs.mkdirSync(path.dirname(samples), { recursive: true });
    fs.writeFileSync(samples, JSON.stringify({ group_idx: 0, traj_idx: 0, problem_id: 'train.jsonl:1', prompt: 'p', completion: 'c', content: 'c', ground_truth: '2', completion_tokens: [1], logprobs: [0], reward: 1, advantage: 0, stop_reason: 'stop', termination: 'stop' }) + '\n');
    const left = (await estimateEval(file, opts()))!;
    assert.deepStrictEqual(left.usage.get('tinker-studio/arith-gpt'), { prefill: 30 - 4, cached_prefill: 0, sampled: 30 - 5, train: 0 });
    assert.match(left.what, /11 samples left/);
  });

  it('the confirmation: only above the threshold', () => {
    const e = priceEstimate(PRICES, { what: 'x', usage: new Map([['tinker-studio/arith-gpt', { train: 1e6, prefill: 0, cached_prefill: 0, sampled: 0 }]]), assumptions: [] });
    assert.strictEqual(e.usd, 3);
    assert.strictEqual(needsCostConfirmation(e, 3), false);
    assert.strictEqual(needsCostConfirmation(e, 2.99), true);
  });
});
