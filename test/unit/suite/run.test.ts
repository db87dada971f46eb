// The suite runner on the embedded engine (real HTTP, the real compute backend, real Python graders):
// a two-entry suite on the base model checked against its evals' summaries, sampling shared between
// entries that differ only in grader, an interrupted run re-run sampling nothing twice (requests counted
// at the engine's compute backend), the suite version, and two checkpoints compared through the gate.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { readEvalResults, readTargetSamples } from '../../../src/core/evals/results';
import { targetIdOf } from '../../../src/core/evals/runEval';
import { compareSuiteResults, formatSuiteComparison, formatSuiteResult } from '../../../src/core/suite/compare';
import { runSuite, type SuiteRunEnv } from '../../../src/core/suite/run';
import { loadSuite, readSuiteResult, sha256File, suiteResultDir } from '../../../src/core/suite/store';
import { startCountingEngine, type CountingEngine } from '../evals/engineFixture';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');
const BASE = 'tinker-studio/arith-gpt';

// a second grader: right within one (a sample right by reward.py is right here too)
const WITHIN_ONE = `import re
def compute_reward(completion, ground_truth):
    numbers = re.findall(r"-?\\d+", completion)
    return 1.0 if numbers and abs(int(numbers[-1]) - int(ground_truth)) <= 1 else 0.0
`;

describe('suite run on the engine', function () {
  this.timeout(180_000);
  let engine: CountingEngine;
  let env: SuiteRunEnv;

  before(async () => {
    engine = await startCountingEngine('tinker-suite-');
    env = { connect: () => engine.connect(), cacheDir: engine.cacheDir() };
  });
  after(async () => {
    await engine?.close();
  });

  /** A folder with the arithmetic holdout, its grader, a within-one grader, product.eval.json and the suite. */
  function suiteFolder(name: string, sampling: Record<string, unknown>, suite?: (evalSpec: Record<string, unknown>) => unknown): string {
    const d = path.join(engine.dir, name);
    fs.mkdirSync(d, { recursive: true });
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(d, f));
    fs.writeFileSync(path.join(d, 'within_one.py'), WITHIN_ONE);
    const evalSpec = { dataset: { path: 'holdout.jsonl', max_problems: 6 }, grader: { file: 'reward.py' }, max_tokens: 6, renderer: 'chatml', targets: [BASE], ...sampling };
    fs.writeFileSync(path.join(d, 'product.eval.json'), JSON.stringify(evalSpec, null, 2));
    const s = suite?.(evalSpec) ?? {
      name: 'arith',
      entries: [
        { eval: 'product.eval.json', layer: 'product' },
        { name: 'within-one', eval: { ...evalSpec, grader: { file: 'within_one.py' } }, layer: 'benchmark', metric: 'reward', gate: { min: 0 } },
      ],
    };
    const file = path.join(d, 'arith.suite.json');
    fs.writeFileSync(file, JSON.stringify(s, null, 2));
    return file;
  }

  let uninterrupted: Awaited<ReturnType<typeof runSuite>>;

  it('runs every entry on the base model: result.json agrees with the evals, and entries that differ only in grader sample once', async () => {
    const file = suiteFolder('two', { n: 2, temperature: 1, seed: 7 });
    const s0 = engine.served.samples;
    const progress: string[] = [];
    const r = await runSuite({ suiteFile: file, checkpoint: BASE, onProgress: (_d, _t, what) => progress.push(what) }, env);
    assert.strictEqual(engine.served.samples - s0, 12, '6 problems × n = 2, once for both entries');
    assert.ok(r.complete);
    assert.deepStrictEqual(r.checkpoint, { label: BASE, path: BASE, model: BASE });
    const suite = await loadSuite(file);
    assert.deepStrictEqual(await readSuiteResult(suite, BASE), r, 'result.json is what runSuite returned');
    assert.deepStrictEqual(r.entries.map((e) => [e.name, e.layer, e.metric, e.goal]), [['product', 'product', 'pass@1', 'maximize'], ['within-one', 'benchmark', 'reward', 'maximize']]);
    const dir = suiteResultDir(suite, BASE);
    const id = targetIdOf(BASE);
    const holdout = await sha256File(path.join(path.dirname(file), 'holdout.jsonl'));
    for (const e of r.entries) {
      const summary = readEvalResults(path.join(dir, e.results_dir!)).summary;
      const t = summary.targets.find((x) => x.id === id)!;
      assert.deepStrictEqual(e.estimate, e.metric === 'reward' ? t.metrics.reward : t.metrics.pass_at['pass@1']);
      assert.strictEqual(e.n, 6);
      const expected = Object.fromEntries(summary.problems.map((p) => [p.problem_id, e.metric === 'reward' ? p.targets[id]!.reward : p.targets[id]!.correct / p.targets[id]!.samples]));
      assert.deepStrictEqual(e.per_item, expected);
      assert.deepStrictEqual(e.data.find((d) => d.file === 'holdout.jsonl'), { file: 'holdout.jsonl', ...holdout });
      assert.match(e.spec_sha256, /^[0-9a-f]{64}$/);
    }
    // the within-one entry graded the product entry's samples with its own grader
    const exact = readTargetSamples(path.join(dir, 'product'), id);
    const near = readTargetSamples(path.join(dir, 'within-one'), id);
    const byKey = (xs: typeof exact) => new Map(xs.map((x) => [`${x.problem_id}#${x.traj_idx}`, x]));
    const nearBy = byKey(near);
    assert.strictEqual(near.length, 12);
    for (const x of exact) {
      const y = nearBy.get(`${x.problem_id}#${x.traj_idx}`)!;
      assert.deepStrictEqual(y.completion_tokens, x.completion_tokens);
      assert.ok(y.reward >= x.reward, 'right is right within one');
    }
    assert.ok(progress.includes('product (1/2)') && progress.includes('within-one (2/2)'), progress.join(', '));
    assert.match(formatSuiteResult(r), /^benchmark\s+within-one\s+reward\s+\d\.\d{3}/m);
    // a finished suite re-run asks for nothing
    const again = engine.served.requests;
    await runSuite({ suiteFile: file, checkpoint: BASE }, env);
    assert.strictEqual(engine.served.requests, again);
    uninterrupted = r;
  });

  it('an interrupted suite run, re-run, samples nothing twice and equals an uninterrupted one', async () => {
    const file = suiteFolder('cut', { n: 2, temperature: 1, seed: 7, concurrency: 1 });
    const ac = new AbortController();
    const r0 = engine.served.requests;
    const partial = await runSuite({ suiteFile: file, checkpoint: BASE, signal: ac.signal, onProgress: (done) => done >= 5 && ac.abort() }, env);
    assert.strictEqual(partial.complete, false);
    assert.strictEqual(partial.entries.length, 0, 'the entry in flight is not in the result');
    const cut = engine.served.requests - r0;
    assert.ok(cut >= 5 && cut < 12, `stopped part way (${cut} requests)`);
    assert.strictEqual((await readSuiteResult(await loadSuite(file), BASE))?.complete, false, 'result.json says it did not finish');
    const full = await runSuite({ suiteFile: file, checkpoint: BASE }, env);
    assert.strictEqual(engine.served.requests - r0, 12, 'every sample requested once over both runs');
    assert.ok(full.complete);
    assert.deepStrictEqual(full.entries.map((e) => [e.name, e.estimate, e.per_item]), uninterrupted.entries.map((e) => [e.name, e.estimate, e.per_item]));
  });

  it("the suite version follows the file's content, not its spacing or key order", async () => {
    const file = suiteFolder('version', { n: 1 });
    const v0 = (await loadSuite(file)).version;
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as { name: string; entries: Record<string, unknown>[] };
    const reordered = { entries: value.entries.map((e) => Object.fromEntries(Object.entries(e).reverse())), name: value.name };
    fs.writeFileSync(file, JSON.stringify(reordered, null, 7));
    const moved = await loadSuite(file);
    assert.strictEqual(moved.version, v0);
    value.entries[0]!['gate'] = { non_inferiority: 0.05 };
    fs.writeFileSync(file, JSON.stringify(value));
    const changed = await loadSuite(file);
    assert.notStrictEqual(changed.version, v0);
    assert.notStrictEqual(suiteResultDir(changed, BASE), suiteResultDir(moved, BASE), 'a changed suite keeps its results apart');
  });

  it('compares two checkpoints over the suite: paired differences and the gate with the second as production', async () => {
    const service = await engine.connect();
    const tc = await service.createLoraTrainingClient(BASE, { rank: 4 });
    const saved = (await (await tc.saveWeightsForSampler('suite-test')).result()).path!;
    service.close();
    const file = suiteFolder('compare', { n: 1, temperature: 0 }, (evalSpec) => ({
      entries: [
        { eval: 'product.eval.json', layer: 'product', gate: { non_inferiority: 0.02 } },
        { name: 'floor', eval: { ...evalSpec, grader: { file: 'within_one.py' } }, layer: 'training', metric: 'reward', gate: { min: 1.5 } },
      ],
    }));
    const a = await runSuite({ suiteFile: file, checkpoint: saved }, env);
    assert.strictEqual(a.checkpoint.model, BASE, "the sampler path's base model, asked of the server");
    const b = await runSuite({ suiteFile: file, checkpoint: BASE }, env);
    const suite = await loadSuite(file);
    const c = compareSuiteResults(suite.entries, a, b);
    assert.deepStrictEqual(c.rows.map((r) => r.entry), ['floor', 'product'], 'in layer order: training, then product');
    // a fresh LoRA adapter starts at zero: greedy samples equal the base model's, the difference is 0
    for (const r of c.rows) {
      assert.strictEqual(r.diff!.value, 0);
      assert.strictEqual(r.paired_items, 6);
    }
    const product = c.rows.find((r) => r.entry === 'product')!;
    assert.deepStrictEqual([product.verdict.passed, product.verdict.checks.map((k) => k.rule)], [true, ['non_inferiority']]);
    const floor = c.rows.find((r) => r.entry === 'floor')!;
    assert.deepStrictEqual([floor.verdict.passed, floor.verdict.checks.map((k) => [k.rule, k.passed])], [false, [['min', false]]]);
    assert.strictEqual(c.passed, false);
    const text = formatSuiteComparison(c);
    assert.match(text, /^product\s.*non-inferiority δ 0\.02\s+pass$/m);
    assert.match(text, /^training\s+floor\s.*≥ 1\.5\s+FAIL$/m);
    assert.match(text, /gate: fails\n {2}floor: reward .* < 1\.5 \(floor\)/);
  });
});
