// The Tinker client under faults: a real fault-injecting proxy (faultProxy.ts) in front of the real
// embedded engine, which can be restarted on the same data dir. For every fault the client recovers,
// sends training requests in seq_id order, and no training step is applied twice — judged from the
// engine's own record of applied steps (GET /api/v1/_engine/applied_steps).
// The client's waits between retries are real timers shortened 50× (the requested delays are kept,
// so the policy can be checked); nothing here waits on the wall clock.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ServiceClient, TrainingClient } from '../../../src/core/tinker/client';
import {
  AuthenticationError,
  ConnectionError,
  NotFoundError,
  PromiseExpiredError,
  ServerError,
  TinkerError,
  TrainingSequenceError,
} from '../../../src/core/tinker/errors';
import { Sleep, realSleep } from '../../../src/core/tinker/transport';
import { textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';
import { CloudAuthStandIn, Fault, FaultProxy, ProxiedRequest, SeenRequest } from './faultProxy';
import { AppliedStep, RestartableEngine } from './restartableEngine';
import { sftDatum } from './engineFixtures';
import { mulberry32 } from '../../../src/core/data/prng';

const IM_END = 258;
const ADAM = { learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 };

const qa = (x: number, y: number) => sftDatum(`<|im_start|>user\nWhat is ${x} + ${y}?<|im_end|>\n<|im_start|>assistant\n${x + y}<|im_end|>`);
const batchOf = (step: number) => [qa(step, 7), qa(3 * step + 1, 12)];
const probe = qa(41, 17);

/** The client's sleeps: the delay it asked for is recorded; the real wait is 50× shorter. */
function shortSleeps(): { asked: number[]; sleep: Sleep } {
  const asked: number[] = [];
  return { asked, sleep: (ms, signal) => (asked.push(ms), realSleep(ms / 50, signal)) };
}

const isPath = (p: string) => (r: ProxiedRequest) => r.path === `/api/v1/${p}`;
const polling = (type: string) => (r: ProxiedRequest) => r.path === '/api/v1/retrieve_future' && r.headers['x-tinker-request-type'] === type;

/** Applied steps of one model are 1, 2, 3 … each exactly once, in order. */
function assertContiguous(steps: AppliedStep[], modelId: string): number[] {
  const seqs = steps.filter((s) => s.model_id === modelId).map((s) => s.seq_id);
  const first = seqs[0] ?? 1;
  assert.deepStrictEqual(seqs, seqs.map((_, i) => first + i), `applied seq_ids of ${modelId} in order, each once: ${seqs.join(',')}`);
  return seqs;
}

async function trainStep(tc: TrainingClient, step: number): Promise<number> {
  const fb = await tc.forwardBackward(batchOf(step), 'cross_entropy');
  const opt = await tc.optimStep(ADAM);
  const out = await fb.result();
  await opt.result();
  return out.metrics['loss:sum']!;
}

async function probeLogprobs(tc: TrainingClient): Promise<number[]> {
  const out = await (await tc.forward([probe], 'cross_entropy')).result();
  return Array.from(out.loss_fn_outputs[0]!.logprobs!.data);
}

describe('Tinker client under faults (fault-injecting proxy in front of the embedded engine)', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: RestartableEngine;
  let proxy: FaultProxy;
  let sleeps: ReturnType<typeof shortSleeps>;
  let client: ServiceClient;
  let tc: TrainingClient;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-faults-'));
    engine = await RestartableEngine.start(dir);
    proxy = await FaultProxy.start({ upstream: engine.url });
    sleeps = shortSleeps();
    client = await ServiceClient.connect({ baseUrl: proxy.url, sleep: sleeps.sleep, requestTimeoutMs: 5000, pollTimeoutMs: 5000, heartbeatIntervalMs: 60_000 });
    tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
  });
  after(async () => {
    client?.close();
    await proxy?.close();
    await engine?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The proxy's entries for training submissions of this model with this seq_id. */
  const submissions = (p: string, seqId: number) => proxy.seen.filter((s) => s.path === `/api/v1/${p}` && s.modelId === tc.modelId && s.seqId === seqId);
  const lastSeq = (p: string) => Math.max(...proxy.seen.filter((s) => s.path === `/api/v1/${p}` && s.modelId === tc.modelId).map((s) => s.seqId ?? 0));

  afterEach(async () => {
    assert.strictEqual(proxy.pendingRules(), 0, 'every scripted fault fired');
    assertContiguous(await engine.appliedSteps(), tc.modelId);
  });

  it('500 on a training submission: sent again with the same seq_id and idempotency key, applied once', async () => {
    proxy.inject({ match: isPath('optim_step'), fault: { kind: 'status', status: 500 } });
    await trainStep(tc, 0);
    const tries = submissions('optim_step', lastSeq('optim_step'));
    assert.deepStrictEqual(tries.map((t) => t.status), [500, 200]);
    assert.strictEqual(tries[0]!.idempotencyKey, tries[1]!.idempotencyKey, 'an HTTP-layer retry keeps its idempotency key');
    const applied = (await engine.appliedSteps()).filter((s) => s.model_id === tc.modelId && s.seq_id === tries[0]!.seqId);
    assert.strictEqual(applied.length, 1);
  });

  it('502 after the engine applied a forward_backward: the replay gets the original future, applied once', async () => {
    proxy.inject({ match: isPath('forward_backward'), fault: { kind: 'status', status: 502, afterForward: true } });
    const loss = await trainStep(tc, 1);
    assert.ok(Number.isFinite(loss));
    const tries = submissions('forward_backward', lastSeq('forward_backward'));
    assert.deepStrictEqual(tries.map((t) => t.fault ?? 'forwarded'), ['status 502 after forward', 'forwarded']);
    const applied = (await engine.appliedSteps()).filter((s) => s.model_id === tc.modelId && s.seq_id === tries[0]!.seqId);
    assert.deepStrictEqual(applied.map((a) => a.type), ['forward_backward']);
  });

  it('429 with Retry-After: waits as long as the server says, then goes on', async () => {
    const before = sleeps.asked.length;
    proxy.inject({ match: isPath('optim_step'), fault: { kind: 'status', status: 429, headers: { 'retry-after': '3' } } });
    await trainStep(tc, 2);
    assert.ok(sleeps.asked.slice(before).includes(3000), `asked for the server's 3 s: ${sleeps.asked.slice(before).join(', ')}`);
    assert.deepStrictEqual(submissions('optim_step', lastSeq('optim_step')).map((t) => t.status), [429, 200]);
  });

  it('408 on a submission and on retrieve_future: sent again, polled again', async () => {
    proxy.inject({ match: isPath('forward_backward'), fault: { kind: 'status', status: 408 } });
    proxy.inject({ match: polling('ForwardBackward'), fault: { kind: 'status', status: 408, body: JSON.stringify({ queue_state: 'paused_capacity' }) } });
    const queue: string[] = [];
    const c = await ServiceClient.connect({ baseUrl: proxy.url, sleep: sleeps.sleep, onQueueState: (e) => queue.push(e.queueState), heartbeatIntervalMs: 60_000 });
    try {
      const t = await c.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
      await trainStep(t, 0);
      assert.ok(queue.includes('paused_capacity'), `the queue state of the 408 reached the caller: ${queue.join(', ')}`);
      assertContiguous(await engine.appliedSteps(), t.modelId);
      const polls = proxy.seen.filter((s) => s.path === '/api/v1/retrieve_future' && s.fault === 'status 408');
      assert.strictEqual(polls.length, 1);
      assert.ok(proxy.seen.some((s) => s.requestId === polls[0]!.requestId && s.status === 200 && s.n > polls[0]!.n), 'polled again');
    } finally {
      c.close();
    }
  });

  it('a dropped connection before the engine saw the request: sent again, applied once', async () => {
    proxy.inject({ match: isPath('optim_step'), fault: { kind: 'drop', afterForward: false } });
    await trainStep(tc, 3);
    assert.deepStrictEqual(submissions('optim_step', lastSeq('optim_step')).map((t) => t.fault ?? 'forwarded'), ['drop before forward', 'forwarded']);
  });

  it('a dropped connection after the engine applied the request: the replays are deduplicated (forward_backward, optim_step, save_weights)', async () => {
    for (const p of ['forward_backward', 'optim_step', 'save_weights']) proxy.inject({ match: isPath(p), fault: { kind: 'drop', afterForward: true } });
    await trainStep(tc, 4);
    const saved = await (await tc.saveState('after-drop')).result();
    assert.match(saved.path, /weights\/after-drop$/);
    for (const p of ['forward_backward', 'optim_step', 'save_weights']) {
      const tries = submissions(p, lastSeq(p));
      assert.deepStrictEqual(tries.map((t) => t.fault ?? 'forwarded'), ['drop after forward', 'forwarded'], p);
    }
    const steps = (await engine.appliedSteps()).filter((s) => s.model_id === tc.modelId);
    assert.strictEqual(steps.filter((s) => s.type === 'save_weights').length, 1, 'saved once');
  });

  it('a dropped answer to create_model, create_sampling_session and a poll: the replays get the same model, sampler and result', async () => {
    proxy.inject({ match: isPath('create_model'), fault: { kind: 'drop', afterForward: true } });
    proxy.inject({ match: isPath('create_sampling_session'), fault: { kind: 'drop', afterForward: true } });
    proxy.inject({ match: polling('OptimStep'), fault: { kind: 'drop', afterForward: true } });
    const t = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 3 });
    assert.match(t.modelId, /:train:\d+$/);
    await trainStep(t, 0);
    assertContiguous(await engine.appliedSteps(), t.modelId);
    const s = await client.createSamplingClient({ baseModel: RANDOM_MODEL });
    const r = await s.sample(textInput(encodeChat('<|im_start|>user\nWhat is 1 + 2?<|im_end|>\n<|im_start|>assistant\n')), { max_tokens: 4, seed: 3, stop: [IM_END] });
    assert.strictEqual(r.sequences.length, 1);
    const creates = proxy.seen.filter((x) => x.path === '/api/v1/create_model');
    assert.deepStrictEqual(creates.slice(-2).map((x) => x.status ?? 'dropped'), ['dropped', 200]);
  });

  it('a delayed answer: within the timeout it is simply late; beyond it the client times out, sends again, and the engine deduplicates', async () => {
    // The late answer comes 200 ms late against a 5 s timeout; the answer beyond the timeout is withheld
    // until the client gives up (no race with the machine's load either way).
    const quick = await ServiceClient.connect({ baseUrl: proxy.url, sleep: sleeps.sleep, requestTimeoutMs: 5000, pollTimeoutMs: 10_000, heartbeatIntervalMs: 60_000 });
    try {
      const t = await quick.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 4 });
      proxy.inject({ match: isPath('forward_backward'), fault: { kind: 'delay', ms: 200 } });
      proxy.inject({ match: isPath('optim_step'), fault: { kind: 'hold' } });
      await trainStep(t, 0);
      const opt = proxy.seen.filter((s) => s.path === '/api/v1/optim_step' && s.modelId === t.modelId);
      assert.ok(opt.length >= 2 && opt[0]!.fault === 'held until the client gave up', 'timed out and sent again');
      assert.ok(opt.every((o) => o.seqId === opt[0]!.seqId));
      const fb = proxy.seen.filter((s) => s.path === '/api/v1/forward_backward' && s.modelId === t.modelId);
      assert.deepStrictEqual(fb.map((f) => f.fault), ['delay 200 ms'], 'late but not sent again');
      assertContiguous(await engine.appliedSteps(), t.modelId);
    } finally {
      quick.close();
    }
  });

  it('500 and 429 on retrieve_future: polled again after a pause', async () => {
    const before = sleeps.asked.length;
    proxy.inject({ match: polling('ForwardBackward'), fault: { kind: 'status', status: 500 } });
    proxy.inject({ match: polling('OptimStep'), fault: { kind: 'status', status: 429 } });
    await trainStep(tc, 5);
    const asked = sleeps.asked.slice(before);
    assert.ok(asked.includes(2000), `429 on a poll backs off min(2^n, 30) s: ${asked.join(', ')}`);
    assert.ok(asked.includes(100), `5xx on a poll pauses briefly: ${asked.join(', ')}`);
  });

  it('410 on a training future: surfaced as "submit again" without applying the step twice; the model goes on in order', async () => {
    proxy.inject({ match: polling('OptimStep'), fault: { kind: 'status', status: 410 } });
    const fb = await tc.forwardBackward(batchOf(6), 'cross_entropy');
    const opt = await tc.optimStep(ADAM);
    await fb.result();
    await assert.rejects(opt.result(), (e: unknown) => e instanceof PromiseExpiredError && /submitted again/.test(e.message));
    await trainStep(tc, 7);
    const seq = lastSeq('optim_step');
    const steps = (await engine.appliedSteps()).filter((s) => s.model_id === tc.modelId);
    assert.deepStrictEqual(steps.slice(-4).map((s) => `${s.type}@${s.seq_id}`), [`forward_backward@${seq - 3}`, `optim_step@${seq - 2}`, `forward_backward@${seq - 1}`, `optim_step@${seq}`]);
  });

  it('410 on a sample: the sampling client submits it again and returns the same seeded answer', async () => {
    const s = await client.createSamplingClient({ baseModel: RANDOM_MODEL });
    const prompt = textInput(encodeChat('<|im_start|>user\nWhat is 4 + 4?<|im_end|>\n<|im_start|>assistant\n'));
    const params = { max_tokens: 6, temperature: 1, seed: 11, stop: [IM_END] };
    const clean = await s.sample(prompt, params);
    proxy.inject({ match: polling('Sample'), fault: { kind: 'status', status: 410 } });
    const n0 = proxy.seen.filter((x) => x.path === '/api/v1/asample').length;
    const again = await s.sample(prompt, params);
    assert.deepStrictEqual(again.sequences[0]!.tokens, clean.sequences[0]!.tokens);
    assert.strictEqual(proxy.seen.filter((x) => x.path === '/api/v1/asample').length - n0, 2, 'submitted twice');
  });

  it('a submission that fails for good leaves a seq_id gap: later requests fail at once instead of waiting forever', async () => {
    const t = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 5 });
    proxy.inject({ match: (r) => isPath('optim_step')(r) && r.modelId === t.modelId, fault: { kind: 'status', status: 400, body: JSON.stringify({ detail: 'refused by the fault proxy' }) } });
    await (await t.forwardBackward(batchOf(0), 'cross_entropy')).result();
    await assert.rejects(t.optimStep(ADAM), /refused by the fault proxy/);
    await assert.rejects(t.forwardBackward(batchOf(1), 'cross_entropy'), (e: unknown) => e instanceof TrainingSequenceError && e.missingSeqId === 2 && /last checkpoint/.test(e.message));
    assert.deepStrictEqual(assertContiguous(await engine.appliedSteps(), t.modelId), [1]);
  });
});

// ---------- a whole run with random faults and an engine restart ----------

/** mulberry32 (the sweeps' seeded generator): the fault schedule is the same on every run. */
const seeded = mulberry32;

function randomFaults(rnd: () => number): (r: ProxiedRequest) => Fault | undefined {
  const common: Fault[] = [
    { kind: 'status', status: 500 },
    { kind: 'status', status: 502, afterForward: true },
    { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
    { kind: 'status', status: 408 },
    { kind: 'drop', afterForward: false },
    { kind: 'drop', afterForward: true },
    { kind: 'delay', ms: 50 },
  ];
  return (r) => {
    if (!r.path.startsWith('/api/v1/') || r.path.includes('/_engine/') || r.path.endsWith('/session_heartbeat')) return undefined;
    const x = rnd();
    if (r.path.endsWith('/retrieve_future') && x < 0.04) return { kind: 'status', status: 410 };
    if (x >= 0.22) return undefined;
    return common[Math.floor(rnd() * common.length)];
  };
}

interface Life {
  id: string;
  /** the checkpoint this model was loaded from */
  source?: { path: string; modelId: string; seqId: number; step: number };
  /** what the driver submitted under each seq_id, and for which logical step */
  seqs: Map<number, { type: string; step: number }>;
}

/**
 * A training loop that survives what the client cannot hide: a future that expired (410), a model
 * or session the engine no longer has (restart), a seq_id gap. It continues from its last
 * checkpoint (weights and optimizer state) in a new session, and redoes the steps after it.
 */
async function resilientRun(baseUrl: string, steps: number, sleep: Sleep, onStep?: (step: number) => void): Promise<{ lives: Life[]; recoveries: string[]; final: number[] }> {
  const connect = () => ServiceClient.connect({ baseUrl, sleep, requestTimeoutMs: 5000, pollTimeoutMs: 5000, heartbeatIntervalMs: 60_000 });
  const recoverable = (e: unknown) =>
    e instanceof PromiseExpiredError || e instanceof TrainingSequenceError || e instanceof NotFoundError || e instanceof ConnectionError || e instanceof ServerError;
  const lives: Life[] = [];
  const recoveries: string[] = [];
  let lastCkpt: Life['source'];
  let client: ServiceClient | undefined;
  let tc!: TrainingClient;
  let seq = 0;
  let step = 0;
  const fresh = async () => {
    for (;;) {
      try {
        client?.close();
        client = await connect();
        if (lastCkpt) {
          tc = await client.createTrainingClientFromState(lastCkpt.path, { withOptimizer: true });
          lives.push({ id: tc.modelId, source: lastCkpt, seqs: new Map([[1, { type: 'load_weights', step: lastCkpt.step }]]) });
          seq = 1;
          step = lastCkpt.step;
        } else {
          tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 7 });
          lives.push({ id: tc.modelId, seqs: new Map() });
          seq = 0;
          step = 0;
        }
        return;
      } catch (e) {
        if (!recoverable(e)) throw e;
        recoveries.push(`while resuming: ${(e as Error).constructor.name}`);
      }
    }
  };
  await fresh();
  while (step < steps) {
    const life = lives[lives.length - 1]!;
    try {
      onStep?.(step);
      life.seqs.set(++seq, { type: 'forward_backward', step });
      const fb = await tc.forwardBackward(batchOf(step), 'cross_entropy');
      life.seqs.set(++seq, { type: 'optim_step', step });
      const opt = await tc.optimStep(ADAM);
      await fb.result();
      await opt.result();
      step++;
      if (step % 3 === 0 && step < steps) {
        const saveSeq = ++seq;
        life.seqs.set(saveSeq, { type: 'save_weights', step });
        const saved = await (await tc.saveState(`ckpt-${step}`)).result();
        lastCkpt = { path: saved.path, modelId: life.id, seqId: saveSeq, step };
      }
    } catch (e) {
      if (!recoverable(e)) throw e;
      recoveries.push(`${(e as Error).constructor.name} at step ${step}`);
      await fresh();
    }
  }
  lives[lives.length - 1]!.seqs.set(++seq, { type: 'forward', step });
  const final = await probeLogprobs(tc);
  client?.close();
  return { lives, recoveries, final };
}

describe('a training run with seeded random faults and an engine restart in the middle', function () {
  this.timeout(100_000);
  const STEPS = 12;
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-faults-run-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('applies every step exactly once along the surviving line of models, in seq_id order, and ends with the weights of a fault-free run', async () => {
    // the reference: the same run on its own engine, without faults
    const refEngine = await RestartableEngine.start(path.join(dir, 'reference'));
    let reference: number[];
    try {
      reference = (await resilientRun(refEngine.url, STEPS, realSleep)).final;
    } finally {
      await refEngine.stop();
    }

    const engine = await RestartableEngine.start(path.join(dir, 'faulty'));
    const proxy = await FaultProxy.start({ upstream: engine.url });
    try {
      // each kind of fault at least once, at the first request it fits; random ones on top
      const scripted: Array<[string, (r: ProxiedRequest) => boolean, Fault]> = [
        ['status 500', isPath('forward_backward'), { kind: 'status', status: 500 }],
        ['status 502 after forward', isPath('optim_step'), { kind: 'status', status: 502, afterForward: true }],
        ['status 429', isPath('save_weights'), { kind: 'status', status: 429, headers: { 'retry-after': '2' } }],
        ['status 408', polling('ForwardBackward'), { kind: 'status', status: 408 }],
        ['drop before forward', isPath('optim_step'), { kind: 'drop', afterForward: false }],
        ['drop after forward', isPath('forward_backward'), { kind: 'drop', afterForward: true }],
        ['status 410', polling('OptimStep'), { kind: 'status', status: 410 }],
      ];
      for (const [, match, fault] of scripted) proxy.inject({ match, fault });
      proxy.picker = randomFaults(seeded(20261122));
      let armed = false;
      const run = await resilientRun(proxy.url, STEPS, shortSleeps().sleep, (step) => {
        // once, in the middle of step 7 (after the checkpoint of step 6): the engine applies the
        // optimizer step, the connection drops, and the engine restarts on the same data dir
        if (step === 7 && !armed) {
          armed = true;
          const gone = () => proxy.waitFor((s) => s.fault === 'engine unreachable').then(() => undefined);
          proxy.inject({ match: isPath('optim_step'), fault: { kind: 'drop', afterForward: true, then: () => engine.restart(gone) } });
        }
      });
      assert.strictEqual(engine.restarts, 1, 'the engine restarted once');
      const faults = new Set(proxy.seen.map((s) => s.fault?.replace(/\d+ ms/, 'N ms')).filter((f): f is string => f !== undefined));
      assert.strictEqual(proxy.pendingRules(), 0, 'every scripted fault fired');
      for (const f of [...scripted.map(([label]) => label), 'engine unreachable']) {
        assert.ok(faults.has(f), `fault "${f}" was injected (saw: ${[...faults].join('; ')})`);
      }
      assert.ok(run.recoveries.some((r) => r.startsWith('NotFoundError')), `resumed after the restart: ${run.recoveries.join('; ')}`);

      // the engine's own record: per model, seq_ids 1, 2, 3 … each applied once, in order
      const applied = await engine.appliedSteps();
      const keys = applied.map((s) => `${s.model_id}#${s.seq_id}`);
      assert.strictEqual(new Set(keys).size, keys.length, 'no (model, seq_id) applied twice');
      for (const id of new Set(applied.map((s) => s.model_id))) {
        const seqs = applied.filter((s) => s.model_id === id).map((s) => s.seq_id);
        const start = seqs[0] === 0 ? 0 : 1;
        assert.deepStrictEqual(seqs, seqs.map((_, i) => start + i), `${id}: ${seqs.join(',')}`);
      }
      // the client sent each model's training requests in seq_id order (retries repeat, never overtake)
      const training = ['forward_backward', 'optim_step', 'save_weights', 'load_weights'].map((p) => `/api/v1/${p}`);
      for (const life of run.lives) {
        const sent = proxy.seen.filter((s: SeenRequest) => training.includes(s.path) && s.modelId === life.id).map((s) => s.seqId!);
        assert.deepStrictEqual(sent, [...sent].sort((a, b) => a - b), `${life.id} submissions in order: ${sent.join(',')}`);
      }

      // along the line of models that led to the final one, every step was applied exactly once
      const chain: Life[] = [run.lives[run.lives.length - 1]!];
      while (chain[0]!.source) chain.unshift(run.lives.find((l) => l.id === chain[0]!.source!.modelId)!);
      const effective: string[] = [];
      chain.forEach((life, i) => {
        const cut = chain[i + 1]?.source?.seqId ?? Infinity;
        for (const a of applied.filter((s) => s.model_id === life.id && s.seq_id <= cut)) {
          const sent = life.seqs.get(a.seq_id);
          assert.strictEqual(sent?.type, a.type, `${life.id} seq ${a.seq_id} is what the driver sent`);
          if (a.type === 'forward_backward' || a.type === 'optim_step') effective.push(`${a.type}@${sent.step}`);
        }
        if (chain[i + 1]) assert.ok(applied.some((s) => s.model_id === life.id && s.seq_id === cut && s.type === 'save_weights'), 'the checkpoint was applied');
      });
      const expected = Array.from({ length: STEPS }, (_, s) => [`forward_backward@${s}`, `optim_step@${s}`]).flat();
      assert.deepStrictEqual(effective, expected);
      assert.ok(chain.length >= 2, 'the final model continues from a checkpoint');

      // and the result is bit-for-bit that of the run without faults
      assert.deepStrictEqual(run.final, reference);
    } finally {
      await proxy.close();
      await engine.stop();
    }
  });
});

// ---------- JWT auth through a stand-in of the Tinker cloud's auth ----------

describe('JWT exchange and refresh against a stand-in of the Tinker cloud auth', function () {
  this.timeout(60_000);
  const KEY = 'tml-faults-secret-key-0123456789abcdef';
  let dir: string;
  let engine: RestartableEngine;
  let proxy: FaultProxy;
  let auth: CloudAuthStandIn;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-jwt-'));
    engine = await RestartableEngine.start(dir);
  });
  beforeEach(async () => {
    offsetMs = 0;
    auth = new CloudAuthStandIn({ apiKey: KEY, ttlSeconds: 600, now });
    proxy = await FaultProxy.start({ upstream: engine.url, auth });
  });
  afterEach(async () => proxy.close());
  after(async () => {
    await engine.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const connect = (apiKey = KEY) => ServiceClient.connect({ baseUrl: proxy.url, apiKey, now, sleep: shortSleeps().sleep, heartbeatIntervalMs: 60_000 });

  it('exchanges the API key for a JWT after the config handshake and sends only the JWT afterwards', async () => {
    const c = await connect();
    try {
      assert.strictEqual(c.config.pjwt_auth_enabled, true);
      assert.deepStrictEqual(auth.exchanges.map((e) => e.presented), [KEY]);
      const t = await c.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
      await trainStep(t, 0);
      const jwt = auth.exchanges[0]!.jwt!;
      const after = proxy.seen.filter((s) => !['/api/v1/client/config', '/api/v1/auth/token'].includes(s.path));
      assert.ok(after.length > 5);
      assert.ok(after.every((s) => s.credential === jwt), 'every later request carries the JWT, never the key');
      assert.deepStrictEqual(auth.refusals, []);
    } finally {
      c.close();
    }
  });

  it('refreshes before a request when 60 s or less are left, with the API key, so an expiring token is never sent', async () => {
    const c = await connect();
    try {
      const t = await c.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
      offsetMs = 545_000; // 55 s left on the first token
      await trainStep(t, 0);
      assert.strictEqual(auth.exchanges.length, 2, 'refreshed on demand');
      assert.strictEqual(auth.exchanges[1]!.presented, KEY, 'the refresh presents the API key, not the old JWT');
      offsetMs = 545_000 + 120_000; // the first token has expired, the second has not
      await trainStep(t, 1);
      assert.deepStrictEqual(auth.refusals, []);
      const last = proxy.seen[proxy.seen.length - 1]!;
      assert.strictEqual(last.credential, auth.exchanges[1]!.jwt);
    } finally {
      c.close();
    }
  });

  it('refreshes in the background 300 s before expiry', async () => {
    auth = new CloudAuthStandIn({ apiKey: KEY, ttlSeconds: 301, now });
    await proxy.close();
    proxy = await FaultProxy.start({ upstream: engine.url, auth });
    const c = await connect();
    try {
      await proxy.waitFor((s) => s.path === '/api/v1/auth/token' && auth.exchanges.length >= 2);
      assert.strictEqual(auth.exchanges[1]!.presented, KEY);
      // the client takes the new token as soon as the exchange's answer has reached it
      let sent: string | undefined;
      for (let i = 0; i < 100 && sent !== auth.exchanges[1]!.jwt; i++) {
        await c.capabilities();
        sent = proxy.seen[proxy.seen.length - 1]!.credential;
      }
      assert.strictEqual(sent, auth.exchanges[1]!.jwt);
    } finally {
      c.close();
    }
  });

  it('never puts the API key or a JWT in an error, even when the server echoes them', async () => {
    const wrong = 'tml-wrong-key-that-must-stay-secret-42';
    const err = await connect(wrong).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof AuthenticationError, `rejected: ${String(err)}`);
    assert.ok(proxy.seen.some((s) => s.status === 401), 'the stand-in refused the key');
    const text = (e: unknown) => [String(e), (e as Error).stack ?? '', (e as AuthenticationError).body ?? '', JSON.stringify(e)].join('\n');
    assert.ok(!text(err).includes(wrong), text(err));
    assert.match((err as Error).message, /API key was rejected/);

    // a refresh that fails leaves the old token in use; once it has expired the server refuses it,
    // quoting it back: the error names neither the token nor the key
    const c = await connect();
    try {
      const jwt = auth.exchanges[auth.exchanges.length - 1]!.jwt!;
      proxy.inject({ match: isPath('auth/token'), fault: { kind: 'status', status: 503 }, times: 1000 });
      offsetMs = 700_000;
      const e2 = await c.capabilities().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(e2 instanceof AuthenticationError && e2 instanceof TinkerError, `refused: ${String(e2)}`);
      assert.ok(auth.refusals.some((r) => r.reason === 'expired'));
      assert.ok(!text(e2).includes(jwt) && !text(e2).includes(KEY), text(e2));
    } finally {
      c.close();
    }
  });
});

// ---------- the engine gone for good while a result is awaited ----------

describe('Tinker client when the engine stops for good while it waits for a result', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-gone-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives up after a bounded number of failed polls with a clear message, instead of waiting forever', async () => {
    const engine = await RestartableEngine.start(dir);
    const sleeps = shortSleeps();
    const client = await ServiceClient.connect({ baseUrl: engine.url, sleep: sleeps.sleep, requestTimeoutMs: 5000, pollTimeoutMs: 5000, heartbeatIntervalMs: 60_000 });
    try {
      const tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
      const fb = await tc.forwardBackward(batchOf(0), 'cross_entropy');
      await engine.stop();
      sleeps.asked.length = 0;
      await assert.rejects(fb.result(), (err: unknown) => {
        assert.ok(err instanceof ConnectionError, String(err));
        assert.match(err.message, /the server stopped answering \(11 failed attempts in a row; last: .*\)\. Check that it is running; a run can be resumed from its last checkpoint/);
        return true;
      });
      assert.deepStrictEqual(sleeps.asked, [2, 4, 8, 16, 30, 30, 30, 30, 30, 30].map((s) => s * 1000), 'backs off as before, then stops');
    } finally {
      client.close();
    }
  });
});
