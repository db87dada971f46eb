// The agent's evaluate / eval_status tools on the embedded engine: inline targets + dataset + grader
// give the table at once; a spec of many samples answers at once with its folder and eval_status
// follows it to the table and the regressed problems. Neither goes through the session's one-call lock.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AGENT_TOOLS } from '../../../src/core/agent/tools';
import { TrainingSession } from '../../../src/core/agent/session';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { startEngineServer, type EngineServer } from '../../../src/engine/server';

const EXAMPLE = path.resolve(__dirname, '../../../../examples/arithmetic');
const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;

/** An agent session whose files are under `dir`, on the engine `server`. */
const sessionIn = (dir: string, server: EngineServer, extra: { busyWaitMs?: number } = {}) =>
  new TrainingSession({
    runsDir: path.join(dir, 'runs'),
    cacheDir: path.join(dir, 'cache'),
    baseDir: dir,
    connect: () => ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test' }),
    idleMs: 0,
    ...extra,
  });

describe('agent eval tools', function () {
  this.timeout(120_000);
  let dir: string;
  let backend: ComputeBackend;
  let server: EngineServer;
  let session: TrainingSession;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evaltools-'));
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
    backend = await createComputeBackend({});
    server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend, longPollMs: 2000 });
    session = sessionIn(dir, server);
  });
  after(async () => {
    await session?.close('test over');
    await server?.close();
    await backend?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('evaluate inline returns the table; eval_status gives it again with the regressed problems', async () => {
    const r = await tool('evaluate').run(session, { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'reward.py', n: 2, max_problems: 5, max_tokens: 6 });
    assert.match(r.text, /tinker-studio\/arith-gpt \(baseline\)\s+5 /);
    const results = (r.value as { results: string }).results;
    assert.ok(fs.existsSync(path.join(results, 'summary.json')));
    const st = await tool('eval_status').run(session, { results });
    assert.match(st.text, /pass@2/);
    assert.match(st.text, new RegExp(`results: ${results.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('inline targets: results in evals/agent-<time>/ (not evals/evals/…), the spec inside; eval_status takes the name or the folder', async () => {
    const r = await tool('evaluate').run(session, { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'reward.py', n: 1, max_problems: 3, max_tokens: 4 });
    const results = (r.value as { results: string }).results;
    const name = path.basename(results);
    assert.match(name, /^agent-\d{4}-/);
    assert.strictEqual(results, path.join(dir, 'evals', name));
    assert.ok(fs.existsSync(path.join(results, 'summary.json')));
    assert.ok(fs.existsSync(path.join(results, 'spec.json')), 'the inline spec is kept beside its results');
    assert.ok(!fs.existsSync(path.join(dir, 'evals', 'evals')), 'no doubled results folder');
    assert.deepStrictEqual(fs.readdirSync(path.join(dir, 'evals')).filter((f) => f.endsWith('.eval.json')), [], 'no stray eval spec in evals/');
    for (const given of [name, results, path.relative(dir, results)]) {
      const st = await tool('eval_status').run(session, { results: given });
      assert.strictEqual((st.value as { results: string }).results, results, given);
      assert.match(st.text, /arith-gpt \(baseline\)\s+3 /, given);
    }
    // a spec file, or its name, finds its default folder, named by the spec's `name` field when it has one
    fs.writeFileSync(path.join(dir, 'named.eval.json'), JSON.stringify({ name: 'renamed', dataset: { path: 'holdout.jsonl', max_problems: 2 }, grader: { file: 'reward.py' }, max_tokens: 4, seed: 1, targets: ['tinker-studio/arith-gpt'] }));
    const named = await tool('evaluate').run(session, { spec_file: 'named.eval.json' });
    assert.strictEqual((named.value as { results: string }).results, path.join(dir, 'evals', 'renamed'));
    for (const given of ['named.eval.json', 'renamed']) {
      const st = await tool('eval_status').run(session, { results: given });
      assert.strictEqual((st.value as { results: string }).results, path.join(dir, 'evals', 'renamed'), given);
    }
  });

  it('a large eval answers at once with its folder; eval_status follows it to the end', async () => {
    fs.writeFileSync(
      path.join(dir, 'big.eval.json'),
      JSON.stringify({ dataset: { path: 'holdout.jsonl', max_problems: 150 }, grader: { file: 'reward.py' }, n: 2, max_tokens: 6, seed: 2, targets: ['tinker-studio/arith-gpt'] }),
    );
    const r = await tool('evaluate').run(session, { spec_file: 'big.eval.json' });
    assert.match(r.text, /evaluating in the background/);
    const results = (r.value as { results: string }).results;
    let st = await tool('eval_status').run(session, { results: 'big.eval.json' });
    // follow it as an agent would, until the table says it is complete
    while ((st.value as { running: boolean }).running) {
      await new Promise((res) => setImmediate(res));
      st = await tool('eval_status').run(session, { results });
    }
    assert.match(st.text, /arith-gpt \(baseline\)\s+150 /);
    assert.doesNotMatch(st.text, /INCOMPLETE/);
  });
});

// The eval tools beside a training call in progress: a train_grpo_step whose forward_backward is held
// at the engine's compute backend (a gate this test opens) keeps the session busy (a session call
// answers "busy"), yet evaluate runs its eval to the table and eval_status reports it while the
// training call is still in flight; then the gate opens and the training call completes.
describe('agent eval tools beside a training call in progress', function () {
  this.timeout(120_000);
  let dir: string;
  let real: ComputeBackend;
  let server: EngineServer;
  let session: TrainingSession;
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  let heldCall!: () => void;
  const held = new Promise<void>((resolve) => (heldCall = resolve));

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-evaltools-busy-'));
    for (const f of ['holdout.jsonl', 'train.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(dir, f));
    real = await createComputeBackend({});
    const gated: ComputeBackend = Object.create(real);
    gated.forwardBackward = async (...args) => {
      heldCall();
      await gate;
      return real.forwardBackward(...args);
    };
    server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend: gated, longPollMs: 2000 });
    fs.writeFileSync(
      path.join(dir, 'busy.grpo.json'),
      JSON.stringify({
        name: 'busy',
        model: 'tinker-studio/arith-gpt',
        renderer: 'chatml',
        lora_rank: 4,
        learning_rate: 0.01,
        groups_per_batch: 2,
        group_size: 2,
        max_tokens: 4,
        iterations: 5,
        save_every: 0,
        eval_every: 0,
        seed: 1,
        sampling_seed: 1,
        dataset: { path: 'train.jsonl', prompt_field: 'question', ground_truth_field: 'answer' },
        reward: { file: 'reward.py', workers: 1 },
      }),
    );
    session = sessionIn(dir, server, { busyWaitMs: 0 });
  });
  after(async () => {
    openGate();
    await session?.close('test over');
    await server?.close();
    await real?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('evaluate and eval_status answer while train_grpo_step waits in forward_backward', async () => {
    await tool('init_grpo').run(session, { spec_file: 'busy.grpo.json' });
    let trainSettled = false;
    const training = tool('train_grpo_step')
      .run(session, { num_iterations: 1 })
      .finally(() => (trainSettled = true));
    await held;
    // the session is busy: a session call answers so at once
    await assert.rejects(tool('sample').run(session, { prompts: [{ prompt: 'What is 1 + 1?' }], n: 1 }), /busy: train_grpo_step is still running/);

    const r = await tool('evaluate').run(session, { targets: ['tinker-studio/arith-gpt'], dataset: 'holdout.jsonl', grader: 'reward.py', n: 1, max_problems: 3, max_tokens: 4 });
    assert.match(r.text, /tinker-studio\/arith-gpt \(baseline\)\s+3 /);
    const st = await tool('eval_status').run(session, { results: (r.value as { results: string }).results });
    assert.doesNotMatch(st.text, /INCOMPLETE/);
    assert.strictEqual(trainSettled, false, 'the training call is still in flight, held in forward_backward');
    assert.strictEqual(session.status().state, 'running');

    openGate();
    const t = await training;
    assert.strictEqual((t.value as { last_step: number }).last_step, 0);
  });
});
