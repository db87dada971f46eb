// Benchmarks as eval specs: the spec's rules and defaults, the problems loaded through the project's
// hub loader from a stand-in of the datasets-server (the real download code, its cache, the offline
// error), and a benchmark eval run on the embedded engine (real HTTP), resumed without re-sampling.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RunSpecError } from '../../../src/core/spec/text';
import Ajv from 'ajv';
import { evalSpecJsonSchema, parseEvalSpecValue } from '../../../src/core/evals/spec';
import { benchmarkDefinition } from '../../../src/core/evals/benchmarks/registry';
import { benchmarkCacheFile, loadBenchmarkProblems } from '../../../src/core/evals/benchmarks/load';
import { expectedTokens } from '../../../src/core/evals/benchmarkEval';
import { runEval } from '../../../src/core/evals/runEval';
import { readEvalResults } from '../../../src/core/evals/results';
import { DatasetsServerStandIn } from './hubStandIn';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const problems = (e: unknown) => (e instanceof RunSpecError ? e.problems.join('\n') : String(e));

describe('benchmark eval specs', () => {
  it('fill the cookbook’s defaults under the spec’s own fields', () => {
    const d = parseEvalSpecValue({ benchmark: 'gsm8k', targets: ['m'] }, '/w/g.eval.json').spec;
    assert.deepStrictEqual([d.temperature, d.max_tokens, d.n, d.system_prompt], [0.6, 32768, 1, 'Put your final answer in \\boxed{}.']);
    const o = parseEvalSpecValue({ benchmark: 'gsm8k', targets: ['m'], temperature: 0, max_tokens: 64, n: 4, system_prompt: 'Be brief.', max_problems: 5 }, '/w/g.eval.json').spec;
    assert.deepStrictEqual([o.temperature, o.max_tokens, o.n, o.system_prompt, o.max_problems], [0, 64, 4, 'Be brief.', 5]);
    assert.strictEqual(parseEvalSpecValue({ benchmark: 'mmlu_redux', targets: ['m'] }, '/w/m.eval.json').spec.system_prompt, undefined);
  });

  it('refuse a dataset, a grader or an env next to a benchmark, and max_problems without one, naming the field', () => {
    const err = (v: Record<string, unknown>) => {
      try {
        parseEvalSpecValue(v, '/w/x.eval.json');
      } catch (e) {
        return problems(e);
      }
      return 'accepted';
    };
    assert.match(err({ benchmark: 'gsm8k', targets: ['m'], dataset: { path: 'a.jsonl' } }), /x\.eval\.json: dataset: not with "benchmark" \(the benchmark brings its problems\)/);
    assert.match(err({ benchmark: 'gsm8k', targets: ['m'], grader: { file: 'r.py' } }), /grader: not with "benchmark" \(the benchmark grades its own answers\)/);
    assert.match(err({ benchmark: 'gsm8k', targets: ['m'], env: { file: 'e.py' } }), /env: not with "benchmark"/);
    assert.match(err({ dataset: { path: 'a.jsonl' }, grader: { file: 'r.py' }, max_tokens: 8, targets: ['m'], max_problems: 3 }), /max_problems: only with "benchmark" \(with a dataset, give dataset\.max_problems\)/);
    assert.match(err({ benchmark: 'gsm9k', targets: ['m'] }), /benchmark: .*gsm8k/);
  });
});

describe('the eval spec’s JSON schema (the editor’s checks) with a benchmark', () => {
  it('takes a benchmark without a dataset or max_tokens, and refuses a dataset, grader or env beside it', () => {
    const valid = new Ajv({ strict: false, allErrors: true }).compile(evalSpecJsonSchema());
    assert.ok(valid({ benchmark: 'gsm8k', targets: ['m'], max_problems: 5 }), JSON.stringify(valid.errors));
    for (const extra of [{ dataset: { path: 'a.jsonl' } }, { grader: { file: 'r.py' } }, { env: { file: 'e.py' } }]) assert.ok(!valid({ benchmark: 'gsm8k', targets: ['m'], ...extra }), JSON.stringify(extra));
    assert.ok(!valid({ benchmark: 'gsm9k', targets: ['m'] }));
    assert.ok(!valid({ grader: { file: 'r.py' }, targets: ['m'] }), 'without a benchmark, a dataset and max_tokens are still required');
  });
});

describe('benchmark problems from a stand-in of the Hugging Face datasets-server', () => {
  let hub: DatasetsServerStandIn;
  let cacheDir: string;
  beforeEach(async () => {
    hub = await new DatasetsServerStandIn().start();
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-bench-cache-'));
  });
  afterEach(async () => {
    await hub.stop();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it('reads each benchmark’s rows as the cookbook does (prompt, reference answer, rows left out)', async () => {
    const load = (name: Parameters<typeof benchmarkDefinition>[0], systemPrompt?: string) =>
      loadBenchmarkProblems(benchmarkDefinition(name), { cacheDir, endpoint: hub.url, ...(systemPrompt ? { systemPrompt } : {}) });
    const g = await load('gsm8k', 'Put your final answer in \\boxed{}.');
    assert.strictEqual(g.problems.length, 60, 'the "main" config of two');
    const g0 = g.problems.find((p) => p.id === 'test-0')!;
    assert.deepStrictEqual(g0.messages.map((m) => m.role), ['system', 'user']);
    assert.match(String(g0.messages[1]!.content), /^What is \d+ \+ \d+\?$/);
    const [x, y] = String(g0.messages[1]!.content).match(/\d+/g)!.map(Number);
    assert.strictEqual(g.byId.get('test-0')!.answer, String(x! + y!));
    const m = await load('math500');
    assert.deepStrictEqual(m.byId.get('test/algebra/2.json'), { id: 'test/algebra/2.json', prompt: 'Simplify $\\sqrt{18}$. Put your final answer in \\boxed{}.', answer: '3\\sqrt{2}' });
    const a = await load('aime_2025');
    assert.strictEqual(a.byId.get('problem-2')!.answer, 204);
    assert.match(a.byId.get('problem-2')!.prompt, /^Find 100 \+ 104\.\n\nThis is an AIME problem\. The answer is an integer from 000 to 999\./);
    const r = await load('mmlu_redux');
    assert.strictEqual(r.problems.length, 30, 'one "ok" question per subject; the wrong_groundtruth ones are left out');
    assert.deepStrictEqual(r.byId.get('anatomy-0'), { id: 'anatomy-0', prompt: 'Which is 2 + 2? (anatomy)\n\n(A) 3\n(B) 4\n(C) 5\n(D) 6\n\nAnswer with just the letter (A, B, C, or D).', answer: 'B' });
    const i = await load('ifeval');
    assert.strictEqual(i.problems.length, 5, 'the five IFEval rows of the fixture');
    for (const p of i.byId.values()) assert.ok(Array.isArray((p.answer as { instruction_id_list?: unknown }).instruction_id_list), `${p.id}: its instructions are the grader's answer`);
  });

  it('takes a seeded subset (the same problems every time; a smaller one is a prefix of a larger), and caches: a second load asks nothing', async () => {
    const def = benchmarkDefinition('gsm8k');
    const ten = await loadBenchmarkProblems(def, { cacheDir, endpoint: hub.url, maxProblems: 10 });
    const asked = hub.requests.length;
    assert.ok(asked > 0);
    const again = await loadBenchmarkProblems(def, { cacheDir, endpoint: hub.url, maxProblems: 10 });
    const five = await loadBenchmarkProblems(def, { cacheDir, endpoint: hub.url, maxProblems: 5 });
    assert.strictEqual(hub.requests.length, asked, 'read from the cache');
    assert.deepStrictEqual(again.problems.map((p) => p.id), ten.problems.map((p) => p.id));
    assert.deepStrictEqual(five.problems.map((p) => p.id), ten.problems.slice(0, 5).map((p) => p.id));
    assert.notDeepStrictEqual(ten.problems.map((p) => p.id), Array.from({ length: 10 }, (_, i) => `test-${i}`), 'shuffled, not the first rows');
    assert.strictEqual(ten.available, 60);
  });

  it('offline with nothing cached: says where to put the rows by hand; rows put there load without the network', async () => {
    const def = benchmarkDefinition('aime_2025');
    await hub.stop();
    const err = await loadBenchmarkProblems(def, { cacheDir, endpoint: hub.url }).then(() => undefined, (e: Error) => e);
    const file = benchmarkCacheFile(cacheDir, def, undefined);
    assert.ok(err, 'must fail offline');
    assert.ok(err.message.includes(`put the rows by hand at ${file}`), err.message);
    assert.match(err.message, /cannot reach the Hugging Face datasets-server/);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ version: 1, dataset: 'MathArena/aime_2025', config: 'default', split: 'train', rows: [{ rowIdx: 0, row: { problem_idx: 1, problem: 'Find 1 + 1.', answer: 2 }, truncated: [] }] }));
    const got = await loadBenchmarkProblems(def, { cacheDir, endpoint: hub.url });
    assert.deepStrictEqual(got.problems.map((p) => p.id), ['problem-1']);
    hub = await new DatasetsServerStandIn().start(); // afterEach stops it
  });
});

describe('expected tokens of a benchmark eval', () => {
  it('counts every sample’s prompt exactly and at most max_tokens sampled, clamped to what the context leaves', () => {
    assert.deepStrictEqual(expectedTokens([10, 20, 250], { n: 2, maxTokens: 100, contextLength: 256 }), {
      problems: 3,
      samples: 6,
      prompt_tokens: 2 * (10 + 20 + 250),
      max_sampled_tokens: 2 * (100 + 100 + 6),
      max_tokens_range: [6, 100],
      clamped: 1,
    });
    assert.strictEqual(expectedTokens([10], { n: 1, maxTokens: 100, targets: 3 }).max_sampled_tokens, 300);
  });
});

describe('a benchmark eval on the embedded engine (arith-chat, GSM8K fixtures)', function () {
  this.timeout(300_000);
  let engine: CountingEngine;
  let hub: DatasetsServerStandIn;
  before(async () => {
    engine = await startCountingEngine('tinker-bench-eval-');
    hub = await new DatasetsServerStandIn().start();
  });
  after(async () => {
    await hub.stop();
    await engine.close();
  });

  it('samples each problem once, grades it with GSM8K’s grader, reports the clamp and the expected tokens; a re-run samples nothing', async () => {
    const specFile = path.join(engine.dir, 'gsm8k.eval.json');
    fs.writeFileSync(specFile, JSON.stringify({ benchmark: 'gsm8k', max_problems: 6, seed: 3, targets: ['tinker-studio/arith-chat'] }));
    const lines: string[] = [];
    const run = () => runEval({ specFile, connect: () => engine.connect(), cacheDir: engine.cacheDir(), datasetsServer: hub.url, log: (l) => lines.push(l), resamples: 200 });
    const summary = await run();
    assert.strictEqual(engine.served.requests, 6);
    assert.strictEqual(summary.grading, 'benchmark');
    assert.strictEqual(summary.benchmark, 'gsm8k');
    assert.strictEqual(summary.complete, true);
    assert.strictEqual(summary.targets[0]!.problems, 6);
    assert.ok(lines.some((l) => /^tinker-studio\/arith-chat: expected tokens: [\d,]+ prompt \(exact\) \+ at most [\d,]+ sampled, 6 samples; max_tokens 32768 clamped to \d+(–\d+)? on 6 of 6 problems: what the context of tinker-studio\/arith-chat \(256 tokens\) leaves after the prompt$/.test(l)), lines.join('\n'));
    const res = readEvalResults(path.join(engine.dir, 'evals', 'gsm8k'));
    const recs = fs.readFileSync(path.join(engine.dir, 'evals', 'gsm8k', 'targets', 'tinker-studio_arith-chat', 'samples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { content: string; reward: number; ground_truth: string; completion_tokens: number[]; extracted?: string });
    assert.strictEqual(recs.length, 6);
    const def = benchmarkDefinition('gsm8k');
    for (const r of recs) {
      const g = def.grade(r.content, { id: '', prompt: '', answer: r.ground_truth });
      assert.deepStrictEqual([r.reward, r.extracted], [g.score, g.extracted], 'the reward is GSM8K’s grade of the content, with what it read');
    }
    assert.ok(recs.every((r) => r.completion_tokens.length <= 256));
    assert.strictEqual(res.summary?.problems.length, 6);
    const again = await run();
    assert.strictEqual(engine.served.requests, 6, 'nothing sampled twice');
    assert.deepStrictEqual(again.targets[0]!.metrics.reward, summary.targets[0]!.metrics.reward);
  });
});
