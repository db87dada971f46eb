// The report an agent reads after a step, from a run directory written by hand: the group counts come
// from the last iteration's by_group fractions, the trend compares the last five iterations' mean
// reward with the five before, and the snippets are the best and worst sample of a mixed group.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stepReport, stepReportText } from '../../../src/core/grpo/agentReport';
import type { SampleRecord } from '../../../src/core/runs/sampleRecord';

/** A whole sample record, as a run writes it (src/core/runs/sampleSchema.ts). */
function sampleRecord(group_idx: number, reward: number, content: string): SampleRecord {
  return {
    group_idx,
    traj_idx: 0,
    problem_id: `p${group_idx}`,
    prompt: `<|im_start|>user\nproblem ${group_idx}<|im_end|>\n<|im_start|>assistant\n`,
    completion: `${content}<|im_end|>`,
    content,
    ground_truth: '8',
    completion_tokens: [1, 2],
    logprobs: [-0.5, -0.25],
    reward,
    advantage: reward - 0.5,
    stop_reason: 'stop',
    termination: 'stop_sequence',
  };
}

function runDir(rewards: number[], allBad = 0.25, allGood = 0.25): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-report-'));
  const lines = rewards.map((r, step) =>
    JSON.stringify({ step, 'env/all/reward/total': r, 'env/all/by_group/frac_mixed': 1 - allBad - allGood, 'env/all/by_group/frac_all_good': allGood, 'env/all/by_group/frac_all_bad': allBad, 'env/all/frac_truncated': 0.125, 'optim/kl_sample_train_v1': 1e-4, 'optim/entropy': 0.5, 'time/total': 2 }),
  );
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
  const last = rewards.length - 1;
  const it = path.join(dir, `iteration_${String(last).padStart(6, '0')}`);
  fs.mkdirSync(it);
  const sample = (group_idx: number, reward: number, content: string) => JSON.stringify(sampleRecord(group_idx, reward, content));
  fs.writeFileSync(path.join(it, 'train_samples.jsonl'), [sample(0, 1, 'same'), sample(0, 1, 'same'), sample(1, 0, 'wrong 7'), sample(1, 1, 'right 8')].join('\n') + '\n');
  return dir;
}

describe('agent step report', () => {
  it('counts groups, computes the trend and picks a mixed group', () => {
    const dir = runDir([0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.3, 0.3]);
    try {
      const r = stepReport({ runDir: dir, firstStep: 8, lastStep: 9, stepsTotal: 20, groupsPerBatch: 8, rewardErrors: ['a', 'b', 'c', 'd'] });
      assert.deepStrictEqual(r.groups, { total: 8, mixed: 4, all_good: 2, all_bad: 2 });
      assert.strictEqual(r.steps_done, 10);
      assert.ok(Math.abs(r.reward_mean! - 0.3) < 1e-12);
      assert.ok(Math.abs(r.reward_trend! - 0.2) < 1e-12, `trend ${r.reward_trend}`);
      assert.strictEqual(r.seconds, 4);
      assert.deepStrictEqual(r.reward_errors, ['a', 'b', 'c'], 'the first three errors only');
      assert.deepStrictEqual(
        r.samples.map((s) => [s.which, s.problem_id, s.completion]),
        [
          ['best', 'p1', 'right 8'],
          ['worst', 'p1', 'wrong 7'],
        ],
      );
      const text = stepReportText(r);
      assert.match(text, /^iterations 8–9 done \(10\/20\), 4\.0 s$/m);
      assert.match(text, /reward 0\.300 \(trend \+0\.200\)/);
      assert.match(text, /4 mixed, 2 all-good \(ALL-1\), 2 all-bad \(ALL-0\) of 8; truncated 0\.125/);
      assert.ok(text.endsWith(`run directory: ${dir}`));
      assert.deepStrictEqual(r.findings, [], 'no doctor finding on a healthy run');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a distillation run's report gives the KL to the teacher of the last step", () => {
    const dir = runDir([0, 0]);
    try {
      const file = path.join(dir, 'metrics.jsonl');
      const rows = fs.readFileSync(file, 'utf8').trim().split('\n').map((l, i) => JSON.stringify({ ...JSON.parse(l), teacher_kl: i === 0 ? 0.9 : 0.25 }));
      fs.writeFileSync(file, rows.join('\n') + '\n');
      const r = stepReport({ runDir: dir, firstStep: 1, lastStep: 1, stepsTotal: 2, groupsPerBatch: 8, rewardErrors: [] });
      assert.strictEqual(r.teacher_kl, 0.25);
      assert.match(stepReportText(r), /entropy 0\.500, KL to the teacher 0\.250$/m);
      assert.strictEqual(stepReport({ runDir: runDir([0]), firstStep: 0, lastStep: 0, stepsTotal: 1, groupsPerBatch: 8, rewardErrors: [] }).teacher_kl, undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the samples with the run\'s sample-record schema: a line that is no sample record is not quoted', () => {
    const dir = runDir([0.1, 0.3]);
    try {
      const file = path.join(dir, 'iteration_000001', 'train_samples.jsonl');
      // group 2 is mixed but its lines lack the record's tokens, log-probs, prompt and stop reason
      const partial = (reward: number, content: string) => JSON.stringify({ group_idx: 2, traj_idx: 0, problem_id: 'p2', content, reward, advantage: reward - 0.5 });
      fs.writeFileSync(file, [partial(0, 'partial wrong'), partial(1, 'partial right'), JSON.stringify(sampleRecord(3, 0, 'wrong 5')), JSON.stringify(sampleRecord(3, 1, 'right 6'))].join('\n') + '\n');
      const r = stepReport({ runDir: dir, firstStep: 1, lastStep: 1, stepsTotal: 2, groupsPerBatch: 4, rewardErrors: [] });
      assert.deepStrictEqual(
        r.samples.map((s) => [s.which, s.problem_id, s.completion]),
        [
          ['best', 'p3', 'right 6'],
          ['worst', 'p3', 'wrong 5'],
        ],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('carries the run doctor\'s findings: mostly ALL-0 groups', () => {
    const dir = runDir([0.1, 0.1, 0.1, 0.1, 0.1], 0.75, 0);
    try {
      const r = stepReport({ runDir: dir, firstStep: 4, lastStep: 4, stepsTotal: 20, groupsPerBatch: 8, rewardErrors: [] });
      assert.deepStrictEqual(r.groups, { total: 8, mixed: 2, all_good: 0, all_bad: 6 });
      assert.deepStrictEqual(r.findings.map((f) => f.id), ['mostly-all-bad']);
      assert.match(stepReportText(r), /^doctor: /m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
