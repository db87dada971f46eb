// The results folder's schemas: a well-formed folder reads back; a bad field or line is named with its file.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EvalSummary, readEvalResults, readTargetSamples, targetSamplesFile } from '../../../src/core/evals/results';

export function sampleSummary(): EvalSummary {
  const est = (value: number) => ({ value, lo: value - 0.1, hi: value + 0.1 });
  const target = (id: string) => ({
    id,
    label: id,
    source: { kind: 'base' as const, model: 'tinker-studio/arith-gpt' },
    model: 'tinker-studio/arith-gpt',
    problems: 2,
    samples: 4,
    n: 2,
    metrics: { reward: est(0.5), pass_at: { 'pass@1': est(0.5), 'pass@2': est(0.75) }, stop_rate: est(1), completion_tokens: est(3) },
    reward_errors: 0,
  });
  return {
    kind: 'eval',
    version: 1,
    name: 'holdout',
    spec_file: '/x/holdout.eval.json',
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    complete: true,
    n: 2,
    correct_threshold: 0.5,
    bootstrap: { resamples: 2000, seed: 0 },
    baseline: 'a',
    targets: [target('a'), target('b')],
    comparisons: [{ target: 'b', baseline: 'a', problems: 2, diff: { value: 0 }, p_value: 1, permutations: 4, exact: true, wins: 0, losses: 0, ties: 2 }],
    problems: [{ problem_id: 'p0', question: 'What is 1 + 1?', ground_truth: '2', targets: { a: { reward: 0.5, correct: 1, samples: 2 } } }],
  };
}

describe('eval results folder', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evalres-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads summary.json and a target\'s samples', () => {
    fs.mkdirSync(path.join(dir, 'targets', 'a'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(sampleSummary()));
    const rec = { group_idx: 0, traj_idx: 0, problem_id: 'p0', prompt: 'P', completion: '2', content: '2', ground_truth: '2', completion_tokens: [1], logprobs: [-0.1], reward: 1, advantage: 0, stop_reason: 'stop', termination: 'stop' };
    fs.writeFileSync(targetSamplesFile(dir, 'a'), JSON.stringify(rec) + '\n' + '{"group_idx":0,"tr');
    const r = readEvalResults(dir);
    assert.strictEqual(r.summary.targets.length, 2);
    assert.strictEqual(r.targetDirs['b'], path.join(dir, 'targets', 'b'));
    const s = readTargetSamples(dir, 'a');
    assert.strictEqual(s.length, 1, 'the torn last line is dropped');
    assert.strictEqual(s[0]!.reward, 1);
  });

  it('names the file and field of a bad summary, and the line of a bad sample', () => {
    const bad = sampleSummary() as unknown as { targets: { n: number }[] };
    bad.targets[1]!.n = 0;
    fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(bad));
    assert.throws(() => readEvalResults(dir), /summary\.json: field targets\.1\.n/);
    fs.mkdirSync(path.join(dir, 'targets', 'a'), { recursive: true });
    fs.writeFileSync(targetSamplesFile(dir, 'a'), '{"group_idx":-1}\n{}\n');
    assert.throws(() => readTargetSamples(dir, 'a'), /samples\.jsonl:1: field group_idx/);
  });
});
