// Top-K soft-target distillation in the SFT kind: the (N, K) soft targets by hand (weights the
// teacher's probabilities renormalised over K tokens times the position's weight, padding, the
// alignment of position t with the teacher's entry t + 1), the spec's fields, and on the embedded
// engine (real HTTP, real compute): the teacher's top-k prompt log-probs against its own full
// distribution, the student's (N, K) cross_entropy log-probs against its full distribution, a run
// from a spec whose teacher is another run's `final` checkpoint, and a teacher of another tokenizer
// refused before the run directory exists.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadRenderer } from '../../../src/core/render';
import type { Chat } from '../../../src/core/training/chats';
import { chatToDatum, meanNll, SftDatum, toWireSftDatum } from '../../../src/core/sft/datums';
import { parseSftSpecValue } from '../../../src/core/sft/spec';
import { sftLoopConfig, startSftRun } from '../../../src/core/sft/start';
import { softTargetDatum, softTargetDatums, teacherTopK } from '../../../src/core/sft/topK';
import { denseTensor } from '../../../src/core/tinker/tensors';
import { ServiceClient } from '../../../src/core/tinker/client';
import { textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, readCheckpointLines, readMetricsLines, startEngineClient } from '../grpo/engineFixture';

const close = (a: number, b: number, eps = 1e-6) => assert.ok(Math.abs(a - b) < eps, `${a} vs ${b}`);

describe('top-K soft targets', () => {
  // 4 tokens, 3 positions; position 0 untrained, positions 1 and 2 trained with weights 0.25 and 0.75
  const d: SftDatum = { modelInput: [10, 11, 12], targetTokens: [11, 12, 13], weights: Float32Array.from([0, 0.25, 0.75]), truncated: false };
  const topk = [null, [[20, -1], [21, -2]], [[30, Math.log(0.5)], [31, Math.log(0.3)], [32, Math.log(0.1)]], [[13, -0.1]]] as const;

  it('position t takes the teacher\'s entry t + 1: its K most likely tokens, weights renormalised over them times the position\'s weight', () => {
    const s = softTargetDatum(d, topk as unknown as Parameters<typeof softTargetDatum>[1], 2);
    assert.strictEqual(s.k, 2);
    assert.deepStrictEqual(s.modelInput, d.modelInput);
    // position 0 (weight 0): the chat's own token, weight 0; position 1: tokens 30, 31 of 0.5 and 0.3,
    // renormalised to 0.625 and 0.375, times 0.25; position 2: one entry only, padded at weight 0
    assert.deepStrictEqual(s.targetTokens, [11, 11, 30, 31, 13, 13]);
    const want = [0, 0, 0.625 * 0.25, 0.375 * 0.25, 0.75, 0];
    Array.from(s.weights).forEach((w, i) => close(w, want[i]!));
    // each trained position's weights sum to its weight: the chat still counts once
    close(s.weights[2]! + s.weights[3]!, 0.25);
    close(s.weights[4]! + s.weights[5]!, 0.75);
    // the wire form: (N, K) target tokens and weights
    const wire = toWireSftDatum(s);
    assert.deepStrictEqual(wire.loss_fn_inputs.target_tokens!.shape, [3, 2]);
    assert.deepStrictEqual(Array.from(denseTensor(wire.loss_fn_inputs.weights!, 'w').data), Array.from(s.weights));
    assert.deepStrictEqual(Array.from(denseTensor(wire.loss_fn_inputs.target_tokens!, 't').data), s.targetTokens);
    // the soft cross-entropy: −Σ w·ℓ / Σ w over the (N, K) entries
    const lp = [-9, -9, -1, -2, -0.5, -9];
    close(meanNll([s], [lp]), (0.625 * 0.25 * 1 + 0.375 * 0.25 * 2 + 0.75 * 0.5) / 1);
  });

  it('K = 1 keeps the teacher\'s most likely token at the whole weight; misaligned or missing entries are errors', () => {
    const s = softTargetDatum(d, topk as unknown as Parameters<typeof softTargetDatum>[1], 1);
    assert.deepStrictEqual(s.targetTokens, [11, 30, 13]);
    assert.deepStrictEqual(Array.from(s.weights), [0, 0.25, 0.75]);
    assert.throws(() => softTargetDatum(d, topk.slice(1) as unknown as Parameters<typeof softTargetDatum>[1], 2), /teacher: 3 top-k prompt log-prob entries for a sequence of 4 tokens/);
    assert.throws(() => softTargetDatum(d, [null, null, null, [[1, -1]]], 2), /no top-k log-probs at position 2, which the chat trains/);
    assert.throws(() => softTargetDatum(softTargetDatum(d, topk as unknown as Parameters<typeof softTargetDatum>[1], 2), [], 2), /already has soft targets/);
  });

  it('the spec: n_teacher_targets only with a teacher, K defaults to the cookbook\'s 20, the teacher\'s forms are checked', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-topk-spec-'));
    try {
      fs.writeFileSync(path.join(dir, 'c.jsonl'), '{"prompt":"a","completion":"b"}\n');
      const parse = (v: Record<string, unknown>) => parseSftSpecValue({ model: RANDOM_MODEL, dataset: { path: 'c.jsonl' }, ...v }, path.join(dir, 'x.sft.json'));
      await assert.rejects(parse({ n_teacher_targets: 5 }), /n_teacher_targets: only used with "teacher"/);
      await assert.rejects(parse({ teacher: { checkpoint: 'final' } }), /teacher\.checkpoint: must be a tinker:\/\/ sampler path/);
      await assert.rejects(parse({ teacher: { model: 'a' }, n_teacher_targets: 0 }), /n_teacher_targets/);
      const { spec } = await parse({ teacher: { run: 'latest', checkpoint: 'final' } });
      assert.strictEqual(sftLoopConfig(spec, 1e-3).nTeacherTargets, 20);
      const { spec: plain } = await parse({});
      assert.strictEqual(sftLoopConfig(plain, 1e-3).nTeacherTargets, undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('top-K distillation on the engine', function () {
  this.timeout(300_000);
  let env: EngineClient | undefined;
  let dir: string;
  let teacherRun: string;
  const connect = () => ServiceClient.connect({ baseUrl: env!.engine.server.url, clientVersion: 'test' });
  const chat = (i: number): Chat => ({ id: `c:${i}`, messages: [{ role: 'user', content: `${i % 10}+${(i * 3) % 10}=` }, { role: 'assistant', content: String((i % 10) + ((i * 3) % 10)) }] });
  const chatsJsonl = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ messages: chat(i).messages })).join('\n') + '\n';

  before(async () => {
    env = await startEngineClient('tinker-sft-topk-');
    dir = env.dir;
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), chatsJsonl(32));
    // the teacher: plain SFT on the chats' own answers, its `final` sampler checkpoint
    fs.writeFileSync(path.join(dir, 'teacher.sft.json'), JSON.stringify({ name: 'teacher', model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.02, batch_size: 8, max_steps: 6, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' } }));
    const t = await startSftRun({ specFile: path.join(dir, 'teacher.sft.json'), runsDir: path.join(dir, 'teachers'), connect, cacheDir: path.join(dir, 'cache') });
    assert.strictEqual(t.status, 'completed', t.error);
    teacherRun = t.runDir;
  });
  after(async () => {
    await env?.close();
  });

  it('the teacher\'s top-k prompt log-probs are its most likely tokens, sorted, with its own log-probs of them', async () => {
    const { renderer } = await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') });
    const d = chatToDatum(renderer, chat(3).messages, 'last_assistant_message')!;
    const final = readCheckpointLines(teacherRun).find((c) => c.name === 'final')!;
    const teacher = await env!.service.createSamplingClient({ modelPath: final.sampler_path! });
    const V = 259;
    const all = await teacherTopK(teacher, d, V);
    const full = [...d.modelInput, d.targetTokens.at(-1)!];
    assert.strictEqual(all.length, full.length);
    assert.strictEqual(all[0], null);
    const own = await teacher.computeLogprobs(textInput(full));
    for (let t = 1; t < full.length; t++) {
      const e = all[t]!;
      assert.strictEqual(e.length, V, 'the whole vocabulary at K = V');
      for (let j = 1; j < e.length; j++) assert.ok(e[j - 1]![1] >= e[j]![1], `position ${t}: sorted`);
      // a distribution: Σ exp(ℓ) = 1 over the whole vocabulary
      close(e.reduce((s, [, lp]) => s + Math.exp(lp), 0), 1, 1e-3);
      // the sequence's own token carries the log-prob compute_logprobs gives it
      close(e.find(([tok]) => tok === full[t])![1], own[t] as number, 1e-4);
    }
    // K = 4 is the first four of those
    const four = await teacherTopK(teacher, d, 4);
    for (let t = 1; t < full.length; t++) assert.deepStrictEqual(four[t]!.map(([tok]) => tok), all[t]!.slice(0, 4).map(([tok]) => tok));
  });

  it('the student\'s (N, K) cross_entropy log-probs are its own log-probs of the K targets at each position', async () => {
    const { renderer } = await loadRenderer({ model: RANDOM_MODEL, cacheDir: path.join(dir, 'cache') });
    const final = readCheckpointLines(teacherRun).find((c) => c.name === 'final')!;
    const teacher = await env!.service.createSamplingClient({ modelPath: final.sampler_path! });
    const hard = [1, 2].map((i) => chatToDatum(renderer, chat(i).messages, 'last_assistant_message')!);
    const K = 5;
    const soft = await softTargetDatums(teacher, hard, K, { concurrency: 2 });
    const student = await env!.service.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 3 });
    const out = await (await student.forward(soft.map(toWireSftDatum), 'cross_entropy')).result();
    // the student's full distributions (K = V), from its sampler (the LoRA starts as the base model)
    const sampler = await env!.service.createSamplingClient({ baseModel: RANDOM_MODEL });
    for (const [i, s] of soft.entries()) {
      const lp = out.loss_fn_outputs[i]!.logprobs!;
      assert.deepStrictEqual(lp.shape, [s.modelInput.length, K]);
      const dist = await teacherTopK(sampler, hard[i]!, 259);
      for (let t = 0; t < s.modelInput.length; t++)
        for (let j = 0; j < K; j++) close(lp.data[t * K + j]!, dist[t + 1]!.find(([tok]) => tok === s.targetTokens[t * K + j])![1], 1e-3);
      // only the answer's positions carry weight, and each carries its whole weight
      for (let t = 0; t < s.modelInput.length; t++) close(s.weights.slice(t * K, t * K + K).reduce((a, b) => a + b, 0), hard[i]!.weights[t]!, 1e-6);
    }
    await student.unload();
  });

  it('a run from its spec distils the teacher\'s top K ({"run": <dir>, "checkpoint": "final"}): the cross-entropy to the teacher falls; the resolved teacher is kept', async () => {
    const specFile = path.join(dir, 'student.sft.json');
    fs.writeFileSync(specFile, JSON.stringify({ name: 'student', model: RANDOM_MODEL, lora_rank: 4, learning_rate: 0.02, batch_size: 8, max_steps: 8, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' }, teacher: { run: path.relative(dir, teacherRun), checkpoint: 'final' }, n_teacher_targets: 4 }));
    const logs: string[] = [];
    const phases = new Set<string>();
    const r = await startSftRun({ specFile, runsDir: path.join(dir, 'students'), connect, cacheDir: path.join(dir, 'cache'), log: (l) => logs.push(l), onEvent: (e) => e.type === 'phase' && phases.add(e.phase) });
    assert.strictEqual(r.status, 'completed', r.error);
    const cfg = JSON.parse(fs.readFileSync(path.join(r.runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    const final = readCheckpointLines(teacherRun).find((c) => c.name === 'final')!;
    assert.deepStrictEqual(cfg.teacher_resolved, { label: `${path.basename(teacherRun)}/final`, model: RANDOM_MODEL, sampler_path: final.sampler_path });
    assert.ok(logs.some((l) => /teacher: .*\/final \(tinker-studio\/random-gpt\); top-4 soft targets/.test(l)), logs.join('\n'));
    assert.ok(phases.has('teacher'), 'the teacher phase is reported');
    const m = readMetricsLines(r.runDir).map((x) => x['train_mean_nll'] as number);
    assert.strictEqual(m.length, 8);
    // 32 chats in batches of 8: steps 4..7 see the chats of steps 0..3 again (another order)
    const first = (m[0]! + m[1]! + m[2]! + m[3]!) / 4;
    const last = (m[4]! + m[5]! + m[6]! + m[7]!) / 4;
    assert.ok(last < first - 0.1, `cross-entropy to the teacher's top 4: ${first} → ${last}`);
  });

  it('a teacher the backend does not serve is refused as unknown, with the models it serves, before the run directory exists (another tokenizer: grpo/distill.test.ts)', async () => {
    const specFile = path.join(dir, 'mismatch.sft.json');
    fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, max_steps: 1, dataset: { path: 'chats.jsonl' }, teacher: { model: 'Qwen/Qwen3-8B' } }));
    const runs = path.join(dir, 'runs-mismatch');
    await assert.rejects(startSftRun({ specFile, runsDir: runs, connect, cacheDir: path.join(dir, 'cache') }), (e: Error) => /^teacher\.model: Qwen\/Qwen3-8B is not a model the backend serves; it serves .*tinker-studio\/random-gpt/.test(e.message) && !/tokenizer/.test(e.message));
    assert.ok(!fs.existsSync(runs));
  });
});
