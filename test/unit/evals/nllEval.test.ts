// The NLL eval on the embedded engine (real HTTP, the real compute backend): the summary against a hand
// computation from the engine's log-probs, the SFT validation's figure on the same chats, the bootstrap
// interval, the paired comparison of the base model with a checkpoint trained on the chats, resume per
// chat (forward requests counted at the engine's compute backend), the schema's refusals, and the CLI
// running examples/suite/nll.eval.json.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { runEval } from '../../../src/core/evals/runEval';
import { readEvalResults, readTargetNll, targetNllFile, type EvalSummary } from '../../../src/core/evals/results';
import { snapshotFromSummary } from '../../../src/core/evals/resultsView';
import { evalSpecJsonSchema, parseEvalSpecFile, parseEvalSpecValue } from '../../../src/core/evals/spec';
import { bootstrapMean, mean } from '../../../src/core/evals/stats';
import { formatEvalTable } from '../../../src/core/evals/table';
import { loadRenderer } from '../../../src/core/render';
import { chatToDatum, meanNll, toWireSftDatum } from '../../../src/core/sft/datums';
import { textInput } from '../../../src/core/tinker/types';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const SUITE = path.resolve(__dirname, '../../../../examples/suite');
const CLI = path.join(__dirname, '../../../src/cli/main.js');
const MODEL = 'tinker-studio/arith-gpt';

interface ChatLine {
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}
const exampleChats = (): ChatLine[] =>
  fs
    .readFileSync(path.join(SUITE, 'heldout-chats.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as ChatLine);

describe('NLL eval on the engine', function () {
  this.timeout(120_000);
  let engine: CountingEngine;

  before(async () => {
    engine = await startCountingEngine('tinker-nlleval-');
  });
  after(async () => {
    await engine?.close();
  });

  const connect = () => engine.connect();

  /** A folder with the first `count` example chats and an NLL spec over them. */
  function specDir(name: string, spec: Record<string, unknown>, count = 24): string {
    const d = path.join(engine.dir, name);
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, 'chats.jsonl'), exampleChats().slice(0, count).map((c) => JSON.stringify(c)).join('\n') + '\n');
    const file = path.join(d, 'nll.eval.json');
    fs.writeFileSync(file, JSON.stringify({ nll: { dataset: { path: 'chats.jsonl' } }, renderer: 'chatml', targets: [MODEL], ...spec }));
    return file;
  }

  /** Each chat's mean NLL per trained token, by hand from the engine's prompt log-probs of the rendered chat. */
  async function byHand(chats: readonly ChatLine[], source: { baseModel: string } | { modelPath: string }): Promise<Array<{ nll: number; tokens: number }>> {
    const { renderer } = await loadRenderer({ model: MODEL, renderer: 'chatml', cacheDir: engine.cacheDir() });
    const service = await connect();
    try {
      const sampler = await service.createSamplingClient(source);
      const out = [];
      for (const c of chats) {
        const ex = renderer.buildSupervisedExample(c.messages, 'last_assistant_message');
        const lp = await sampler.computeLogprobs(textInput(ex.tokens));
        let num = 0;
        let den = 0;
        for (let t = 1; t < ex.tokens.length; t++) {
          num += -lp[t]! * ex.weights[t]!;
          den += ex.weights[t]!;
        }
        out.push({ nll: num / den, tokens: den });
      }
      return out;
    } finally {
      service.close();
    }
  }

  it('equals the hand computation from the engine\'s log-probs (per chat and in total, to 1e-9), with a bootstrap interval over chats, and agrees with the SFT validation\'s NLL', async () => {
    const file = specDir('hand', {});
    const summary = await runEval({ specFile: file, connect, cacheDir: engine.cacheDir() });
    const chats = exampleChats().slice(0, 24);
    const want = await byHand(chats, { baseModel: MODEL });
    const t = summary.targets[0]!;
    assert.strictEqual(summary.grading, 'nll');
    assert.strictEqual(t.problems, 24);
    assert.strictEqual(summary.problems.length, 24);
    summary.problems.forEach((row, i) => {
      assert.strictEqual(row.problem_id, `chats.jsonl:${i + 1}`, 'the row is the chat, by its id');
      assert.strictEqual(row.question, chats[i]!.messages[0]!.content);
      assert.ok(Math.abs(row.targets[t.id]!.nll! - want[i]!.nll) < 1e-9, `chat ${i}: ${row.targets[t.id]!.nll} vs ${want[i]!.nll}`);
      assert.strictEqual(row.targets[t.id]!.tokens, want[i]!.tokens);
    });
    const total = mean(want.map((w) => w.nll));
    assert.ok(Math.abs(t.metrics.nll!.value - total) < 1e-9, `${t.metrics.nll!.value} vs ${total}`);
    assert.ok(total > 0);
    // the interval: the bootstrap over chats of the per-chat values, with the recorded B and seed
    assert.ok(t.metrics.nll!.lo! < t.metrics.nll!.value && t.metrics.nll!.value < t.metrics.nll!.hi!);
    assert.deepStrictEqual(t.metrics.nll, bootstrapMean(want.map((w) => w.nll), { resamples: summary.bootstrap.resamples, seed: summary.bootstrap.seed }));
    assert.deepStrictEqual(readEvalResults(path.join(path.dirname(file), 'evals', 'nll')).summary, summary);

    // the SFT validation's figure on the same chats: forward (cross_entropy) of the SFT datums on a fresh
    // LoRA of the base model, −Σ(ℓ·w)/Σw with each chat's weights summing to 1 (float32 on both paths)
    const { renderer } = await loadRenderer({ model: MODEL, renderer: 'chatml', cacheDir: engine.cacheDir() });
    const service = await connect();
    try {
      const tc = await service.createLoraTrainingClient(MODEL, { rank: 4 });
      const datums = chats.map((c) => chatToDatum(renderer, c.messages, 'last_assistant_message')!);
      const out = await (await tc.forward(datums.map(toWireSftDatum), 'cross_entropy')).result();
      const sft = meanNll(datums, out.loss_fn_outputs.map((x) => x['logprobs']!.data));
      assert.ok(Math.abs(sft - t.metrics.nll!.value) < 1e-4, `SFT validation ${sft} vs the NLL eval ${t.metrics.nll!.value}`);
    } finally {
      service.close();
    }
  });

  it('pairs the chats: the base model against a checkpoint trained on them, the difference per chat with its paired interval; the table and the panel show NLL', async () => {
    // a checkpoint trained a few steps on the first 12 chats (its NLL on them drops)
    const chats = exampleChats().slice(0, 16);
    const { renderer } = await loadRenderer({ model: MODEL, renderer: 'chatml', cacheDir: engine.cacheDir() });
    const service = await connect();
    let trained: string;
    try {
      const tc = await service.createLoraTrainingClient(MODEL, { rank: 8 });
      const datums = chats.slice(0, 12).map((c) => toWireSftDatum(chatToDatum(renderer, c.messages, 'last_assistant_message')!));
      for (let s = 0; s < 4; s++) {
        await (await tc.forwardBackward(datums, 'cross_entropy')).result();
        await (await tc.optimStep({ learning_rate: 3e-3 })).result();
      }
      const saved = (await (await tc.saveWeightsForSampler('nll-trained')).result()).path;
      assert.ok(saved, 'a sampler path');
      trained = saved;
    } finally {
      service.close();
    }
    const file = specDir('paired', { targets: [MODEL, trained], model: MODEL }, 16);
    const summary = await runEval({ specFile: file, connect, cacheDir: engine.cacheDir() });
    const [base, ckpt] = summary.targets;
    assert.strictEqual(summary.baseline, base!.id);
    const hand = await byHand(chats, { modelPath: trained });
    summary.problems.forEach((row, i) => assert.ok(Math.abs(row.targets[ckpt!.id]!.nll! - hand[i]!.nll) < 1e-9, `checkpoint, chat ${i}`));
    const d = summary.problems.map((row) => row.targets[ckpt!.id]!.nll! - row.targets[base!.id]!.nll!);
    const c = summary.comparisons[0]!;
    assert.deepStrictEqual([c.target, c.baseline, c.problems], [ckpt!.id, base!.id, 16]);
    assert.deepStrictEqual(c.diff, bootstrapMean(d, { resamples: summary.bootstrap.resamples, seed: summary.bootstrap.seed }));
    assert.ok(c.diff.value < 0 && c.diff.hi! < 0, `training on the chats lowers their NLL: ${JSON.stringify(c.diff)}`);
    assert.strictEqual(c.wins, d.filter((x) => x < 0).length, 'a win is a chat with a lower NLL');
    assert.strictEqual(c.losses, d.filter((x) => x > 0).length);
    assert.strictEqual(c.mcnemar_p, undefined);
    assert.ok(c.p_value < 0.05);

    const table = formatEvalTable(summary);
    assert.match(table, /^target\s+chats\s+NLL\/token\s+tokens\/chat$/m);
    assert.match(table, new RegExp(`tinker-studio/arith-gpt \\(baseline\\)\\s+16\\s+${base!.metrics.nll!.value.toFixed(3)} \\[`));
    assert.ok(table.includes(`vs tinker-studio/arith-gpt: NLL ${c.diff.value.toFixed(3)} [${c.diff.lo!.toFixed(3)}, ${c.diff.hi!.toFixed(3)}] on 16 chats`), table);
    assert.match(table, /bootstrap over chats/);

    const snap = snapshotFromSummary('x', summary);
    assert.deepStrictEqual(snap.metrics.map((m) => [m.key, m.goal]), [['nll', 'minimize'], ['tokens', 'minimize']]);
    assert.strictEqual(snap.measure, 'nll', 'the panel words and colours the matrix and the comparisons as NLL (lower is better)');
    assert.deepStrictEqual(snap.rewards[1], summary.problems.map((row) => row.targets[ckpt!.id]!.nll!), 'the matrix holds each chat\'s NLL');
  });

  it('resumes per chat: an interrupted eval, re-run, forwards only the chats not scored yet and equals an uninterrupted one', async () => {
    const spec = { concurrency: 1 };
    const whole = specDir('whole', spec, 12);
    const r0 = engine.served.requests;
    const a = await runEval({ specFile: whole, connect, cacheDir: engine.cacheDir() });
    assert.strictEqual(engine.served.requests - r0, 12, 'one forward request per chat');

    const cut = specDir('cut', spec, 12);
    const ac = new AbortController();
    const r1 = engine.served.requests;
    await assert.rejects(runEval({ specFile: cut, connect, cacheDir: engine.cacheDir(), signal: ac.signal, onProgress: (p) => p.done >= 5 && ac.abort() }));
    assert.strictEqual(engine.served.requests - r1, 5, 'stopped after the fifth chat');
    const out = path.join(path.dirname(cut), 'evals', 'nll');
    const partial = readEvalResults(out).summary;
    assert.strictEqual(partial.complete, false);
    assert.strictEqual(partial.targets[0]!.problems, 5);
    // a crash mid-line leaves a torn tail: dropped, that chat scored again
    fs.appendFileSync(targetNllFile(out, a.targets[0]!.id), '{"chat_id": "chats.jsonl:');
    const r2 = engine.served.requests;
    const progress: number[] = [];
    const b = await runEval({ specFile: cut, connect, cacheDir: engine.cacheDir(), onProgress: (p) => progress.push(p.done) });
    assert.strictEqual(engine.served.requests - r2, 7, 'only the 7 chats not scored are forwarded');
    assert.strictEqual(progress[0], 5);
    const r3 = engine.served.requests;
    await runEval({ specFile: cut, connect, cacheDir: engine.cacheDir() });
    assert.strictEqual(engine.served.requests, r3, 'a complete eval forwards nothing');
    assert.strictEqual(readTargetNll(out, a.targets[0]!.id).length, 12);
    const strip = (s: EvalSummary) => ({ targets: s.targets, problems: s.problems, comparisons: s.comparisons });
    assert.deepStrictEqual(strip(b), strip(a));

    // a record measured on other tokens (here: max_length cuts the longer chats) is stale: those chats are scored again, the others kept
    const { renderer } = await loadRenderer({ model: MODEL, renderer: 'chatml', cacheDir: engine.cacheDir() });
    const longer = exampleChats().slice(0, 12).filter((ch) => renderer.buildSupervisedExample(ch.messages, 'last_assistant_message').tokens.length > 37).length;
    assert.ok(longer > 0 && longer < 12, `${longer} chats longer than 37 tokens`);
    fs.writeFileSync(cut, JSON.stringify({ nll: { dataset: { path: 'chats.jsonl' }, max_length: 37 }, renderer: 'chatml', targets: [MODEL], concurrency: 1 }));
    const r4 = engine.served.requests;
    const c = await runEval({ specFile: cut, connect, cacheDir: engine.cacheDir() });
    assert.strictEqual(engine.served.requests - r4, longer);
    assert.notStrictEqual(c.targets[0]!.metrics.nll!.value, a.targets[0]!.metrics.nll!.value);
  });

  it('the schema: no max_tokens needed, the sampling fields refused with a clear message, the JSON schema says the same; bad chats name their file and line', async () => {
    const ok = parseEvalSpecValue({ nll: { dataset: { path: 'c.jsonl' } }, targets: [MODEL] }, '/w/x.eval.json');
    assert.deepStrictEqual(ok.spec.nll, { dataset: { path: '/w/c.jsonl', messages_field: 'messages', prompt_field: 'prompt', completion_field: 'completion', on_invalid_line: 'stop' }, train_on_what: 'last_assistant_message' });
    assert.strictEqual(ok.spec.n, 1);
    const problems = (v: Record<string, unknown>) => {
      try {
        parseEvalSpecValue({ nll: { dataset: { path: 'c.jsonl' } }, targets: [MODEL], ...v }, '/w/x.eval.json');
      } catch (e) {
        return (e as { problems?: string[] }).problems ?? [String(e)];
      }
      return [];
    };
    assert.deepStrictEqual(problems({ n: 4, max_tokens: 6 }), [
      'x.eval.json: n: not used with "nll": an NLL eval samples nothing (n is a sampling field); remove it',
      'x.eval.json: max_tokens: not used with "nll": an NLL eval samples nothing (max_tokens is a sampling field); remove it',
    ]);
    assert.deepStrictEqual(problems({ temperature: 1 }), ['x.eval.json: temperature: not used with "nll": an NLL eval samples nothing (temperature is a sampling field); remove it']);
    assert.deepStrictEqual(problems({ grader: { file: 'reward.py' } }), [
      'x.eval.json: grader: not used with "nll": an NLL eval scores the chats\' own tokens, it grades no samples (give "grader" or "nll", not both)',
    ]);
    assert.deepStrictEqual(problems({ dataset: { path: 'p.jsonl' } }), ['x.eval.json: dataset: not used with "nll": the chats go in nll.dataset (the top-level dataset holds problems to sample)']);
    assert.match(problems({ nll: { dataset: { path: 'c.jsonl', validation: { fraction: 0.1 } } } }).join('\n'), /nll\.dataset/);
    assert.match(problems({ nll: { dataset: {} } }).join('\n'), /nll\.dataset: give "path" \(a JSONL file\) or "hf"/);
    // without nll, a sampling eval still needs its problems and max_tokens
    assert.throws(() => parseEvalSpecValue({ grader: { file: 'r.py' }, targets: [MODEL] }, '/w/x.eval.json'), (e: { problems: string[] }) => {
      assert.deepStrictEqual(e.problems, ['x.eval.json: dataset: required: the problems to sample (or "nll": {"dataset": …} to score held-out chats)', 'x.eval.json: max_tokens: required: the most tokens sampled per completion']);
      return true;
    });
    const schema = evalSpecJsonSchema() as { if: unknown; then: { properties: Record<string, unknown> }; properties: Record<string, { properties?: Record<string, unknown> }> };
    assert.deepStrictEqual(schema.if, { required: ['nll'] });
    for (const f of ['n', 'temperature', 'max_tokens', 'grader', 'env', 'dataset', 'seed', 'stop']) assert.strictEqual(schema.then.properties[f], false, f);
    assert.ok(schema.properties.nll!.properties!.dataset && schema.properties.nll!.properties!.train_on_what);

    const file = specDir('bad', {}, 3);
    fs.appendFileSync(path.join(path.dirname(file), 'chats.jsonl'), '{"messages": [{"role": "user", "content": "no answer"}]}\n');
    await assert.rejects(runEval({ specFile: file, connect, cacheDir: engine.cacheDir() }), /nll\.eval\.json: nll\.dataset: chats\.jsonl:4: messages: has no assistant message/);
    fs.writeFileSync(file, JSON.stringify({ nll: { dataset: { path: 'missing.jsonl' } }, targets: [MODEL] }));
    await assert.rejects(parseEvalSpecFile(file), /nll\.eval\.json: nll\.dataset\.path: .*missing\.jsonl does not exist/);
  });

  it('`tinker-studio eval examples/suite/nll.eval.json` scores the 120 held-out chats on arith-chat and prints the table', () => {
    assert.strictEqual(exampleChats().length, 120);
    const out = path.join(engine.dir, 'cli-out');
    const env = { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_CACHE_DIR: path.join(engine.dir, 'cli-cache') };
    const r = spawnSync(process.execPath, [CLI, 'eval', path.join(SUITE, 'nll.eval.json'), '--out', out], { env, encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
    const s = readEvalResults(out).summary;
    assert.ok(s.complete);
    assert.strictEqual(s.targets[0]!.problems, 120);
    assert.ok(r.stdout.includes(formatEvalTable(s)), r.stdout);
    assert.match(r.stdout, /tinker-studio\/arith-chat \(baseline\)\s+120\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]/);
    assert.match(r.stderr, /scored 120\/120 chats/, 'progress counts chats, not samples');
  });
});
