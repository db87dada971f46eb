// The evaluation results panel's data: the snapshot prepared from a results folder (per-problem
// means, metrics with bootstrap intervals, the baseline), the matrix's orders, the best of a column.
import * as assert from 'assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SampleRecord } from '../../../src/protocol/sampleSchema';
import { bestOf, EvalSnapshot, sortProblems } from '../../../src/protocol/evalsProtocol';
import { readEvalSnapshot, snapshotFromSamples, snapshotFromSummary } from '../../../src/core/evals/resultsView';
import { EvalSummary, targetSamplesFile } from '../../../src/core/evals/results';
import { summarize } from '../../../src/core/evals/runEval';
import { parseEvalSpecValue } from '../../../src/core/evals/spec';
import { stoppedOnItsOwn } from '../../../src/protocol/sampleSchema';

function sample(problem: string, k: number, reward: number, stop = 'stop'): SampleRecord {
  return {
    group_idx: Number(problem.replace(/\D/g, '')) || 0,
    traj_idx: k,
    problem_id: problem,
    prompt: `Q ${problem}`,
    question: `Q ${problem}`,
    completion: `A ${reward}`,
    content: `A ${reward}`,
    ground_truth: '1',
    completion_tokens: [1, 2, 3],
    logprobs: [-0.1, -0.2, -0.3],
    reward,
    advantage: 0,
    stop_reason: stop,
    termination: 'stop',
  };
}

describe('eval results panel data', () => {
  it('from samples: averages per problem and per target, intervals contain the mean', () => {
    const base = [sample('p1', 0, 0), sample('p1', 1, 1), sample('p2', 0, 0), sample('p2', 1, 0)];
    const ckpt = [sample('p1', 0, 1), sample('p1', 1, 1), sample('p2', 0, 1), sample('p2', 1, 0, 'length')];
    const s = snapshotFromSamples({ name: 'x', dir: '/tmp/x', targets: [{ id: 'base', records: base }, { id: '000080', records: ckpt }] });
    assert.deepStrictEqual(s.problems, ['p1', 'p2']);
    assert.deepStrictEqual(s.rewards, [[0.5, 0], [1, 0.5]]);
    assert.strictEqual(s.complete, false);
    const reward = s.metrics.find((m) => m.key === 'reward')!;
    assert.strictEqual(reward.values[0]!.mean, 0.25);
    assert.strictEqual(reward.values[1]!.mean, 0.75);
    for (const v of reward.values) assert.ok(v!.lo! <= v!.mean && v!.mean <= v!.hi!);
    assert.strictEqual(s.metrics.find((m) => m.key === 'stop_rate')!.values[1]!.mean, 0.75);
    assert.strictEqual(bestOf(reward), 1);
    assert.strictEqual(bestOf({ goal: 'minimize', values: [{ mean: 3 }, { mean: 2 }, null] }), 1);
    assert.strictEqual(bestOf({ goal: 'maximize', values: [{ mean: 1 }, { mean: 1 }] }), undefined);
  });

  it('from summary.json: the spec order, the baseline, pass@k columns, steps, paired comparisons and the matrix', () => {
    const est = (value: number) => ({ value, lo: value - 0.1, hi: value + 0.1 });
    const metrics = (r: number) => ({ reward: est(r), pass_at: { 'pass@2': est(r + 0.1), 'pass@1': est(r) }, stop_rate: est(1), completion_tokens: est(5) });
    const summary = EvalSummary.parse({
      kind: 'eval', version: 1, name: 'holdout', spec_file: '/w/holdout.eval.json', created_at: 'x', updated_at: 'x', complete: true, n: 2, correct_threshold: 0.5,
      bootstrap: { resamples: 100, seed: 0 }, baseline: 'base',
      targets: [
        { id: 'base', label: 'tinker-studio/arith-gpt', source: { kind: 'base', model: 'tinker-studio/arith-gpt' }, model: 'm', problems: 2, samples: 4, n: 2, metrics: metrics(0.2), reward_errors: 0 },
        { id: 'run-000010', label: 'run/000010', source: { kind: 'checkpoint', path: 'tinker://r/sampler_weights/000010', run_dir: '/r', checkpoint: '000010', step: 10 }, model: 'm', problems: 2, samples: 4, n: 2, metrics: metrics(0.6), reward_errors: 0 },
      ],
      comparisons: [{ target: 'run-000010', baseline: 'base', problems: 2, diff: est(0.4), p_value: 0.25, permutations: 4, exact: true, wins: 2, losses: 0, ties: 0 }],
      problems: [
        { problem_id: 'p1', question: 'q', ground_truth: '1', targets: { base: { reward: 0, correct: 0, samples: 2 }, 'run-000010': { reward: 1, correct: 2, samples: 2 } } },
        { problem_id: 'p2', question: 'q', ground_truth: '1', targets: { 'run-000010': { reward: 0.5, correct: 1, samples: 2 } } },
      ],
    });
    const s = snapshotFromSummary('/w/evals/holdout', summary);
    assert.strictEqual(s.baseline, 0);
    assert.deepStrictEqual(s.metrics.map((m) => m.key), ['reward', 'pass@1', 'pass@2', 'stop_rate', 'completion_tokens']);
    assert.deepStrictEqual(s.targets[1]!.source, { kind: 'checkpoint', value: 'tinker://r/sampler_weights/000010' });
    assert.strictEqual(s.targets[1]!.step, 10);
    assert.strictEqual(s.targets[0]!.step, undefined);
    assert.deepStrictEqual(s.rewards, [[0, null], [1, 0.5]]);
    assert.strictEqual(s.comparisons[0], null);
    assert.deepStrictEqual(s.comparisons[1], { problems: 2, diff: { mean: 0.4, lo: 0.30000000000000004, hi: 0.5 }, p: 0.25, wins: 2, losses: 0, ties: 0 });
    assert.strictEqual(bestOf(s.metrics[0]!), 1);
    assert.strictEqual(bestOf(s.metrics.at(-1)!), undefined);
  });

  it("from summary.json: each target's sampling cost and tokens where the summary has them (older summaries have none)", () => {
    const target = (id: string, more: Record<string, unknown>) => ({ id, label: id, source: { kind: 'base', model: 'm' }, model: 'm', problems: 1, samples: 1, n: 1, metrics: {}, reward_errors: 0, ...more });
    const summary = EvalSummary.parse({
      kind: 'eval', version: 1, name: 'cost', spec_file: '/w/cost.eval.json', created_at: 'x', updated_at: 'x', complete: true, n: 1,
      bootstrap: { resamples: 10, seed: 0 }, baseline: 'a',
      targets: [target('a', { usage: { train: 0, prefill: 1200, cached_prefill: 300, sampled: 500 }, cost_usd: 0.0042 }), target('b', {})],
      comparisons: [],
      problems: [],
    });
    const s = EvalSnapshot.parse(JSON.parse(JSON.stringify(snapshotFromSummary('/w/evals/cost', summary))));
    assert.deepStrictEqual([s.targets[0]!.costUsd, s.targets[0]!.tokens], [0.0042, 2000]);
    assert.deepStrictEqual([s.targets[1]!.costUsd, s.targets[1]!.tokens], [undefined, undefined]);
  });

  it('sorts problems by regression against the baseline, disagreement and difficulty', () => {
    // baseline is target 0
    const rewards = [
      [1, 0.5, 0, 1],
      [0, 0.5, 0, 1],
      [1, 1, 0, null],
    ];
    assert.deepStrictEqual(sortProblems(rewards, 0, 'order', 4), [0, 1, 2, 3]);
    assert.deepStrictEqual(sortProblems(rewards, 0, 'regressed', 4).slice(0, 1), [0]);
    assert.deepStrictEqual(sortProblems(rewards, 0, 'disagreement', 4), [0, 1, 2, 3]);
    assert.deepStrictEqual(sortProblems(rewards, 0, 'hardest', 4), [2, 0, 1, 3]);
  });

  it('reads a results folder without a summary from its samples, and names a bad line', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'evalview-'));
    try {
      for (const id of ['base', '000010']) {
        await fs.mkdir(path.dirname(targetSamplesFile(dir, id)), { recursive: true });
        await fs.writeFile(targetSamplesFile(dir, id), JSON.stringify(sample('p1', 0, id === 'base' ? 0 : 1)) + '\n');
      }
      const s = await readEvalSnapshot(dir);
      assert.deepStrictEqual(s.targets.map((t) => t.id), ['000010', 'base']);
      assert.deepStrictEqual(s.metrics.find((m) => m.key === 'pass@1')!.values.map((v) => v!.mean), [1, 0]);
      await fs.appendFile(targetSamplesFile(dir, 'base'), '{"oops": 1}\n');
      await assert.rejects(readEvalSnapshot(dir), /targets\/base\/samples\.jsonl:2:/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('one stop rate: summary.json and the panel count a sample stopped when the sampler ended it (not at max_tokens), whatever the renderer parsed', () => {
    const rec = (problem: string, k: number, stop_reason: string, termination: string): SampleRecord => ({ ...sample(problem, k, 1), stop_reason, termination });
    // an end-of-sequence stop (eos) and a stop string the renderer did not parse (malformed) are stops; "length" is not
    const records = [rec('p1', 0, 'stop', 'eos'), rec('p1', 1, 'stop', 'malformed'), rec('p2', 0, 'length', 'malformed'), rec('p2', 1, 'stop', 'stop_sequence')];
    assert.deepStrictEqual(records.map(stoppedOnItsOwn), [true, true, false, true]);
    const { spec } = parseEvalSpecValue({ dataset: { path: 'd.jsonl' }, grader: { file: 'r.py' }, n: 2, max_tokens: 4, targets: ['m'] }, path.join(os.tmpdir(), 'stop.eval.json'));
    const summary = summarize({
      spec,
      specFile: path.join(os.tmpdir(), 'stop.eval.json'),
      targets: [{ id: 'm', label: 'm', source: { kind: 'base', model: 'm' }, model: 'm' }],
      baseline: 'm',
      problems: ['p1', 'p2'].map((id) => ({ id, messages: [{ role: 'user', content: `Q ${id}` }], groundTruth: '1' })),
      have: new Map([['m', new Map(records.map((r) => [`${r.problem_id}\u0000${r.traj_idx}`, r]))]]),
      resamples: 200,
    });
    const fromSamples = snapshotFromSamples({ name: 'stop', dir: '/tmp/stop', targets: [{ id: 'm', records }] });
    const panel = fromSamples.metrics.find((m) => m.key === 'stop_rate')!.values[0]!;
    assert.strictEqual(summary.targets[0]!.metrics.stop_rate!.value, 0.75);
    assert.strictEqual(panel.mean, 0.75);
    const fromSummary = snapshotFromSummary('/tmp/stop', summary).metrics.find((m) => m.key === 'stop_rate')!.values[0]!;
    assert.strictEqual(fromSummary.mean, 0.75);
  });
});
