// The evaluation results panel's data: the snapshot prepared from a results folder (per-problem
// means, metrics with bootstrap intervals, the baseline), the matrix's orders, the best of a column.
import * as assert from 'assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SampleRecord } from '../../../src/protocol/sampleSchema';
import { bestOf, sortProblems } from '../../../src/protocol/evalsProtocol';
import { bootstrapMean, buildEvalSnapshot, readEvalSnapshot, stepOfTarget, targetSamplesFile } from '../../../src/core/evals/resultsView';

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
  it('averages samples per problem and per target, with the baseline and intervals that contain the mean', () => {
    const base = [sample('p1', 0, 0), sample('p1', 1, 1), sample('p2', 0, 0), sample('p2', 1, 0)];
    const ckpt = [sample('p1', 0, 1), sample('p1', 1, 1), sample('p2', 0, 1), sample('p2', 1, 0, 'length')];
    const s = buildEvalSnapshot({ name: 'x', dir: '/tmp/x', targets: [{ id: 'base', records: base }, { id: '000080', records: ckpt }], baseline: '000080' });
    assert.deepStrictEqual(s.problems, ['p1', 'p2']);
    assert.deepStrictEqual(s.rewards, [[0.5, 0], [1, 0.5]]);
    assert.strictEqual(s.baseline, 1);
    assert.strictEqual(s.targets[1]!.step, 80);
    assert.strictEqual(s.targets[0]!.step, undefined);
    const reward = s.metrics.find((m) => m.key === 'reward')!;
    assert.strictEqual(reward.values[0]!.mean, 0.25);
    assert.strictEqual(reward.values[1]!.mean, 0.75);
    for (const v of reward.values) assert.ok(v!.lo <= v!.mean && v!.mean <= v!.hi);
    const stop = s.metrics.find((m) => m.key === 'stop_rate')!;
    assert.strictEqual(stop.values[1]!.mean, 0.75);
    assert.strictEqual(bestOf(reward), 1);
  });

  it('bootstraps a seeded 95 % interval: stable, and degenerate for constant values', () => {
    const values = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 1 : 0));
    const a = bootstrapMean(values, 7)!;
    assert.deepStrictEqual(bootstrapMean(values, 7), a);
    assert.strictEqual(a.mean, 0.25);
    // the normal approximation's half-width is 1.96·sqrt(.25·.75/200) ≈ 0.06
    assert.ok(a.hi - a.lo > 0.08 && a.hi - a.lo < 0.16, `${a.lo}..${a.hi}`);
    assert.deepStrictEqual(bootstrapMean([1, 1, 1], 3), { mean: 1, lo: 1, hi: 1 });
    assert.strictEqual(bootstrapMean([], 1), null);
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

  it('names a checkpoint target by its step', () => {
    assert.strictEqual(stepOfTarget('000080'), 80);
    assert.strictEqual(stepOfTarget('tinker://run-1/sampler_weights/000120'), 120);
    assert.strictEqual(stepOfTarget('step_40'), 40);
    assert.strictEqual(stepOfTarget('tinker-studio/arith-gpt'), undefined);
  });

  it('reads a results folder and names the unreadable lines', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'evalview-'));
    try {
      await fs.writeFile(path.join(dir, 'eval.json'), JSON.stringify({ name: 'holdout', baseline: 'base', grader: { correct_threshold: 0.9 } }));
      for (const [id, recs] of [['base', [sample('p1', 0, 0.8)]], ['000010', [sample('p1', 0, 1)]]] as const) {
        await fs.mkdir(path.dirname(targetSamplesFile(dir, id)), { recursive: true });
        await fs.writeFile(targetSamplesFile(dir, id), recs.map((r) => JSON.stringify(r)).join('\n') + '\n' + (id === 'base' ? '{"oops": 1}\n' : ''));
      }
      const { snapshot } = await readEvalSnapshot(dir);
      assert.strictEqual(snapshot.name, 'holdout');
      assert.deepStrictEqual(snapshot.targets.map((t) => t.id), ['000010', 'base']);
      assert.strictEqual(snapshot.baseline, 1);
      // pass@1 uses the spec's threshold: 0.8 < 0.9
      assert.deepStrictEqual(snapshot.metrics.find((m) => m.key === 'pass@1')!.values.map((v) => v!.mean), [1, 0]);
      assert.strictEqual(snapshot.notes.length, 1);
      assert.match(snapshot.notes[0]!, /^targets\/base\/samples\.jsonl:2: /);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
