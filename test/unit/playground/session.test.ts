// The playground session against the real embedded engine (in this process, over HTTP) with a real
// Python reward: both sides sampled (the base model and a sampler checkpoint), rewards through the
// reward runner, seeds, clear errors for a missing checkpoint, an unserved model and a missing
// renderer, and a cancel after which the engine has no request of the run left.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { appendRewardExample } from '../../../src/core/playground/examples';
import { PlaygroundDeps, renderedPrompt, startPlayground } from '../../../src/core/playground/session';
import { parseExamples } from '../../../src/core/reward/examples';
import { findProblem, runProblems } from '../../../src/core/playground/problems';
import type { PlaygroundEvent, PlaygroundRequest } from '../../../src/core/playground/types';
import { loadRenderer } from '../../../src/core/render';
import { createRewardRunner } from '../../../src/core/reward';
import type { RewardRunner } from '../../../src/core/reward/types';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { TestEngine, startTestEngine, writeReward } from '../grpo/engineFixture';

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function collect(run: AsyncIterable<PlaygroundEvent>): Promise<PlaygroundEvent[]> {
  const out: PlaygroundEvent[] = [];
  for await (const e of run) out.push(e);
  return out;
}

describe('playground session on the embedded engine', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: TestEngine;
  let service: ServiceClient;
  let reward: RewardRunner;
  let checkpoint: string;
  let deps: PlaygroundDeps;

  const request = (o: Partial<PlaygroundRequest> = {}): PlaygroundRequest => ({
    prompt: { messages: [{ role: 'user', content: 'What is 1 + 2?' }], groundTruth: '3' },
    params: { temperature: 1, topP: 1, topK: -1, maxTokens: 6, n: 3, seed: 7 },
    sides: { A: { kind: 'base', model: RANDOM_MODEL }, B: { kind: 'checkpoint', path: checkpoint } },
    ...o,
  });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'playground-'));
    engine = await startTestEngine(dir);
    service = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
    reward = await createRewardRunner({ file: writeReward(dir), workers: 1 });
    const training = await service.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
    const saved = await (await training.saveWeightsForSampler('playground')).result();
    assert.ok(saved.path, 'the engine names the saved sampler checkpoint');
    checkpoint = saved.path;
    deps = { service, reward, rendererFor: (model) => loadRenderer({ model, cacheDir: path.join(dir, 'cache') }) };
  });

  after(async () => {
    await reward?.close();
    service?.close();
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('samples N on each side, scores each sample with the reward runner and gives each side its mean', async () => {
    const run = startPlayground(request(), deps);
    const events = await collect(run);
    const summary = await run.summary;
    const infos = events.flatMap((e) => (e.type === 'side' ? [e.info] : []));
    const samples = events.flatMap((e) => (e.type === 'sample' ? [e.sample] : []));
    assert.deepStrictEqual(events.filter((e) => e.type === 'sideError'), []);
    assert.deepStrictEqual(infos.map((i) => [i.side, i.baseModel, i.renderer]).sort(), [['A', RANDOM_MODEL, 'chatml'], ['B', RANDOM_MODEL, 'chatml']]);
    const { renderer } = await deps.rendererFor(RANDOM_MODEL);
    const expectedPrompt = renderer.buildGenerationPrompt(request().prompt.messages).length;
    for (const i of infos) {
      assert.strictEqual(i.promptTokens, expectedPrompt);
      assert.deepStrictEqual(i.stop, (renderer.stopSequences() as { tokens: number[] }).tokens, 'the stop defaults to the renderer’s');
    }
    for (const side of ['A', 'B'] as const) {
      const mine = samples.filter((s) => s.side === side);
      assert.deepStrictEqual(mine.map((s) => s.index).sort(), [0, 1, 2]);
      for (const s of mine) {
        assert.ok(s.tokens.length > 0 && s.tokens.length <= 6);
        assert.strictEqual(s.logprobs.length, s.tokens.length);
        assert.strictEqual(s.reward, s.text.length % 2 === 0 ? 1 : 0, `the reward file's verdict on ${JSON.stringify(s.text)}`);
      }
      const mean = mine.reduce((a, s) => a + (s.reward ?? 0), 0) / mine.length;
      assert.deepStrictEqual(summary.sides[side], { samples: 3, meanReward: mean });
    }
    assert.strictEqual(summary.cancelled, false);
  });

  it('gives the same samples for the same seed, each sample its own seed', async () => {
    const texts = async () => {
      const run = startPlayground(request({ sides: { A: { kind: 'base', model: RANDOM_MODEL } }, params: { temperature: 1, topP: 1, topK: -1, maxTokens: 8, n: 4, seed: 11 } }), deps);
      const ev = await collect(run);
      return ev.flatMap((e) => (e.type === 'sample' ? [[e.sample.index, e.sample.tokens.join(',')] as const] : [])).sort((a, b) => a[0] - b[0]);
    };
    const first = await texts();
    assert.deepStrictEqual(await texts(), first);
    assert.ok(new Set(first.map((t) => t[1])).size > 1, 'samples of one run differ (seed + index)');
  });

  it('leaves rewards out without a ground truth', async () => {
    const run = startPlayground(request({ prompt: { messages: [{ role: 'user', content: 'hi' }] }, sides: { A: { kind: 'base', model: RANDOM_MODEL } } }), deps);
    const samples = (await collect(run)).flatMap((e) => (e.type === 'sample' ? [e.sample] : []));
    assert.strictEqual(samples.length, 3);
    assert.ok(samples.every((s) => s.reward === undefined));
    assert.deepStrictEqual(await run.summary, { sides: { A: { samples: 3 } }, cancelled: false });
  });

  it('says which checkpoint is gone, which model is not served and which renderer is missing, and the other side still samples', async () => {
    const gone = startPlayground(request({ sides: { A: { kind: 'base', model: RANDOM_MODEL }, B: { kind: 'checkpoint', path: 'tinker://no-such-run/sampler_weights/x' } } }), deps);
    const events = await collect(gone);
    const errors = events.flatMap((e) => (e.type === 'sideError' ? [e] : []));
    assert.strictEqual(errors.length, 1);
    assert.strictEqual(errors[0]!.side, 'B');
    assert.match(errors[0]!.message, /checkpoint tinker:\/\/no-such-run\/sampler_weights\/x no longer exists/);
    assert.strictEqual(events.filter((e) => e.type === 'sample').length, 3, 'side A is unaffected');

    const unserved = await collect(startPlayground(request({ sides: { A: { kind: 'base', model: 'Qwen/Qwen3-8B' } } }), deps));
    assert.deepStrictEqual(unserved.map((e) => e.type), ['sideError']);
    assert.match((unserved[0] as { message: string }).message, /does not serve Qwen\/Qwen3-8B; it serves .*tinker-studio\/random-gpt/);

    const noRenderer = { ...deps, rendererFor: (model: string) => loadRenderer({ model, renderer: 'tml_v0', cacheDir: path.join(dir, 'cache') }) };
    const missing = await collect(startPlayground(request({ sides: { A: { kind: 'base', model: RANDOM_MODEL } } }), noRenderer));
    assert.deepStrictEqual(missing.map((e) => e.type), ['sideError']);
    assert.match((missing[0] as { message: string }).message, /no renderer for tinker-studio\/random-gpt: renderer "tml_v0" .*is not implemented in Tinker Studio/);
  });

  it('a prompt longer than the model\'s context is one error per side naming its length; a long one gets max_tokens capped', async () => {
    const long = 'What is 1 + 2? '.repeat(5);
    const events = await collect(startPlayground(request({ prompt: { messages: [{ role: 'user', content: long }] } }), deps));
    const errors = events.flatMap((e) => (e.type === 'sideError' ? [e] : []));
    assert.deepStrictEqual(errors.map((e) => e.side).sort(), ['A', 'B']);
    for (const e of errors) assert.match(e.message, /the prompt is 94 tokens, longer than the context of tinker-studio\/random-gpt \(64 tokens\)/);
    assert.strictEqual(events.filter((e) => e.type === 'sample').length, 0);
    // 30 bytes of content and 19 of chatml: 15 positions left of the 64, so 40 asked become 15 at most
    const near = await collect(startPlayground(request({ prompt: { messages: [{ role: 'user', content: 'x'.repeat(30) }] }, params: { temperature: 1, topP: 1, topK: -1, maxTokens: 40, n: 2, seed: 1 } }), deps));
    const samples = near.flatMap((e) => (e.type === 'sample' ? [e.sample] : []));
    assert.strictEqual(samples.length, 4, JSON.stringify(near.filter((e) => e.type === 'sideError')));
    for (const s of samples) assert.ok(s.tokens.length <= 15, `${s.tokens.length} tokens`);
  });

  it('stops on cancel: nothing more is submitted and the engine has no request of the run left', async () => {
    const issuedBefore = engine.server.stats().issuedRequests;
    const controller = new AbortController();
    const n = 40;
    const run = startPlayground(request({ params: { temperature: 1, topP: 1, topK: -1, maxTokens: 48, n }, sides: { A: { kind: 'base', model: RANDOM_MODEL }, B: { kind: 'checkpoint', path: checkpoint } } }), { ...deps, maxInFlight: 2 }, controller.signal);
    let seen = 0;
    for await (const e of run) {
      if (e.type === 'sideError') assert.fail(e.message);
      if (e.type === 'sample') {
        seen++;
        controller.abort();
      }
    }
    const summary = await run.summary;
    assert.strictEqual(summary.cancelled, true);
    assert.ok(seen >= 1 && seen < 2 * n);
    await until(() => engine.server.stats().pendingRequests === 0, 'the engine to finish the requests in flight at the cancel');
    const issued = engine.server.stats().issuedRequests - issuedBefore;
    assert.ok(issued <= seen + 2 * 2, `the engine got ${issued} sample requests: the samples seen plus at most the ones in flight per side`);
  });

  it('shows the rendered prompt with its special tokens and length', async () => {
    const { renderer } = await deps.rendererFor(RANDOM_MODEL);
    const r = renderedPrompt(renderer, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2 + 2?' },
    ]);
    assert.strictEqual(r.renderer, 'chatml');
    assert.strictEqual(r.text, '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n');
    assert.strictEqual(r.tokens, renderer.buildGenerationPrompt([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 2 + 2?' }]).length);
  });
});

describe('playground: save as reward example', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'playground-ex-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('appends a line the examples parser reads back, after a newline when the file has none', async () => {
    const reward = path.join(dir, 'reward.py');
    fs.writeFileSync(path.join(dir, 'reward.examples.jsonl'), '{"completion": "3", "ground_truth": "3", "expected": 1}');
    const at = await appendRewardExample(reward, { completion: 'The answer is "4"\n', groundTruth: '4', expected: 0.5 });
    assert.deepStrictEqual(at, { file: path.join(dir, 'reward.examples.jsonl'), line: 2 });
    const text = fs.readFileSync(at.file, 'utf8');
    const parsed = parseExamples(text, 'reward.examples.jsonl');
    assert.deepStrictEqual(parsed.diagnostics, []);
    assert.deepStrictEqual(parsed.examples.map((e) => [e.completion, e.groundTruth, e.expected, e.line]), [
      ['3', '3', 1, 1],
      ['The answer is "4"\n', '4', 0.5, 2],
    ]);
  });

  it('creates the examples file when there is none', async () => {
    const at = await appendRewardExample(path.join(dir, 'score.ts'), { completion: 'x', groundTruth: 'y', expected: 0 });
    assert.strictEqual(at.file, path.join(dir, 'score.examples.jsonl'));
    assert.strictEqual(at.line, 1);
    assert.strictEqual(fs.readFileSync(at.file, 'utf8'), '{"completion":"x","ground_truth":"y","expected":0}\n');
  });
});

describe('playground: pick a problem of a run', () => {
  const root = path.resolve(__dirname, '../../../..');
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'playground-problems-'));
    fs.cpSync(path.join(root, 'examples/arithmetic'), path.join(dir, 'arith'), { recursive: true });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reads the run's holdout and train problems with their ground truth through its spec, and its reward file", async () => {
    const runDir = path.join(dir, 'runs', 'arith-1');
    fs.mkdirSync(runDir, { recursive: true });
    fs.writeFileSync(path.join(runDir, 'config.json'), JSON.stringify({ model_name: RANDOM_MODEL, spec_file: path.join(dir, 'arith', 'arith.grpo.json'), reward: { file: 'reward.py' } }));
    const problems = await runProblems(runDir, path.join(dir, 'cache'));
    assert.ok(problems.holdout.length > 0 && problems.train.length > 0);
    assert.strictEqual(problems.rewardFile, path.join(dir, 'arith', 'reward.py'));
    const first = problems.holdout[0]!;
    const [x, y] = /What is (\d+) \+ (\d+)\?/.exec(first.messages.at(-1)!.content)!.slice(1).map(Number);
    assert.strictEqual(first.groundTruth, String(x! + y!));
    assert.strictEqual(findProblem(problems, first.id), first);
    assert.strictEqual(findProblem(problems, problems.train[3]!.id), problems.train[3]);
    assert.strictEqual(findProblem(problems, 'no-such-id'), undefined);
  });

  it('finds a problem of a dataset outside the spec\'s folder by its id, and by the absolute id a run recorded before ids were relative', async () => {
    const specDir = path.join(dir, 'specs');
    fs.mkdirSync(specDir, { recursive: true });
    const spec = JSON.parse(fs.readFileSync(path.join(dir, 'arith', 'arith.grpo.json'), 'utf8'));
    fs.writeFileSync(path.join(specDir, 'far.grpo.json'), JSON.stringify({ ...spec, dataset: { ...spec.dataset, path: '../arith/train.jsonl', holdout: { path: '../arith/holdout.jsonl' } }, reward: { file: '../arith/reward.py' } }));
    const runDir = path.join(dir, 'runs', 'far-1');
    fs.mkdirSync(runDir, { recursive: true });
    fs.writeFileSync(path.join(runDir, 'config.json'), JSON.stringify({ model_name: RANDOM_MODEL, spec_file: path.join(specDir, 'far.grpo.json') }));
    const problems = await runProblems(runDir, path.join(dir, 'cache'));
    const p = problems.train[5]!;
    assert.match(p.id, /^\.\.\/arith\/train\.jsonl:\d+$/);
    assert.strictEqual(findProblem(problems, p.id), p);
    const old = `${path.join(dir, 'arith', 'train.jsonl')}:${p.id.split(':').pop()}`;
    assert.strictEqual(findProblem(problems, old), p, old);
    assert.strictEqual(findProblem(problems, `${path.join(dir, 'elsewhere', 'train.jsonl')}:${p.id.split(':').pop()}`), undefined);
  });

  it('says when the run has no spec to read its dataset from', async () => {
    const runDir = path.join(dir, 'runs', 'cookbook');
    fs.mkdirSync(runDir, { recursive: true });
    fs.writeFileSync(path.join(runDir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B' }));
    await assert.rejects(runProblems(runDir, path.join(dir, 'cache')), /names no spec file, so its dataset is not known/);
  });
});
