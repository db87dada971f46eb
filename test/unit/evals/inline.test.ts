// Inline evaluators (`evals: [...]` in GRPO and SFT specs): the schema (reserved and duplicate names,
// defaults, the kind inferred, the SFT rules, paths resolved and checked), the metric keys and pass@k,
// and real runs on the embedded engine (real HTTP, real Python graders): a GRPO run logs each
// evaluator's keys in the metrics rows of the steps i % every == 0, next to the holdout's; an SFT run
// logs test/<name>/nll (forward only: no extra update reaches the engine) and a sampling evaluator's keys.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { inlineEvalKeys, inlineEvalKind } from '../../../src/core/evals/inlineSpec';
import { passAtKMetrics } from '../../../src/core/evals/inline';
import { passAtK } from '../../../src/core/evals/stats';
import Ajv from 'ajv';
import { GRPO_INLINE_EVALS, GRPO_SPEC, GrpoSpecInput, grpoSpecJsonSchema, parseGrpoSpecFile, parseGrpoSpecText } from '../../../src/core/grpo/spec';
import { startGrpoRun } from '../../../src/core/grpo/start';
import { parseSftSpecText, SFT_INLINE_EVALS, sftSpecJsonSchema } from '../../../src/core/sft/spec';
import { startSftRun } from '../../../src/core/sft/start';
import { specDiagnostics } from '../../../src/core/spec/diagnostics';
import { RunSpecError } from '../../../src/core/spec/text';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { appliedSteps, readMetricsLines, startTestEngine, TestEngine, writeReward } from '../grpo/engineFixture';

const grpo = (evals: unknown[]): GrpoSpecInput =>
  ({ model: 'tinker-studio/arith-gpt', max_tokens: 6, iterations: 3, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py' }, evals }) as GrpoSpecInput;
const sft = (evals: unknown[]) => ({ model: 'tinker-studio/arith-gpt', dataset: { path: 'chats.jsonl' }, evals });

function problemsOf(parse: () => unknown): string[] {
  try {
    parse();
    return [];
  } catch (err) {
    if (err instanceof RunSpecError) return err.problems;
    throw err;
  }
}
const grpoProblems = (evals: unknown[]) => problemsOf(() => parseGrpoSpecText(JSON.stringify(grpo(evals)), 'a.grpo.json'));
const sftProblems = (evals: unknown[]) => problemsOf(() => parseSftSpecText(JSON.stringify(sft(evals)), 'a.sft.json'));

describe('inline evaluators', () => {
  describe('schema', () => {
    it('fills the defaults: n 1 (temperature: 1 when the run prepares it, a benchmark\'s own for a benchmark); the kind is sampling in GRPO specs', () => {
      const spec = parseGrpoSpecText(JSON.stringify(grpo([{ name: 'gsm', dataset: { path: 'h.jsonl' }, every: 5 }])), 'a.grpo.json');
      const e = spec.evals![0]!;
      assert.strictEqual(e.n, 1);
      assert.strictEqual(e.temperature, undefined, 'resolved when the run prepares its evaluators');
      assert.strictEqual(e.grader, undefined, "the run's reward file is the default grader");
      assert.strictEqual(e.max_tokens, undefined, "the run's max_tokens is the default");
      assert.strictEqual(e.dataset?.prompt_field, 'question', "an eval spec's dataset defaults");
      assert.strictEqual(inlineEvalKind(e, GRPO_INLINE_EVALS), 'sampling');
      assert.strictEqual(parseGrpoSpecText(JSON.stringify(grpo([])), 'a.grpo.json').evals?.length, 0);
    });

    it('reserves the holdout\'s names, naming the field', () => {
      for (const name of ['env', 'test', 'nll', 'bpb']) {
        const p = grpoProblems([{ name, dataset: { path: 'h.jsonl' }, every: 5 }]);
        assert.strictEqual(p.length, 1, p.join('\n'));
        assert.match(p[0]!, new RegExp(`^a\\.grpo\\.json: evals\\[0\\]\\.name: "${name}" is reserved`));
      }
      assert.deepStrictEqual(grpoProblems([{ name: 'environment', dataset: { path: 'h.jsonl' }, every: 5 }]), []);
    });

    it('wants names unique and safe in metric keys', () => {
      const dup = grpoProblems([
        { name: 'a', dataset: { path: 'h.jsonl' }, every: 5 },
        { name: 'b', dataset: { path: 'h.jsonl' }, every: 5 },
        { name: 'a', dataset: { path: 'x.jsonl' }, every: 50 },
      ]);
      assert.deepStrictEqual(dup, ['a.grpo.json: evals[2].name: "a" is already the name of evals[0]; names must be unique']);
      for (const bad of ['a/b', 'has space', '', '.dot', 'pass@1'])
        assert.match(grpoProblems([{ name: bad, dataset: { path: 'h.jsonl' }, every: 5 }])[0] ?? '', /evals\[0\]\.name: /, bad);
    });

    it('checks every, n, the dataset (an eval spec\'s) and max_problems given twice', () => {
      assert.match(grpoProblems([{ name: 'a', dataset: { path: 'h.jsonl' } }]).join('\n'), /evals\[0\]\.every: is required/);
      assert.match(grpoProblems([{ name: 'a', dataset: { path: 'h.jsonl' }, every: 0 }]).join('\n'), /evals\[0\]\.every: must be at least 1/);
      assert.match(grpoProblems([{ name: 'a', dataset: { path: 'h.jsonl' }, every: 2, n: 0 }]).join('\n'), /evals\[0\]\.n: must be at least 1/);
      assert.match(grpoProblems([{ name: 'a', dataset: { pth: 'h.jsonl' }, every: 2 }]).join('\n'), /evals\[0\]\.dataset\.pth: unknown field \(did you mean "path"\?\)/);
      assert.match(grpoProblems([{ name: 'a', dataset: { path: 'h.jsonl', max_problems: 3 }, max_problems: 4, every: 2 }]).join('\n'), /evals\[0\]\.max_problems: give max_problems here or in dataset, not both/);
      assert.match(grpoProblems([{ name: 'a', dataset: { path: 'h.jsonl' }, every: 2, grader: { file: 'g.txt' } }]).join('\n'), /evals\[0\]\.grader\.file: must be a \.py/);
    });

    it('SFT: no grader means an NLL evaluator; a sampling one needs a grader and max_tokens; GRPO has no NLL evaluators', () => {
      const spec = parseSftSpecText(JSON.stringify(sft([{ name: 'chats', dataset: { path: 'v.jsonl' }, every: 10 }])), 'a.sft.json');
      assert.strictEqual(inlineEvalKind(spec.evals![0]!, SFT_INLINE_EVALS), 'nll');
      assert.deepStrictEqual(sftProblems([{ name: 'acc', kind: 'sampling', dataset: { path: 'h.jsonl' }, every: 10 }]), [
        'a.sft.json: evals[0].grader: is required for a sampling evaluator of an SFT run (it has no reward file)',
        'a.sft.json: evals[0].max_tokens: is required for a sampling evaluator of an SFT run',
      ]);
      assert.deepStrictEqual(sftProblems([{ name: 'acc', dataset: { path: 'h.jsonl' }, grader: { file: 'r.py' }, max_tokens: 8, every: 10 }]), []);
      assert.deepStrictEqual(sftProblems([{ name: 'x', kind: 'nll', dataset: { path: 'v.jsonl' }, grader: { file: 'r.py' }, every: 10 }]), ['a.sft.json: evals[0].grader: not used by an "nll" evaluator']);
      assert.deepStrictEqual(grpoProblems([{ name: 'x', kind: 'nll', dataset: { path: 'v.jsonl' }, every: 10 }]), ['a.grpo.json: evals[0].kind: "nll" evaluators are for SFT specs (a GRPO run has no chats to score)']);
    });

    it('positions a problem at its evaluator\'s field in the editor', () => {
      const text = JSON.stringify(grpo([{ name: 'a', dataset: { path: 'h.jsonl' }, every: 2 }, { name: 'env', dataset: { path: 'h.jsonl' }, every: 2 }]), null, 2);
      const d = specDiagnostics(GRPO_SPEC, text);
      assert.strictEqual(d.length, 1);
      assert.match(d[0]!.message, /^evals\[1\]\.name: "env" is reserved/);
      assert.strictEqual(text.slice(d[0]!.offset, d[0]!.offset + d[0]!.length), '"name"');
      assert.ok(d[0]!.offset > text.indexOf('"env"') - 20 && d[0]!.offset < text.indexOf('"env"'), 'the second evaluator\'s name, not the first');
    });

    it('is in the JSON schemas contributed for *.grpo.json and *.sft.json', () => {
      const ajv = new Ajv({ strict: false, allErrors: true });
      const g = ajv.compile(grpoSpecJsonSchema());
      const base = grpo([]);
      assert.ok(g({ ...base, evals: [{ name: 'gsm', dataset: { path: 'h.jsonl', prompt_field: 'q' }, every: 20, n: 4, grader: { file: 'r.py', correct_threshold: 1 } }] }), JSON.stringify(g.errors));
      for (const bad of [{ name: 'a/b', dataset: { path: 'h.jsonl' }, every: 2 }, { name: 'a', dataset: { pth: 'h.jsonl' }, every: 2 }, { name: 'a', dataset: { path: 'h.jsonl' } }, { name: 'a', dataset: { path: 'h.jsonl' }, every: 2, n: 0 }])
        assert.strictEqual(g({ ...base, evals: [bad] }), false, JSON.stringify(bad));
      const f = ajv.compile(sftSpecJsonSchema());
      assert.ok(f({ ...sft([{ name: 'chats', kind: 'nll', dataset: { path: 'v.jsonl' }, every: 10 }]) }), JSON.stringify(f.errors));
    });

    it('resolves the evaluators\' files against the spec\'s folder and names a missing one by its field', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-inline-spec-'));
      try {
        for (const f of ['train.jsonl', 'reward.py', 'h.jsonl', 'g.py']) fs.writeFileSync(path.join(dir, f), '');
        const file = path.join(dir, 'a.grpo.json');
        fs.writeFileSync(file, JSON.stringify(grpo([{ name: 'a', dataset: { path: 'h.jsonl' }, every: 2 }, { name: 'b', dataset: { path: 'h.jsonl' }, grader: { file: 'g.py' }, every: 4 }])));
        const { spec } = await parseGrpoSpecFile(file);
        assert.strictEqual(spec.evals![0]!.dataset?.path, path.join(dir, 'h.jsonl'));
        assert.strictEqual(spec.evals![1]!.grader!.file, path.join(dir, 'g.py'));
        fs.writeFileSync(file, JSON.stringify(grpo([{ name: 'a', dataset: { path: 'h.jsonl' }, every: 2 }, { name: 'b', dataset: { path: 'gone.jsonl' }, grader: { file: 'nope.py' }, every: 4 }])));
        await assert.rejects(parseGrpoSpecFile(file), (err: unknown) => {
          assert.ok(err instanceof RunSpecError);
          assert.deepStrictEqual(
            err.problems.map((p) => p.replace(/ \(looked for .*\)$/, '')),
            ['a.grpo.json: evals[1].dataset.path: file "gone.jsonl" not found', 'a.grpo.json: evals[1].grader.file: file "nope.py" not found'],
          );
          return true;
        });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('metric keys', () => {
    it('are the holdout\'s shapes under test/<name>/, pass@<n> written out', () => {
      assert.strictEqual(inlineEvalKeys.reward('gsm'), 'test/gsm/env/all/reward/total');
      assert.strictEqual(inlineEvalKeys.passAt('gsm', 4), 'test/gsm/env/all/pass@4');
      assert.strictEqual(inlineEvalKeys.nll('chats'), 'test/chats/nll');
    });

    it('pass@k is the mean over problems of the unbiased estimate, with the grader\'s threshold', () => {
      const rewards = [
        [1, 0, 0, 0],
        [1, 1, 0.6, 0],
        [0, 0, 0, 0.4],
      ];
      const m = passAtKMetrics('x', rewards, 4, 0.5);
      assert.deepStrictEqual(Object.keys(m), ['test/x/env/all/pass@1', 'test/x/env/all/pass@2', 'test/x/env/all/pass@3', 'test/x/env/all/pass@4']);
      assert.strictEqual(m['test/x/env/all/pass@1'], (1 / 4 + 3 / 4 + 0) / 3);
      assert.strictEqual(m['test/x/env/all/pass@2'], (passAtK(4, 1, 2) + passAtK(4, 3, 2) + 0) / 3);
      assert.strictEqual(m['test/x/env/all/pass@4'], 2 / 3);
      assert.strictEqual(passAtKMetrics('x', rewards, 4, 0.3)['test/x/env/all/pass@1'], (1 / 4 + 3 / 4 + 1 / 4) / 3, 'a lower threshold counts 0.4 as correct');
    });
  });

  describe('on the embedded engine', function () {
    this.timeout(300_000);
    let dir: string;
    let engine: TestEngine;
    const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-inline-evals-'));
      engine = await startTestEngine(dir);
      fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n{"question":"What is 3 + 3?","answer":6}\n');
      fs.writeFileSync(path.join(dir, 'holdout.jsonl'), '{"question":"What is 5 + 5?","answer":10}\n');
      fs.writeFileSync(path.join(dir, 'probe.jsonl'), '{"q":"7 + 1?","a":8}\n{"q":"2 + 6?","a":8}\n{"q":"9 + 0?","a":9}\n');
      writeReward(dir);
      // a second grader: every sample correct, so its pass@k are exactly 1; it reports its own format
      fs.writeFileSync(path.join(dir, 'always.py'), 'def compute_reward(completion, ground_truth):\n    return {"reward": 1.0, "format": 0.25}\n');
    });
    after(async () => {
      await engine?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('GRPO: each evaluator logs its keys in the rows of the steps i % every == 0, next to the holdout, and writes its samples', async () => {
      const specFile = path.join(dir, 'inline.grpo.json');
      fs.writeFileSync(
        specFile,
        JSON.stringify({
          model: RANDOM_MODEL,
          lora_rank: 4,
          learning_rate: 0.001,
          groups_per_batch: 2,
          group_size: 2,
          max_tokens: 3,
          iterations: 5,
          save_every: 0,
          eval_every: 1,
          sampling_seed: 3,
          dataset: { path: 'train.jsonl', holdout: { path: 'holdout.jsonl' } },
          reward: { file: 'reward.py', workers: 1 },
          evals: [
            { name: 'probe', dataset: { path: 'probe.jsonl', prompt_field: 'q', ground_truth_field: 'a' }, every: 2, n: 4, max_problems: 2 },
            { name: 'rare-all', dataset: { path: 'probe.jsonl', prompt_field: 'q', ground_truth_field: 'a' }, grader: { file: 'always.py', workers: 1 }, every: 3, n: 2, max_tokens: 2 },
          ],
        }),
      );
      const r = await startGrpoRun({ specFile, runsDir: path.join(dir, 'runs'), connect, cacheDir: path.join(dir, 'cache') });
      assert.strictEqual(r.status, 'completed', r.error);
      const rows = readMetricsLines(r.runDir);
      assert.deepStrictEqual(rows.map((l) => l.step), [0, 1, 2, 3, 4], 'one row per step: the evaluators wrote into the step\'s row');
      const stepsWith = (key: string) => rows.filter((l) => typeof l[key] === 'number').map((l) => l.step);
      assert.deepStrictEqual(stepsWith('test/env/all/reward/total'), [0, 1, 2, 3, 4], 'the holdout as before');
      for (const k of ['test/probe/env/all/reward/total', 'test/probe/env/all/pass@1', 'test/probe/env/all/pass@2', 'test/probe/env/all/pass@3', 'test/probe/env/all/pass@4', 'test/probe/env/all/format'])
        assert.deepStrictEqual(stepsWith(k), [0, 2, 4], k);
      assert.deepStrictEqual(stepsWith('test/probe/env/all/pass@5'), []);
      for (const k of ['test/rare-all/env/all/reward/total', 'test/rare-all/env/all/pass@1', 'test/rare-all/env/all/pass@2']) assert.deepStrictEqual(stepsWith(k), [0, 3], k);
      for (const l of rows.filter((x) => x.step === 0 || x.step === 3)) {
        assert.strictEqual(l['test/rare-all/env/all/reward/total'], 1);
        assert.strictEqual(l['test/rare-all/env/all/pass@2'], 1);
        assert.strictEqual(l['test/rare-all/env/all/total_episodes'], 3 * 2, 'every problem of probe.jsonl, n = 2 each');
        assert.strictEqual(l['test/rare-all/env/all/format'], 0.25, "the grader's format replaces the stop-sequence check");
      }
      for (const l of rows.filter((x) => x.step % 2 === 0)) {
        assert.strictEqual(l['test/probe/env/all/total_episodes'], 2 * 4, 'max_problems 2, n = 4');
        const p1 = l['test/probe/env/all/pass@1'] as number;
        const p4 = l['test/probe/env/all/pass@4'] as number;
        assert.ok(p1 >= 0 && p1 <= p4 && p4 <= 1, `pass@1 ${p1} ≤ pass@4 ${p4}`);
        assert.strictEqual(p1, l['test/probe/env/all/reward/total'], 'the run\'s reward is 0/1 here: pass@1 is the mean reward');
      }
      const samples = fs.readFileSync(path.join(r.runDir, 'iteration_000002', 'eval_probe_samples.jsonl'), 'utf8').trim().split('\n').map((x) => JSON.parse(x) as { problem_id: string });
      assert.strictEqual(samples.length, 8);
      assert.ok(samples.every((s) => s.problem_id.startsWith('probe.jsonl:')), samples[0]!.problem_id);
      assert.ok(!fs.existsSync(path.join(r.runDir, 'iteration_000001', 'eval_probe_samples.jsonl')));
      assert.ok(fs.existsSync(path.join(r.runDir, 'iteration_000003', 'eval_rare-all_rollout_summaries.jsonl')));
      const graded = fs.readFileSync(path.join(r.runDir, 'iteration_000003', 'eval_rare-all_samples.jsonl'), 'utf8').trim().split('\n').map((x) => JSON.parse(x) as { format?: number });
      assert.deepStrictEqual([...new Set(graded.map((g) => g.format))], [0.25], 'sample records keep the grader\'s format');
      assert.ok(samples.every((x) => !('format' in x)), 'a grader returning a number reports no format in the records');
    });

    it('SFT: an NLL evaluator logs test/<name>/nll at its steps with no update of its own; a sampling evaluator its reward and pass@k', async () => {
      const chat = (a: number, b: number) => JSON.stringify({ messages: [{ role: 'user', content: `${a}+${b}=` }, { role: 'assistant', content: String(a + b) }] });
      fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 12 }, (_, i) => chat(i % 10, (i * 3) % 10)).join('\n') + '\n');
      fs.writeFileSync(path.join(dir, 'other-chats.jsonl'), Array.from({ length: 5 }, (_, i) => chat(9 - i, i)).join('\n') + '\n');
      const specFile = path.join(dir, 'inline.sft.json');
      fs.writeFileSync(
        specFile,
        JSON.stringify({
          model: RANDOM_MODEL,
          lora_rank: 4,
          learning_rate: 0.01,
          batch_size: 4,
          max_steps: 4,
          eval_every: 1,
          save_every: 0,
          dataset: { path: 'chats.jsonl', validation: { fraction: 0.25 } },
          evals: [
            { name: 'other', dataset: { path: 'other-chats.jsonl' }, every: 2, max_problems: 4 },
            { name: 'acc', dataset: { path: 'probe.jsonl', prompt_field: 'q', ground_truth_field: 'a' }, grader: { file: 'always.py', workers: 1 }, max_tokens: 2, n: 3, every: 3 },
          ],
        }),
      );
      const r = await startSftRun({ specFile, runsDir: path.join(dir, 'runs-sft'), connect, cacheDir: path.join(dir, 'cache') });
      assert.strictEqual(r.status, 'completed', r.error);
      const rows = readMetricsLines(r.runDir);
      assert.deepStrictEqual(rows.map((l) => l.step), [0, 1, 2, 3]);
      const stepsWith = (key: string) => rows.filter((l) => typeof l[key] === 'number').map((l) => l.step);
      assert.deepStrictEqual(stepsWith('test/nll'), [0, 1, 2, 3], 'the validation NLL as before');
      assert.deepStrictEqual(stepsWith('test/other/nll'), [0, 2]);
      for (const l of rows.filter((x) => x.step % 2 === 0)) {
        const nll = l['test/other/nll'] as number;
        assert.ok(Number.isFinite(nll) && nll > 0, String(nll));
        assert.notStrictEqual(nll, l['test/nll'], 'scored on its own chats');
      }
      assert.deepStrictEqual(stepsWith('test/acc/env/all/pass@3'), [0, 3]);
      for (const l of rows.filter((x) => x.step === 0 || x.step === 3)) {
        assert.strictEqual(l['test/acc/env/all/reward/total'], 1);
        assert.strictEqual(l['test/acc/env/all/pass@1'], 1);
        assert.strictEqual(l['test/acc/env/all/total_episodes'], 9);
      }
      // forward only: the engine applied exactly one optimizer step per training step
      const model = JSON.parse(fs.readFileSync(path.join(r.runDir, 'checkpoints.jsonl'), 'utf8').trim().split('\n').at(-1)!).state_path.slice('tinker://'.length).split('/')[0];
      const ops = (await appliedSteps(engine)).filter((s) => s.model_id === model).map((s) => s.type);
      assert.strictEqual(ops.filter((t) => t === 'optim_step').length, 4, ops.join(', '));
    });
  });
});
