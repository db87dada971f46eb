// "Make Preference Pairs from Run": per group the best against the worst training sample when their
// rewards differ by at least the threshold; the holdout's samples are never read; provenance kept.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { makePairsFromRun, pairsJsonl, problemIdOf } from '../../../src/core/dpo/fromRun';
import { parsePairsText } from '../../../src/core/dpo/pairs';

const sample = (group: number, traj: number, content: string, reward: number, extra: Record<string, unknown> = {}) => ({
  group_idx: group,
  traj_idx: traj,
  problem_id: `/abs/data/train.jsonl:${group + 1}`,
  prompt: '<|im_start|>user\n…',
  question: `What is ${group} + 1?`,
  completion: `${content}<|im_end|>`,
  content,
  ground_truth: String(group + 1),
  completion_tokens: [1],
  logprobs: [-1],
  reward,
  advantage: 0,
  stop_reason: 'stop',
  termination: 'stop_sequence',
  ...extra,
});

describe('preference pairs from a GRPO run', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pairs-from-run-'));
    const write = (it: number, file: string, recs: unknown[]) => {
      fs.mkdirSync(path.join(dir, `iteration_${String(it).padStart(6, '0')}`), { recursive: true });
      fs.writeFileSync(path.join(dir, `iteration_${String(it).padStart(6, '0')}`, file), recs.map((r) => JSON.stringify(r) + '\n').join(''));
    };
    write(0, 'train_samples.jsonl', [
      // group 0: best 1.0 (traj 1, the first of two), worst 0.0 (traj 0)
      sample(0, 0, '2', 0), sample(0, 1, '1', 1), sample(0, 2, '1', 1), sample(0, 3, '3', 0.2),
      // group 1: all alike, no pair
      sample(1, 0, '2', 1), sample(1, 1, '2', 1),
      // group 2: difference 0.3 < 0.5; a failed reward is left out
      sample(2, 0, '3', 0.3), sample(2, 1, '4', 0), sample(2, 2, 'x', 1, { reward_error: { type: 'ValueError', message: 'boom' } }),
    ]);
    write(0, 'eval_holdout_samples.jsonl', [sample(9, 0, 'right', 1), sample(9, 1, 'wrong', 0)]);
    write(1, 'train_samples.jsonl', [sample(5, 0, '6', 1), sample(5, 1, '7', 0)]);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('best against worst per group at the threshold, training samples only, with provenance', async () => {
    const made = await makePairsFromRun(dir);
    assert.deepStrictEqual(made.iterations, [0, 1]);
    assert.strictEqual(made.groups, 4);
    assert.strictEqual(made.belowThreshold, 2);
    assert.deepStrictEqual(made.pairs.map((p) => [p.prompt[0]!.content, p.chosen[0]!.content, p.rejected[0]!.content]), [['What is 0 + 1?', '1', '2'], ['What is 5 + 1?', '6', '7']]);
    assert.ok(!JSON.stringify(made.pairs).includes('What is 9'), 'the holdout samples are never used');
    assert.deepStrictEqual(made.pairs[0]!.meta, { source: { run: path.basename(dir), iteration: 0, group_idx: 0, problem_id: 'train.jsonl:1', ground_truth: '1', chosen: { traj_idx: 1, reward: 1 }, rejected: { traj_idx: 0, reward: 0 } } });
    // the file reads back as pairs
    const back = parsePairsText(pairsJsonl(made.pairs), 'p.jsonl');
    assert.deepStrictEqual(back.skipped, []);
    assert.strictEqual(back.pairs.length, 2);
    assert.strictEqual((back.pairs[1]!.meta!.source as { iteration: number }).iteration, 1);
  });

  it('a lower threshold admits group 2; a run without training samples is refused', async () => {
    const made = await makePairsFromRun(dir, { threshold: 0.25 });
    assert.strictEqual(made.pairs.length, 3);
    assert.deepStrictEqual([made.pairs[1]!.chosen[0]!.content, made.pairs[1]!.rejected[0]!.content], ['3', '4']);
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'pairs-empty-'));
    await assert.rejects(makePairsFromRun(empty), /has no training samples/);
    fs.rmSync(empty, { recursive: true });
    await assert.rejects(makePairsFromRun(dir, { threshold: 0 }), /threshold must be above 0/);
    assert.strictEqual(problemIdOf('hf/ds/train:3'), 'hf/ds/train:3');
  });
});
