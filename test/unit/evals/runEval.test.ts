// The eval runner on the embedded engine (real HTTP, the real compute backend, the real Python
// grader): the minimal spec as written next to the arithmetic example, per-problem pairing,
// and resume: an interrupted eval re-run samples only what is missing (requests counted at the
// engine's compute backend) and equals an uninterrupted one.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { loadEvalProblems, runEval } from '../../../src/core/evals/runEval';
import { mulberry32, shuffled } from '../../../src/core/data/prng';
import { readEvalResults, readTargetSamples } from '../../../src/core/evals/results';
import { evalSpecJsonSchema, parseEvalSpecFile } from '../../../src/core/evals/spec';
import { exportInspectLogs } from '../../../src/core/evals/inspectLog';
import { formatEvalTable } from '../../../src/core/evals/table';
import { bootstrapMean } from '../../../src/core/evals/stats';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');

describe('eval runner on the engine', function () {
  this.timeout(120_000);
  let engine: CountingEngine;
  let dir: string;
  let served: CountingEngine['served'];

  before(async () => {
    engine = await startCountingEngine('tinker-eval-');
    ({ dir, served } = engine);
  });
  after(async () => {
    await engine?.close();
  });

  const connect = () => engine.connect();
  const cacheDir = () => engine.cacheDir();

  function exampleCopy(name: string, spec: unknown): string {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true });
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(d, f));
    const file = path.join(d, 'holdout.eval.json');
    fs.writeFileSync(file, typeof spec === 'string' ? spec : JSON.stringify(spec));
    return file;
  }

  it('runs the issue\'s minimal spec as written next to the arithmetic example', async () => {
    const text = `{"dataset": {"path": "holdout.jsonl", "prompt_field": "question", "ground_truth_field": "answer", "max_problems": 40},
 "grader": {"file": "reward.py"}, "n": 4, "temperature": 1, "max_tokens": 6, "backend": "local",
 "targets": ["tinker-studio/arith-gpt"]}`;
    const file = exampleCopy('minimal', text);
    const before = served.samples;
    const summary = await runEval({ specFile: file, connect, cacheDir: cacheDir() });
    assert.strictEqual(served.samples - before, 160, '40 problems × n = 4');
    const res = readEvalResults(path.join(path.dirname(file), 'evals', 'holdout'));
    assert.deepStrictEqual(res.summary, summary);
    const t = summary.targets[0]!;
    assert.strictEqual(t.problems, 40);
    assert.deepStrictEqual(Object.keys(t.metrics.pass_at!), ['pass@1', 'pass@2', 'pass@3', 'pass@4']);
    const samples = readTargetSamples(res.dir, t.id);
    assert.strictEqual(samples.length, 160);
    const meanReward = samples.reduce((s, r) => s + r.reward, 0) / 160;
    assert.ok(Math.abs(t.metrics.reward!.value - meanReward) < 1e-12);
    assert.ok(t.metrics.reward!.lo! <= t.metrics.reward!.value && t.metrics.reward!.value <= t.metrics.reward!.hi!);
    assert.strictEqual(t.metrics.pass_at!['pass@1']!.value, samples.filter((r) => r.reward >= 0.5).length / 160);
    // 0/1 rewards: reward and pass@1 are the same per-problem quantity, so one resampling gives one interval
    assert.deepStrictEqual(t.metrics.pass_at!['pass@1'], t.metrics.reward);
    assert.strictEqual(summary.problems.length, 40);
    assert.ok(summary.complete);
  });

  it('an interrupted eval, re-run, samples only the missing samples and equals an uninterrupted one', async () => {
    const spec = {
      dataset: { path: 'holdout.jsonl', max_problems: 6 },
      grader: { file: 'reward.py' },
      n: 2,
      temperature: 1,
      max_tokens: 6,
      seed: 11,
      concurrency: 1,
      targets: ['tinker-studio/arith-gpt'],
    };
    const whole = exampleCopy('whole', spec);
    const r0 = served.requests;
    const a = await runEval({ specFile: whole, connect, cacheDir: cacheDir() });
    assert.strictEqual(served.requests - r0, 12);

    const cut = exampleCopy('cut', spec);
    const ac = new AbortController();
    const r1 = served.requests;
    await assert.rejects(runEval({ specFile: cut, connect, cacheDir: cacheDir(), signal: ac.signal, onProgress: (p) => p.done >= 5 && ac.abort() }));
    assert.strictEqual(served.requests - r1, 5, 'stopped after the fifth sample');
    const partial = readEvalResults(path.join(path.dirname(cut), 'evals', 'holdout')).summary;
    assert.strictEqual(partial.complete, false);
    const r2 = served.requests;
    const progress: number[] = [];
    const b = await runEval({ specFile: cut, connect, cacheDir: cacheDir(), onProgress: (p) => progress.push(p.done) });
    assert.strictEqual(served.requests - r2, 7, 'only the 7 missing samples are requested');
    assert.strictEqual(progress[0], 5);
    const again = served.requests;
    await runEval({ specFile: cut, connect, cacheDir: cacheDir() });
    assert.strictEqual(served.requests, again, 'a complete eval asks for nothing');

    const key = (r: { problem_id: string; traj_idx: number }) => `${r.problem_id}#${r.traj_idx}`;
    const strip = (dirOf: string) =>
      readTargetSamples(path.join(path.dirname(dirOf), 'evals', 'holdout'), a.targets[0]!.id)
        .map((r) => ({ k: key(r), c: r.completion_tokens, rw: r.reward }))
        .sort((x, y) => x.k.localeCompare(y.k));
    assert.deepStrictEqual(strip(cut), strip(whole));
    assert.deepStrictEqual(b.targets, a.targets);
    assert.deepStrictEqual(b.problems, a.problems);
  });

  it('pairs targets per problem: a target against itself (a tinker:// path of the same weights) has d = 0 everywhere', async () => {
    const service = await connect();
    const tc = await service.createLoraTrainingClient('tinker-studio/arith-gpt', { rank: 4 });
    const saved = await (await tc.saveWeightsForSampler('eval-test')).result();
    service.close();
    const spec = {
      dataset: { path: 'holdout.jsonl', max_problems: 8 },
      grader: { file: 'reward.py' },
      n: 1,
      temperature: 0,
      max_tokens: 6,
      targets: ['tinker-studio/arith-gpt', saved.path!],
    };
    const file = exampleCopy('paired', spec);
    const s = await runEval({ specFile: file, connect, cacheDir: cacheDir() });
    assert.strictEqual(s.targets.length, 2);
    const c = s.comparisons[0]!;
    assert.strictEqual(c.baseline, s.targets[0]!.id);
    assert.strictEqual(c.problems, 8);
    // a fresh LoRA adapter starts at zero: greedy samples equal the base model's, every problem a tie
    assert.deepStrictEqual([c.wins, c.losses, c.ties, c.diff.value, c.p_value], [0, 0, 8, 0, 1]);
    assert.strictEqual(c.mcnemar_p, 1);
    for (const row of s.problems) assert.deepStrictEqual(Object.keys(row.targets).sort(), s.targets.map((t) => t.id).sort());
    // summary.json's bootstrap seed is the one the intervals used: every target's reward interval again from it
    for (const t of s.targets) {
      const again = bootstrapMean(s.problems.map((p) => p.targets[t.id]!.reward!), { resamples: s.bootstrap.resamples, seed: s.bootstrap.seed });
      assert.deepStrictEqual(t.metrics.reward, again, `${t.id}: reward interval from bootstrap.seed ${s.bootstrap.seed}`);
      assert.deepStrictEqual(t.metrics.pass_at!['pass@1'], t.metrics.reward, `${t.id}: pass@1 = reward on 0/1 rewards`);
    }

    // Export as Inspect log: one log per target, each sample an epoch, scores and stop reasons carried over
    const files = exportInspectLogs(path.join(path.dirname(file), 'evals', 'holdout'));
    assert.strictEqual(files.length, 2);
    const log = JSON.parse(fs.readFileSync(files[1]!, 'utf8'));
    assert.strictEqual(log.version, 2);
    assert.strictEqual(log.status, 'success');
    assert.strictEqual(log.eval.dataset.samples, 8);
    assert.strictEqual(log.eval.dataset.shuffled, true, 'the problems are the dataset shuffled with seed 0');
    assert.deepStrictEqual(log.eval.dataset.sample_ids, s.problems.map((p) => p.problem_id));
    assert.strictEqual(log.samples.length, 8);
    const recs = readTargetSamples(path.join(path.dirname(file), 'evals', 'holdout'), s.targets[1]!.id);
    const first = recs.find((r) => r.problem_id === log.samples[0].id)!;
    assert.strictEqual(log.samples[0].scores.reward.value, first.reward);
    assert.strictEqual(log.samples[0].output.choices[0].message.content, first.content);
    assert.strictEqual(log.results.scores[0].metrics.mean.value, s.targets[1]!.metrics.reward!.value);
  });

  it('the JSON schema contributed for *.eval.json requires what the spec requires', () => {
    const schema = evalSpecJsonSchema();
    assert.strictEqual(schema.type, 'object');
    // a grader or an env (exactly one: the spec's rule, envEval.test.ts), so neither is required by the schema;
    // dataset and max_tokens unless the eval is an NLL eval (nllEval.test.ts)
    assert.deepStrictEqual(schema.required, ['targets']);
    // …and unless it runs a benchmark (which brings its problems and takes no dataset, grader or env)
    assert.deepStrictEqual(schema.else, { if: { required: ['benchmark'] }, then: { properties: { dataset: false, grader: false, env: false } }, else: { required: ['dataset', 'max_tokens'] } });
  });

  it('the example examples/arithmetic/holdout.eval.json is valid: base model vs the latest run\'s checkpoints, n = 4, all 1,029 problems', async () => {
    const { spec } = await parseEvalSpecFile(path.join(EXAMPLE, 'holdout.eval.json'));
    assert.strictEqual(spec.n, 4);
    assert.strictEqual(spec.dataset!.max_problems, undefined);
    assert.deepStrictEqual(spec.targets, ['tinker-studio/arith-chat', { run: 'latest', checkpoints: 'all' }]);
    // the baseline is the model the example's GRPO run trains, so its checkpoints are compared with their own base
    const grpo = JSON.parse(fs.readFileSync(path.join(EXAMPLE, 'arith.grpo.json'), 'utf8')) as { model: string };
    assert.strictEqual(spec.targets[0], grpo.model);
  });

  it("reports the grader's format (mean with interval) where the reward function returns {reward, format}, and not where it returns a number", async () => {
    const file = exampleCopy('format', { dataset: { path: 'holdout.jsonl', max_problems: 12 }, grader: { file: 'fmt.py' }, n: 2, max_tokens: 4, seed: 5, targets: ['tinker-studio/arith-gpt'] });
    // format: the completion has no space; the reward: the example's own grader
    fs.writeFileSync(
      path.join(path.dirname(file), 'fmt.py'),
      'from reward import compute_reward as exact\n' + 'def compute_reward(completion, ground_truth):\n    return {"reward": exact(completion, ground_truth), "format": 0.0 if " " in completion else 1.0}\n',
    );
    const summary = await runEval({ specFile: file, connect, cacheDir: cacheDir() });
    const t = summary.targets[0]!;
    const samples = readTargetSamples(path.join(path.dirname(file), 'evals', 'holdout'), t.id);
    assert.strictEqual(samples.length, 24);
    assert.ok(samples.every((r) => r.format === (r.content.includes(' ') ? 0 : 1)), 'each sample keeps the grader\'s format');
    assert.ok(t.metrics.format, 'format is reported');
    assert.ok(Math.abs(t.metrics.format.value - samples.reduce((a, r) => a + r.format!, 0) / 24) < 1e-12, 'equal n per problem: the mean of the per-problem means is the sample mean');
    assert.ok(t.metrics.format.lo! <= t.metrics.format.value && t.metrics.format.value <= t.metrics.format.hi!);
    assert.match(formatEvalTable(summary).split('\n')[0]!, /stop rate +format +tokens/);

    const plain = exampleCopy('no-format', { dataset: { path: 'holdout.jsonl', max_problems: 3 }, grader: { file: 'reward.py' }, n: 1, max_tokens: 4, targets: ['tinker-studio/arith-gpt'] });
    const s2 = await runEval({ specFile: plain, connect, cacheDir: cacheDir() });
    assert.strictEqual(s2.targets[0]!.metrics.format, undefined);
    assert.doesNotMatch(formatEvalTable(s2), /format/);
  });

  it('max_problems takes the first problems of the dataset shuffled with seed 0, as its description says, not the first of the file', async () => {
    const all = await loadEvalProblems({ path: path.join(EXAMPLE, 'holdout.jsonl'), prompt_field: 'question', ground_truth_field: 'answer', on_invalid_line: 'error' } as never, { specDir: EXAMPLE, cacheDir: cacheDir() });
    const five = await loadEvalProblems({ path: path.join(EXAMPLE, 'holdout.jsonl'), prompt_field: 'question', ground_truth_field: 'answer', on_invalid_line: 'error', max_problems: 5 } as never, { specDir: EXAMPLE, cacheDir: cacheDir() });
    assert.deepStrictEqual(five.map((p) => p.id), all.slice(0, 5).map((p) => p.id));
    const fileOrder = all.map((p) => p.id).sort((a, b) => Number(a.split(':').pop()) - Number(b.split(':').pop()));
    assert.notDeepStrictEqual(five.map((p) => p.id), fileOrder.slice(0, 5), 'not the first lines of the file');
    const shuffledSeed0 = shuffled(fileOrder, mulberry32(0));
    assert.deepStrictEqual(all.map((p) => p.id), shuffledSeed0);
    const described = (evalSpecJsonSchema() as { properties: { dataset: { properties?: { max_problems?: { description?: string } }; anyOf?: unknown } } }).properties.dataset;
    assert.match(JSON.stringify(described), /shuffled with seed 0 first/);
    assert.doesNotMatch(JSON.stringify(evalSpecJsonSchema()), /the first ones of the file\)/);
  });

  it('the same eval in two folders (its dataset "../data/…", outside the spec\'s folder) gives the same problem ids, draws and figures', async () => {
    // two copies of one checkout at different depths: what is sampled must not depend on where it lives
    const copy = (root: string) => {
      const data = path.join(dir, root, 'data');
      const specs = path.join(dir, root, 'specs');
      fs.mkdirSync(data, { recursive: true });
      fs.mkdirSync(specs, { recursive: true });
      for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(data, f));
      const file = path.join(specs, 'far.eval.json');
      const spec = { dataset: { path: '../data/holdout.jsonl', max_problems: 16 }, grader: { file: '../data/reward.py' }, n: 2, temperature: 1, max_tokens: 6, seed: 0, targets: ['tinker-studio/arith-gpt'] };
      fs.writeFileSync(file, JSON.stringify(spec));
      return file;
    };
    const runIn = async (root: string) => {
      const file = copy(root);
      const summary = await runEval({ specFile: file, connect, cacheDir: cacheDir() });
      const samples = readTargetSamples(path.join(path.dirname(file), 'evals', 'far'), summary.targets[0]!.id)
        .map((r) => ({ id: r.problem_id, i: r.traj_idx, tokens: r.completion_tokens, reward: r.reward }))
        .sort((x, y) => x.id.localeCompare(y.id) || x.i - y.i);
      return { summary, samples };
    };
    const a = await runIn('checkout-a');
    const b = await runIn(path.join('elsewhere', 'deeper', 'checkout-b'));
    assert.ok(a.summary.problems.every((p) => p.problem_id.startsWith('../data/holdout.jsonl:')), a.summary.problems[0]!.problem_id);
    assert.deepStrictEqual(b.summary.problems, a.summary.problems);
    assert.deepStrictEqual(b.samples, a.samples);
    assert.deepStrictEqual(b.summary.targets, a.summary.targets);
  });

  it('spec errors name the file and the field', async () => {
    const file = exampleCopy('bad', { dataset: { path: 'holdout.jsonl' }, grader: { file: 'reward.txt' }, n: 0, max_tokens: 6, targets: [] });
    await assert.rejects(parseEvalSpecFile(file), (e: Error) => /holdout\.eval\.json: grader\.file/.test(e.message) && /holdout\.eval\.json: n/.test(e.message) && /targets/.test(e.message));
    const missing = exampleCopy('missing', { dataset: { path: 'nope.jsonl' }, grader: { file: 'reward.py' }, max_tokens: 6, targets: ['tinker-studio/arith-gpt'] });
    await assert.rejects(parseEvalSpecFile(missing), /holdout\.eval\.json: dataset\.path: .*nope\.jsonl does not exist/);
  });
});
