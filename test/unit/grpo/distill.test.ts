// On-policy distillation and the KL penalty to a reference model in the GRPO kind, end to end on the
// embedded engine (real HTTP, real compute): the spec's rules, multi-teacher batching, a teacher
// checkpoint named by {"run": "latest", "checkpoint": "final"} scoring prompt-only groups of one
// sample, the teacher's log-probs kept per sample, the teacher_kl metrics, §1.7's kl_policy_base,
// and a teacher of another tokenizer refused before anything is written.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { batchSources } from '../../../src/core/grpo/loop';
import { parseGrpoSpecValue } from '../../../src/core/grpo/spec';
import { resolveSecondModels, startGrpoRun } from '../../../src/core/grpo/start';
import { checkSameTokenizer } from '../../../src/core/training/teachers';
import type { Problem } from '../../../src/core/data/types';
import { SampleRecord } from '../../../src/core/runs/sampleRecord';
import { ServiceClient } from '../../../src/core/tinker/client';
import { textInput } from '../../../src/core/tinker/types';
import { TestEngine, readCheckpointLines, readJsonl, readMetricsLines, startTestEngine, writeReward } from './engineFixture';

const BASE = { model: 'tinker-studio/random-gpt', lora_rank: 4, learning_rate: 0.002, max_tokens: 4, iterations: 1, save_every: 0, eval_every: 0 };

describe('distillation spec', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-distill-spec-'));
    fs.writeFileSync(path.join(dir, 'p.jsonl'), '{"question":"hi"}\n');
    fs.writeFileSync(path.join(dir, 'reward.py'), 'def compute_reward(c, g):\n    return 0.0\n');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const parse = (v: Record<string, unknown>) => parseGrpoSpecValue({ ...BASE, ...v }, path.join(dir, 'x.grpo.json'));
  const refused = async (v: Record<string, unknown>, re: RegExp) => assert.rejects(parse(v), (e: Error) => re.test(e.message) || assert.fail(e.message));

  it('a teacher makes the reward optional and allows groups of one; without one both are required', async () => {
    const { spec } = await parse({ dataset: { path: 'p.jsonl' }, teacher: { model: 'tinker-studio/arith-gpt' }, group_size: 1 });
    assert.strictEqual(spec.group_size, 1);
    assert.strictEqual(spec.kl_penalty_coef, undefined, 'resolved to 1.0 by the loop config');
    assert.strictEqual(spec.kl_discount_factor, 0);
    await refused({ dataset: { path: 'p.jsonl' }, group_size: 1, reward: { file: 'reward.py' } }, /group_size: must be at least 2.*1 is allowed with a teacher/);
    await refused({ dataset: { path: 'p.jsonl' } }, /reward: required \(unless a "teacher"/);
  });

  it('names what is wrong with a teacher, a KL reference or the datasets', async () => {
    const d = { dataset: { path: 'p.jsonl' } };
    await refused({ ...d, teacher: {} }, /teacher: give "model".*"checkpoint".*"run"/);
    await refused({ ...d, teacher: { checkpoint: 'final' } }, /teacher\.checkpoint: must be a tinker:\/\/ sampler path/);
    await refused({ ...d, teacher: { run: 'latest' } }, /teacher\.checkpoint: give the name/);
    await refused({ ...d, teacher: { run: 'latest', checkpoint: 'tinker://x/sampler_weights/final' } }, /with "run", a checkpoint name/);
    await refused({ ...d, teacher: { model: 'a', checkpoint: 'tinker://x' } }, /either "model" or "checkpoint"/);
    await refused({ ...d, reward: { file: 'reward.py' }, kl_penalty_coef: 0.1 }, /kl_reference: required when kl_penalty_coef > 0/);
    await refused({ ...d, teacher: { model: 'a' }, kl_reference: { model: 'a' } }, /kl_reference: not used with a teacher/);
    await refused({ ...d, teacher: { model: 'a' }, kl_penalty_coef: 0 }, /nothing to learn from/);
    await refused({ dataset: { path: 'p.jsonl', holdout: { fraction: 0.1 } }, teacher: { model: 'a' }, eval_every: 5 }, /dataset\.holdout: a holdout is scored with the reward/);
    await refused({ ...d, dataset_configs: [{ dataset: { path: 'p.jsonl' }, teacher: { model: 'a' }, groups_per_batch: 1 }] }, /give "dataset" \(with "teacher"\) or "dataset_configs", not both/);
    await refused({ teacher: { model: 'a' } }, /dataset: required/);
    await refused({ ...d, teacher: { model: 'a' }, evals: [{ name: 'h', dataset: { path: 'p.jsonl' }, every: 5 }] }, /evals\[0\]\.grader: is required: this spec has no reward file/);
    const { spec } = await parse({ reward: { file: 'reward.py' }, ...d, kl_penalty_coef: 0.1, kl_reference: { model: BASE.model }, kl_discount_factor: 0.5 });
    assert.deepStrictEqual([spec.kl_penalty_coef, spec.kl_discount_factor], [0.1, 0.5]);
  });

  it('multi-teacher: each iteration takes every dataset\'s share, dataset by dataset, each read cyclically', () => {
    const p = (id: string): Problem => ({ id, messages: [{ role: 'user', content: id }], groundTruth: '' });
    const a = [p('a0'), p('a1'), p('a2')];
    const b = [p('b0'), p('b1')];
    const at = (i: number) => batchSources([{ train: a, groupsPerBatch: 2 }, { train: b, groupsPerBatch: 1 }], i).map((x) => `${x.dataset}:${x.problem.id}`);
    assert.deepStrictEqual(at(0), ['0:a0', '0:a1', '1:b0']);
    assert.deepStrictEqual(at(1), ['0:a2', '0:a0', '1:b1']);
    assert.deepStrictEqual(at(2), ['0:a1', '0:a2', '1:b0']);
  });

  it('a resume scores with the teacher its config.json stored, not whatever "latest" names now', async () => {
    const { spec } = await parse({ dataset: { path: 'p.jsonl' }, teacher: { run: 'latest', checkpoint: 'final' } });
    const service = { weightsInfo: () => Promise.reject(new Error('must not ask')) } as unknown as Parameters<typeof resolveSecondModels>[1];
    const o = { specDir: dir, runsDir: path.join(dir, 'no-runs'), cacheDir: path.join(dir, 'none') };
    await assert.rejects(resolveSecondModels(spec, service, o), /teacher\.run: "latest": no run with a sampler checkpoint "final"/);
    const stored = { teachers_resolved: [{ label: 'old/final', model: 'tinker-studio/random-gpt', sampler_path: 'tinker://old/sampler_weights/final' }] };
    assert.deepStrictEqual(await resolveSecondModels(spec, service, { ...o, stored }), { teachers: stored.teachers_resolved });
  });

  it('a teacher of another tokenizer is refused without loading anything', async () => {
    await assert.rejects(
      checkSameTokenizer('tinker-studio/arith-gpt', { label: 'Qwen/Qwen3-8B', model: 'Qwen/Qwen3-8B' }, 'teacher', { cacheDir: path.join(dir, 'none') }),
      /teacher: Qwen\/Qwen3-8B \(base model Qwen\/Qwen3-8B\) does not share the student's tokenizer \(tinker-studio\/arith-gpt\)/,
    );
    await checkSameTokenizer('tinker-studio/arith-gpt', { label: 'x', model: 'tinker-studio/random-gpt' }, 'teacher', { cacheDir: path.join(dir, 'none') });
    assert.ok(!fs.existsSync(path.join(dir, 'none')), 'the byte tokenizer needs no files');
  });
});

describe('distillation runs on the engine', function () {
  this.timeout(300_000);
  let dir: string;
  let engine: TestEngine;
  const connect = () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
  const runsDir = () => path.join(dir, 'runs');

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-distill-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), '{"question":"What is 1 + 1?","answer":2}\n{"question":"What is 2 + 2?","answer":4}\n{"question":"What is 3 + 3?","answer":6}\n');
    // prompt-only: no answer field at all
    fs.writeFileSync(path.join(dir, 'prompts.jsonl'), '{"question":"Say hi"}\n{"question":"Count"}\n{"question":"Add"}\n');
    fs.writeFileSync(path.join(dir, 'more.jsonl'), '{"question":"Other"}\n');
    writeReward(dir);
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const write = (name: string, spec: Record<string, unknown>) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, JSON.stringify(spec));
    return f;
  };

  it('a teacher (or KL reference) the backend does not serve is reported as unknown, listing the models it serves, before the run directory exists', async () => {
    // the engine serves byte-tokenizer models only: another tokenizer is checked in 'distillation spec' above
    for (const [name, second] of [
      ['nope', { teacher: { model: 'tinker-studio/nope' } }],
      ['qwen', { teacher: { model: 'Qwen/Qwen3-8B' } }],
      ['ref', { reward: { file: 'reward.py' }, kl_penalty_coef: 0.1, kl_reference: { model: 'tinker-studio/nope' } }],
    ] as const) {
      const specFile = write(`unknown-${name}.grpo.json`, { ...BASE, dataset: { path: 'teacher' in second ? 'prompts.jsonl' : 'train.jsonl' }, ...second });
      const runs = path.join(dir, `runs-unknown-${name}`);
      const field = 'teacher' in second ? 'teacher' : 'kl_reference';
      const model = 'teacher' in second ? second.teacher.model : second.kl_reference.model;
      await assert.rejects(startGrpoRun({ specFile, runsDir: runs, connect, cacheDir: path.join(dir, 'cache') }), (e: Error) => {
        assert.ok(e.message.startsWith(`${field}.model: ${model} is not a model the backend serves; it serves `), e.message);
        assert.match(e.message, /it serves .*tinker-studio\/random-gpt/, 'the served models listed');
        assert.doesNotMatch(e.message, /tokenizer/);
        return true;
      });
      assert.ok(!fs.existsSync(runs));
    }
  });

  it('§1.7: the KL penalty to the base model logs kl_policy_base, 0 before the first update (the LoRA starts as the base)', async () => {
    const specFile = write('klref.grpo.json', { ...BASE, iterations: 2, groups_per_batch: 2, group_size: 2, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 }, kl_penalty_coef: 0.5, kl_reference: { model: BASE.model }, kl_discount_factor: 0.5 });
    const r = await startGrpoRun({ specFile, runsDir: path.join(dir, 'runs-klref'), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(r.status, 'completed', r.error);
    const m = readMetricsLines(r.runDir);
    assert.strictEqual(m.length, 2);
    const k0 = m[0]!['kl_policy_base'];
    assert.strictEqual(typeof k0, 'number');
    assert.ok(Math.abs(k0 as number) < 1e-4, `step 0: ${k0}`);
    assert.strictEqual(typeof m[1]!['kl_policy_base'], 'number');
    const config = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.deepStrictEqual(config.kl_reference_resolved, { label: BASE.model, model: BASE.model });
  });

  it('distils from {"run": "latest", "checkpoint": "final"} on prompt-only data, one sample per group: groups kept, teacher log-probs kept per sample, teacher_kl logged', async () => {
    // the teacher: two GRPO iterations, then its `final` sampler checkpoint
    const teacherSpec = write('teacher.grpo.json', { ...BASE, iterations: 2, groups_per_batch: 3, group_size: 4, learning_rate: 0.02, sampling_seed: 1, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 } });
    const t = await startGrpoRun({ specFile: teacherSpec, runsDir: runsDir(), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(t.status, 'completed', t.error);
    assert.ok(readMetricsLines(t.runDir).some((row) => (row['env/all/by_group/frac_mixed'] as number) > 0), 'the teacher had a gradient to learn from');
    const final = readCheckpointLines(t.runDir).find((c) => c.name === 'final')!;

    const specFile = write('student.grpo.json', { ...BASE, iterations: 2, groups_per_batch: 3, group_size: 1, dataset: { path: 'prompts.jsonl' }, teacher: { run: 'latest', checkpoint: 'final' } });
    const r = await startGrpoRun({ specFile, runsDir: runsDir(), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(r.status, 'completed', r.error);
    const config = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.deepStrictEqual(config.teachers_resolved, [{ label: `${path.basename(t.runDir)}/final`, model: BASE.model, sampler_path: final.sampler_path }]);

    const m = readMetricsLines(r.runDir);
    assert.strictEqual(m.length, 2);
    for (const row of m) {
      assert.strictEqual(typeof row['teacher_kl'], 'number');
      assert.strictEqual(row['teacher_kl/dataset_0'], row['teacher_kl']);
      assert.strictEqual(row['env/all/total_episodes'], 3, 'every prompt-only group (all rewards 0) is kept');
      assert.strictEqual(row['env/all/reward/total'], 0);
    }
    const samples = readJsonl(path.join(r.runDir, 'iteration_000000', 'train_samples.jsonl')).map((l) => SampleRecord.parse(l));
    assert.strictEqual(samples.length, 3);
    // the teacher (not the student) scored the samples: its own compute_logprobs gives the same numbers
    const service = await connect();
    try {
      const teacher = await service.createSamplingClient({ modelPath: final.sampler_path! });
      const student = await service.createSamplingClient({ baseModel: BASE.model });
      let kl = 0;
      let n = 0;
      let differs = false;
      for (const s of samples.filter((x) => x.completion_tokens.length > 0)) {
        assert.strictEqual(s.teacher_logprobs?.length, s.completion_tokens.length);
        const { renderer } = await import('../../../src/core/render').then((r) => r.loadRenderer({ model: BASE.model, cacheDir: path.join(dir, 'cache') }));
        const prompt = renderer.buildGenerationPrompt([{ role: 'user', content: s.question! }]);
        const all = await teacher.computeLogprobs(textInput([...prompt, ...s.completion_tokens]));
        const own = await student.computeLogprobs(textInput([...prompt, ...s.completion_tokens]));
        s.teacher_logprobs!.forEach((v, j) => {
          assert.ok(Math.abs(v - (all[prompt.length + j] as number)) < 1e-4, `token ${j}: ${v} vs ${all[prompt.length + j]}`);
          if (Math.abs(v - (own[prompt.length + j] as number)) > 1e-4) differs = true;
          kl += s.logprobs[j]! - v;
          n++;
        });
      }
      assert.ok(differs, 'the trained teacher scores differently from the base student');
      assert.ok(Math.abs((m[0]!['teacher_kl'] as number) - kl / n) < 1e-3, `teacher_kl ${m[0]!['teacher_kl']} vs ${kl / n}`);
    } finally {
      service.close();
    }
  });

  it('multi-teacher: two datasets, two teachers, teacher_kl per dataset; the base model as its own teacher gives KL 0 before the first update', async () => {
    const specFile = write('multi.grpo.json', {
      ...BASE,
      group_size: 2,
      dataset_configs: [
        { dataset: { path: 'prompts.jsonl' }, teacher: { model: BASE.model }, groups_per_batch: 2 },
        { dataset: { path: 'more.jsonl' }, teacher: { run: 'latest', checkpoint: 'final' }, groups_per_batch: 1 },
      ],
    });
    const r = await startGrpoRun({ specFile, runsDir: path.join(dir, 'runs-multi'), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(r.status, 'completed', r.error);
    const [row] = readMetricsLines(r.runDir);
    assert.ok(Math.abs(row!['teacher_kl/dataset_0'] as number) < 1e-4, `dataset 0: ${row!['teacher_kl/dataset_0']}`);
    assert.strictEqual(typeof row!['teacher_kl/dataset_1'], 'number');
    assert.ok(Math.abs(row!['teacher_kl/dataset_1'] as number) > 1e-4, 'the trained teacher of dataset 1 disagrees with the student');
    const samples = readJsonl(path.join(r.runDir, 'iteration_000000', 'train_samples.jsonl')).map((l) => SampleRecord.parse(l));
    // dataset 0's two groups, then dataset 1's one, two samples each
    const q = samples.map((s) => s.question!);
    assert.strictEqual(q.length, 6);
    assert.ok(q.slice(0, 4).every((x) => ['Say hi', 'Count', 'Add'].includes(x)), q.join(', '));
    assert.deepStrictEqual(q.slice(4), ['Other', 'Other']);
  });
});
