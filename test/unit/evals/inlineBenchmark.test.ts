// A public benchmark as an inline evaluator (`evals: [{"benchmark": "gsm8k", "every": N, "max_problems": M}]`):
// the schema's rules, and a GRPO run on the embedded engine (real HTTP) whose evaluator reads GSM8K's
// rows from a stand-in of the datasets-server through the real hub loader, samples a seeded subset at
// the steps i % every == 0, grades with the benchmark's grader, and logs test/<name>/… next to the reward.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { GrpoSpecInput, parseGrpoSpecText } from '../../../src/core/grpo/spec';
import { startGrpoRun } from '../../../src/core/grpo/start';
import { parseSftSpecText } from '../../../src/core/sft/spec';
import { RunSpecError } from '../../../src/core/spec/text';
import { benchmarkDefinition } from '../../../src/core/evals/benchmarks/registry';
import { loadBenchmarkProblems } from '../../../src/core/evals/benchmarks/load';
import { benchmarkRewardRunner } from '../../../src/core/evals/inline';
import { readMetricsLines, writeReward } from '../grpo/engineFixture';
import { startCountingEngine, type CountingEngine } from './engineFixture';
import { DatasetsServerStandIn } from './hubStandIn';

function problemsOf(parse: () => unknown): string[] {
  try {
    parse();
    return [];
  } catch (err) {
    if (err instanceof RunSpecError) return err.problems;
    throw err;
  }
}
const grpo = (evals: unknown[], extra: Record<string, unknown> = {}) => ({ model: 'tinker-studio/arith-gpt', max_tokens: 6, iterations: 3, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' }, evals, ...extra }) as GrpoSpecInput;
const grpoProblems = (evals: unknown[], extra?: Record<string, unknown>) => problemsOf(() => parseGrpoSpecText(JSON.stringify(grpo(evals, extra)), 'a.grpo.json'));
const sftProblems = (evals: unknown[]) => problemsOf(() => parseSftSpecText(JSON.stringify({ model: 'tinker-studio/arith-gpt', dataset: { path: 'chats.jsonl' }, evals }), 'a.sft.json'));

describe('a benchmark as an inline evaluator', () => {
  it('the schema: a benchmark instead of a dataset and a grader, in GRPO and SFT specs alike', () => {
    assert.deepStrictEqual(grpoProblems([{ name: 'gsm8k', benchmark: 'gsm8k', every: 5, max_problems: 20 }]), []);
    // no reward file in the spec (a distillation): a benchmark still grades itself
    const noReward = parseGrpoSpecText(JSON.stringify({ ...grpo([{ name: 'gsm8k', benchmark: 'gsm8k', every: 5 }]), reward: undefined, teacher: { model: 'tinker-studio/arith-gpt' } }), 'a.grpo.json');
    assert.strictEqual(noReward.evals![0]!.benchmark, 'gsm8k');
    assert.deepStrictEqual(sftProblems([{ name: 'math', benchmark: 'math500', every: 10 }]), [], 'an SFT sampling evaluator needs no grader or max_tokens with a benchmark');
    assert.deepStrictEqual(grpoProblems([{ name: 'x', every: 5 }]), ['a.grpo.json: evals[0].dataset: required: the problems to evaluate (or "benchmark": a public benchmark)']);
    assert.match(grpoProblems([{ name: 'x', benchmark: 'gsm8k', dataset: { path: 'h.jsonl' }, every: 5 }]).join('\n'), /evals\[0\]\.benchmark: give "dataset" or "benchmark", not both/);
    assert.match(grpoProblems([{ name: 'x', benchmark: 'gsm8k', grader: { file: 'g.py' }, every: 5 }]).join('\n'), /evals\[0\]\.grader: not used with a benchmark/);
    assert.match(sftProblems([{ name: 'x', benchmark: 'gsm8k', kind: 'nll', every: 5 }]).join('\n'), /evals\[0\]\.kind: a benchmark is sampled and graded/);
    assert.match(grpoProblems([{ name: 'x', benchmark: 'gsm9k', every: 5 }]).join('\n'), /evals\[0\]\.benchmark:/);
  });

  describe('on the embedded engine, GSM8K from the datasets-server stand-in', function () {
    this.timeout(300_000);
    let dir: string;
    let engine: CountingEngine;
    let hub: DatasetsServerStandIn;
    const before0 = process.env.TINKER_DATASETS_SERVER;

    before(async () => {
      engine = await startCountingEngine('tinker-inline-bench-');
      dir = engine.dir;
      hub = await new DatasetsServerStandIn().start();
      // where the hub loader reads rows (its documented override)
      process.env.TINKER_DATASETS_SERVER = hub.url;
      fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n');
      writeReward(dir);
    });
    after(async () => {
      if (before0 === undefined) delete process.env.TINKER_DATASETS_SERVER;
      else process.env.TINKER_DATASETS_SERVER = before0;
      await hub?.stop();
      await engine?.close();
    });

    it('logs test/gsm8k/… at the steps i % every == 0 on a seeded subset, each sample graded by the GSM8K grader', async () => {
      const specFile = path.join(dir, 'bench.grpo.json');
      fs.writeFileSync(
        specFile,
        JSON.stringify({
          model: 'tinker-studio/arith-chat',
          lora_rank: 4,
          learning_rate: 0.001,
          groups_per_batch: 2,
          group_size: 2,
          max_tokens: 4,
          iterations: 5,
          save_every: 0,
          eval_every: 0,
          sampling_seed: 3,
          dataset: { path: 'train.jsonl' },
          reward: { file: 'reward.py', workers: 1 },
          evals: [{ name: 'gsm8k', benchmark: 'gsm8k', every: 2, n: 2, max_problems: 3 }],
        }),
      );
      const cacheDir = path.join(dir, 'cache');
      const r = await startGrpoRun({ specFile, runsDir: path.join(dir, 'runs'), connect: () => engine.connect(), cacheDir });
      assert.strictEqual(r.status, 'completed', r.error);
      const rows = readMetricsLines(r.runDir);
      const stepsWith = (key: string) => rows.filter((l) => typeof l[key] === 'number').map((l) => l.step);
      for (const k of ['test/gsm8k/env/all/reward/total', 'test/gsm8k/env/all/pass@1', 'test/gsm8k/env/all/pass@2']) assert.deepStrictEqual(stepsWith(k), [0, 2, 4], k);
      assert.deepStrictEqual(stepsWith('env/all/reward/total'), [0, 1, 2, 3, 4], 'the training reward in the same rows: the two chart together');
      for (const l of rows.filter((x) => x.step % 2 === 0)) assert.strictEqual(l['test/gsm8k/env/all/total_episodes'], 3 * 2, 'max_problems 3, n = 2');

      // the seeded subset: the benchmark eval's first 3 problems, the same at every step
      const def = benchmarkDefinition('gsm8k');
      const subset = await loadBenchmarkProblems(def, { cacheDir, maxProblems: 3 });
      const ids = subset.problems.map((p) => p.id).sort();
      for (const step of [0, 2, 4]) {
        const recs = fs
          .readFileSync(path.join(r.runDir, `iteration_${String(step).padStart(6, '0')}`, 'eval_gsm8k_samples.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((x) => JSON.parse(x) as { problem_id: string; content: string; reward: number; ground_truth: string });
        assert.deepStrictEqual([...new Set(recs.map((x) => x.problem_id))].sort(), ids, `step ${step}: the same seeded subset`);
        for (const rec of recs) assert.strictEqual(rec.reward, def.grade(rec.content, subset.byId.get(rec.problem_id)!).score, `step ${step}: ${rec.problem_id} graded by GSM8K's grader`);
      }
      // the evaluator's grader: a case is its problem's ground truth (the answer's text) and a completion
      const runner = benchmarkRewardRunner(def, subset.byId.values());
      const [p0, p1] = subset.problems;
      const right = (p: typeof p0) => `The answer is \\boxed{${String(subset.byId.get(p!.id)!.answer)}}`;
      const out = await runner.score([
        { completion: right(p0), groundTruth: p0!.groundTruth },
        { completion: right(p0), groundTruth: p1!.groundTruth },
        { completion: right(p1), groundTruth: p1!.groundTruth },
        { completion: '42', groundTruth: 'no such answer' },
      ]);
      assert.deepStrictEqual(out.map((o) => o.reward), [1, 0, 1, 0]);
      assert.ok(!out[3]!.ok && /benchmark gsm8k: no problem with the answer/.test(out[3]!.error.message));
    });
  });
});
