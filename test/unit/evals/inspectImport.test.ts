// "Import Inspect Log…": Inspect logs read back as an eval results folder, in both of Inspect's formats
// (the `.eval` ZIP and JSON), on logs our own export wrote (a real eval on the embedded engine, real
// Python grader) and on logs written by hand in Inspect's documented EvalLog schema. The suite import
// puts a log's metric into a checkpoint's suite result.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { runEval } from '../../../src/core/evals/runEval';
import { readEvalResults, readTargetSamples } from '../../../src/core/evals/results';
import { exportInspectLogs } from '../../../src/core/evals/inspectLog';
import { importInspectLogs, InspectLogError, readInspectLog, scoreAsNumber } from '../../../src/core/evals/inspectImport';
import { openZip, writeZip, ZipError } from '../../../src/core/fs/zip';
import { importInspectIntoSuite } from '../../../src/core/suite/importInspect';
import { readSuiteResult, loadSuite, resultStaleness } from '../../../src/core/suite/store';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');

/** A log as Inspect documents it (EvalLog: version, status, eval, plan, results, stats, samples), written by hand. */
function handLog(): Record<string, unknown> {
  const sample = (id: number | string, epoch: number, input: unknown, target: string, answer: string, value: unknown, stop = 'stop') => ({
    id,
    epoch,
    input,
    target,
    messages: [],
    output: { model: 'tinker://run-1/sampler_weights/final', choices: [{ message: { role: 'assistant', content: [{ type: 'text', text: answer }] }, stop_reason: stop }], completion: answer },
    scores: { match: { value, answer } },
    metadata: {},
  });
  return {
    version: 2,
    status: 'success',
    eval: { run_id: 'r1', created: '2026-11-28T10:00:00+00:00', task: 'inspect_evals/gsm8k', task_id: 't1', model: 'openai/tinker://run-1/sampler_weights/final', dataset: { name: 'gsm8k', samples: 3 }, config: { epochs: 2 } },
    plan: { name: 'plan', steps: [{ solver: 'generate', params: {} }] },
    results: { total_samples: 6, completed_samples: 6, scores: [{ name: 'match', scorer: 'match', metrics: { accuracy: { name: 'accuracy', value: 0.5 } } }] },
    stats: { started_at: '2026-11-28T10:00:00+00:00', completed_at: '2026-11-28T10:01:00+00:00', model_usage: {} },
    samples: [
      sample(1, 1, 'What is 2+2?', '4', '4', 'C'),
      sample(1, 2, 'What is 2+2?', '4', '5', 'I'),
      sample('b', 1, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 3+3?' }], '6', '6', 'C'),
      sample('b', 2, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 3+3?' }], '6', '6', 1, 'max_tokens'),
      sample(3, 1, 'What is 1+1?', '2', '3', 'I'),
      sample(3, 2, 'What is 1+1?', '2', '2', 'P'),
    ],
  };
}

/** The same log as an Inspect `.eval` file: header.json, samples/<id>_epoch_<n>.json, summaries.json. */
function asEvalZip(log: Record<string, unknown>, opts: { journalOnly?: boolean } = {}): Buffer {
  const { samples, ...header } = log as { samples: Array<Record<string, unknown>> };
  const files = samples.map((s) => ({ name: `samples/${String(s['id'])}_epoch_${String(s['epoch'])}.json`, data: JSON.stringify(s) }));
  if (opts.journalOnly) {
    const { version, eval: ev, plan } = header as Record<string, unknown>;
    return writeZip([{ name: '_journal/start.json', data: JSON.stringify({ version, eval: ev, plan }) }, ...files]);
  }
  return writeZip([{ name: 'header.json', data: JSON.stringify(header) }, ...files, { name: 'summaries.json', data: '[]' }]);
}

describe('Inspect log import', function () {
  this.timeout(120_000);
  let engine: CountingEngine;
  let dir: string;

  before(async () => {
    engine = await startCountingEngine('tinker-inspect-');
    dir = engine.dir;
  });
  after(async () => {
    await engine?.close();
  });

  it('reads back the logs our export writes, as JSON and as .eval: the same per-problem rewards, intervals, pass@k and comparison', async () => {
    const service = await engine.connect();
    const tc = await service.createLoraTrainingClient('tinker-studio/arith-gpt', { rank: 4 });
    const saved = await (await tc.saveWeightsForSampler('inspect-import')).result();
    service.close();
    const d = path.join(dir, 'own');
    fs.mkdirSync(d, { recursive: true });
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(d, f));
    const specFile = path.join(d, 'holdout.eval.json');
    fs.writeFileSync(specFile, JSON.stringify({ dataset: { path: 'holdout.jsonl', max_problems: 12 }, grader: { file: 'reward.py' }, n: 2, temperature: 1, max_tokens: 6, seed: 3, targets: ['tinker-studio/arith-gpt', saved.path!] }));
    const s = await runEval({ specFile, connect: () => engine.connect(), cacheDir: engine.cacheDir() });
    const resultsDir = path.join(d, 'evals', 'holdout');
    for (const format of ['json', 'eval'] as const) {
      const files = exportInspectLogs(resultsDir, path.join(d, `inspect-${format}`), format);
      assert.ok(files.every((f) => f.endsWith(`.${format}`)));
      if (format === 'eval') assert.ok(openZip(fs.readFileSync(files[0]!), files[0]!).has('header.json'));
      const out = path.join(d, `imported-${format}`);
      const imported = importInspectLogs({ files, outDir: out });
      const back = readEvalResults(out);
      assert.deepStrictEqual(back.summary, imported);
      assert.strictEqual(imported.n, 2);
      assert.strictEqual(imported.complete, true);
      assert.deepStrictEqual(imported.targets.map((t) => t.source), s.targets.map((t) => t.source), 'our own source comes back from the log');
      for (const [i, t] of imported.targets.entries()) {
        const o = s.targets[i]!;
        assert.deepStrictEqual(t.metrics.reward, o.metrics.reward, `${format}: ${t.label} reward and its interval`);
        assert.deepStrictEqual(t.metrics.pass_at, o.metrics.pass_at, `${format}: ${t.label} pass@k`);
        assert.deepStrictEqual(t.metrics.stop_rate, o.metrics.stop_rate, `${format}: ${t.label} stop rate`);
        assert.deepStrictEqual(imported.problems.map((p) => p.targets[t.id]), s.problems.map((p) => p.targets[o.id]), `${format}: per-problem cells`);
        const recs = readTargetSamples(out, t.id);
        const orig = readTargetSamples(resultsDir, o.id);
        assert.deepStrictEqual(recs.map((r) => [r.problem_id, r.traj_idx, r.content, r.reward]).sort(), orig.map((r) => [r.problem_id, r.traj_idx, r.content, r.reward]).sort());
      }
      assert.deepStrictEqual(imported.comparisons.map((c) => [c.diff, c.p_value, c.wins, c.losses, c.ties]), s.comparisons.map((c) => [c.diff, c.p_value, c.wins, c.losses, c.ties]));
    }
  });

  it('reads a hand-written log in Inspect\'s schema, JSON and .eval alike: letters as scores, epochs as samples, max_tokens as a cut completion', () => {
    const d = path.join(dir, 'hand');
    fs.mkdirSync(d, { recursive: true });
    const json = path.join(d, 'gsm8k.json');
    fs.writeFileSync(json, JSON.stringify(handLog(), null, 2));
    const zip = path.join(d, 'gsm8k.eval');
    fs.writeFileSync(zip, asEvalZip(handLog()));
    const summaries = [json, zip].map((f) => importInspectLogs({ files: [f], outDir: path.join(d, path.basename(f) + '-out') }));
    const [a, b] = summaries;
    assert.deepStrictEqual({ ...b!, spec_file: '', updated_at: '' }, { ...a!, spec_file: '', updated_at: '' }, 'both formats give the same results');
    assert.strictEqual(a!.name, 'inspect-gsm8k');
    assert.strictEqual(a!.n, 2);
    assert.deepStrictEqual(a!.problems.map((p) => p.problem_id), ['1', 'b', '3']);
    assert.strictEqual(a!.problems[1]!.question, 'What is 3+3?', 'the last user message of a message list');
    const t = a!.targets[0]!;
    assert.deepStrictEqual(t.source, { kind: 'path', path: 'tinker://run-1/sampler_weights/final' }, 'openai/<tinker path> is the checkpoint');
    // rewards per problem: (1 + 0)/2, (1 + 1)/2, (0 + 0.5)/2
    assert.deepStrictEqual(a!.problems.map((p) => p.targets[t.id]!.reward), [0.5, 1, 0.25]);
    assert.deepStrictEqual(a!.problems.map((p) => p.targets[t.id]!.correct), [1, 2, 1], 'P (0.5) is correct at the default threshold 0.5');
    assert.strictEqual(t.metrics.reward!.value, (0.5 + 1 + 0.25) / 3);
    assert.strictEqual(t.metrics.stop_rate!.value, (1 + 0.5 + 1) / 3, 'one of two epochs of "b" stopped at max_tokens');
    assert.strictEqual(t.reward_errors, 0);
  });

  it('an unfinished .eval log (its journal, no header.json) imports as an incomplete eval', () => {
    const f = path.join(dir, 'unfinished.eval');
    fs.writeFileSync(f, asEvalZip(handLog(), { journalOnly: true }));
    const log = readInspectLog(f);
    assert.strictEqual(log.header.status, 'started');
    const s = importInspectLogs({ files: [f], outDir: path.join(dir, 'unfinished-out') });
    assert.strictEqual(s.complete, false);
  });

  it('a dict-valued score is read by scorer/key; a score that is not a number is a sample error naming the log, sample and value', () => {
    const log = handLog() as { samples: Array<{ scores: Record<string, { value: unknown }> }> };
    log.samples.forEach((s, i) => (s.scores = { ifeval: { value: { prompt_level_strict: i % 2 === 0, inst_level_loose: 0.5 } } }));
    (log.samples[5]!.scores['ifeval']!.value as Record<string, unknown>)['prompt_level_strict'] = 'maybe';
    const f = path.join(dir, 'ifeval.json');
    fs.writeFileSync(f, JSON.stringify(log));
    const s = importInspectLogs({ files: [f], outDir: path.join(dir, 'ifeval-out'), score: 'ifeval/prompt_level_strict' });
    const t = s.targets[0]!;
    assert.strictEqual(t.reward_errors, 1);
    assert.match(t.first_error!.message, /ifeval\.json: sample 3 epoch 2: the score "ifeval\/prompt_level_strict" is "maybe"/);
    assert.deepStrictEqual(s.problems.map((p) => p.targets[t.id]!.reward), [0.5, 0.5, 0.5]);
    const loose = importInspectLogs({ files: [f], outDir: path.join(dir, 'ifeval-loose'), score: 'ifeval/inst_level_loose' });
    assert.strictEqual(loose.targets[0]!.metrics.reward!.value, 0.5);
  });

  it('refuses what is not a log, naming the file, the ZIP entry and the field', () => {
    const bad = handLog() as { samples: Array<Record<string, unknown>> };
    delete (bad.samples[2] as Record<string, unknown>)['input'];
    const j = path.join(dir, 'bad.json');
    fs.writeFileSync(j, JSON.stringify(bad));
    assert.throws(() => readInspectLog(j), (e: Error) => e instanceof InspectLogError && /bad\.json: field samples\.2\.input:/.test(e.message));
    const z = path.join(dir, 'bad.eval');
    fs.writeFileSync(z, asEvalZip(bad));
    assert.throws(() => readInspectLog(z), (e: Error) => e instanceof InspectLogError && /bad\.eval!samples\/b_epoch_1\.json: field input:/.test(e.message));
    const notZip = path.join(dir, 'text.eval');
    fs.writeFileSync(notZip, '{"version": 2}');
    assert.throws(() => readInspectLog(notZip), /text\.eval: not a ZIP archive/);
    const cut = asEvalZip(handLog());
    assert.throws(() => openZip(cut.subarray(0, cut.length - 30), 'cut.eval'), ZipError);
    const empty = handLog();
    empty['samples'] = [];
    const e = path.join(dir, 'empty.json');
    fs.writeFileSync(e, JSON.stringify(empty));
    assert.throws(() => importInspectLogs({ files: [e], outDir: path.join(dir, 'empty-out') }), /holds no samples/);
  });

  it('reads score values as Inspect does', () => {
    assert.deepStrictEqual(['C', 'I', 'P', 'N', 'yes', 'false', '0.25', true, 0.75, 'x', null, [1]].map(scoreAsNumber), [1, 0, 0.5, 0, 1, 0, 0.25, 1, 0.75, undefined, undefined, undefined]);
  });

  it('imports a log as a suite entry\'s result for its checkpoint: the entry\'s metric with its interval, the log as its data', async () => {
    const d = path.join(dir, 'suite');
    fs.mkdirSync(d, { recursive: true });
    const log = path.join(d, 'gsm8k.eval');
    fs.writeFileSync(log, asEvalZip(handLog()));
    const suiteFile = path.join(d, 'chat.suite.json');
    fs.writeFileSync(suiteFile, JSON.stringify({ entries: [{ name: 'product', layer: 'product', eval: { dataset: { path: 'p.jsonl' }, grader: { file: 'g.py' }, max_tokens: 8 } }, { name: 'gsm8k', layer: 'benchmark', eval: { dataset: { path: 'p.jsonl' }, grader: { file: 'g.py' }, max_tokens: 8 } }] }));
    const r = await importInspectIntoSuite({ suiteFile, entry: 'gsm8k', file: log });
    assert.strictEqual(r.checkpoint.path, 'tinker://run-1/sampler_weights/final');
    assert.deepStrictEqual(r.entries.map((e) => e.name), ['gsm8k']);
    const e = r.entries[0]!;
    assert.strictEqual(e.metric, 'pass@1');
    assert.deepStrictEqual(e.per_item, { '1': 0.5, b: 1, '3': 0.5 });
    assert.strictEqual(e.data[0]!.file, 'gsm8k.eval');
    assert.strictEqual(r.complete, false, 'the product entry has no result yet');
    const suite = await loadSuite(suiteFile);
    assert.deepStrictEqual(await readSuiteResult(suite, r.checkpoint.path), r);
    assert.deepStrictEqual(await resultStaleness(suite, r.checkpoint.path, r), ['the suite run did not finish', 'product: no result']);
    fs.writeFileSync(log, asEvalZip({ ...handLog(), status: 'cancelled' }));
    assert.ok((await resultStaleness(suite, r.checkpoint.path, r)).some((w) => /gsm8k: gsm8k\.eval changed since the result/.test(w)), 'a changed log makes the entry stale');
    await assert.rejects(importInspectIntoSuite({ suiteFile, entry: 'mmlu', file: log }), /has no entry "mmlu" \(its entries: product, gsm8k\)/);
  });
});
