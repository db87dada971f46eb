// The queue in sight, against the real engine with its service simulation (over real HTTP): the
// client sees the service's queue pauses with their reasons, pauses itself on 402 (billing) and
// reports it the same way, retries 429s as the protocol says, and counts the time spent paused.
// The client's waits go through its injectable sleep: recorded, not waited out.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceClient } from '../../../src/core/tinker/client';
import { CancelledError } from '../../../src/core/tinker/errors';
import type { QueueStateEvent } from '../../../src/core/tinker/futures';
import { describeQueuePause, QueuePauses } from '../../../src/core/tinker/queuePauses';
import type { Sleep } from '../../../src/core/tinker/transport';
import { textInput } from '../../../src/core/tinker/types';
import { encodeChat, RANDOM_MODEL } from '../../../src/engine/model/models';
import type { ServiceSimulationInput } from '../../../src/engine/server/simulation';
import { parseServiceSimulation } from '../../../src/engine/server/simulation';
import { sftDatum, startEngine } from './engineFixtures';

const CAPACITY = 'Tinker backend is running short on capacity';

/** An engine with `simulation` and a client whose waits are recorded and return at once. */
function useSimulatedEngine(prefix: string, simulation: ServiceSimulationInput) {
  const s = { client: undefined as unknown as ServiceClient, events: [] as QueueStateEvent[], sleeps: [] as number[] };
  let dir: string | undefined;
  let engine: Awaited<ReturnType<typeof startEngine>> | undefined;
  const sleep: Sleep = async (ms, signal) => {
    s.sleeps.push(ms);
    if (signal?.aborted) throw new CancelledError();
    await new Promise((r) => setImmediate(r));
  };
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    engine = await startEngine(dir, { serviceSimulation: simulation });
    s.client = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test', heartbeatIntervalMs: 60_000, sleep, onQueueState: (e) => s.events.push(e) });
  });
  after(async () => {
    s.client?.close();
    await engine?.server.close();
    await engine?.backend.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return s;
}

const DATA = [sftDatum('<|im_start|>user\n1+1<|im_end|>\n<|im_start|>assistant\n2<|im_end|>')];

describe('service simulation: queue pauses', function () {
  this.timeout(120_000);
  const s = useSimulatedEngine('tinker-queue-pauses-', {
    pauses: [
      { request: 'ForwardBackward', at: [1], queue_state: 'paused_capacity', reason: CAPACITY, polls: 2, hold_ms: 50 },
      { request: 'OptimStep', every: 2, queue_state: 'paused_rate_limit', reason: 'concurrent training clients rate limit hit', polls: 1, hold_ms: 50 },
    ],
  });

  it('the client sees the pause and its reason, then active again; the time paused is counted once', async () => {
    const tc = await s.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
    assert.strictEqual(s.client.queuePauses.take(), 0, 'nothing paused while the model was created');
    const shown: string[] = [];
    const off = s.client.queuePauses.onChange((p) => shown.push(p ? describeQueuePause(p) : 'active'));
    await (await tc.forwardBackward(DATA, 'cross_entropy')).result();
    off();
    const fb = s.events.filter((e) => e.requestType === 'ForwardBackward');
    assert.deepStrictEqual(
      fb.map((e) => [e.queueState, e.reason]),
      [
        ['paused_capacity', CAPACITY],
        ['paused_capacity', CAPACITY],
        ['active', undefined],
      ],
    );
    assert.match(shown[0]!, /^paused: capacity — for \d+ s so far$/);
    assert.strictEqual(shown[shown.length - 1], 'active');
    assert.strictEqual(s.client.queuePauses.current(), undefined);
    const paused = s.client.queuePauses.take();
    assert.ok(paused > 0, `time paused ${paused}`);
    assert.strictEqual(s.client.queuePauses.take(), 0, 'taken: a new count starts');
  });

  it('a schedule by count: every second optim_step pauses on the rate limit, the others do not', async () => {
    const tc = await s.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 2 });
    s.events.length = 0;
    const paused: number[] = [];
    for (let k = 1; k <= 4; k++) {
      await (await tc.forwardBackward(DATA, 'cross_entropy')).result();
      await (await tc.optimStep({ learning_rate: 1e-3 })).result();
      paused.push(s.client.queuePauses.take());
    }
    assert.deepStrictEqual(
      paused.map((x) => x > 0),
      [false, true, false, true],
      `seconds paused per optim step: ${paused.join(', ')}`,
    );
    assert.deepStrictEqual(
      s.events.map((e) => `${e.requestType} ${e.queueState}`),
      ['OptimStep paused_rate_limit', 'OptimStep active', 'OptimStep paused_rate_limit', 'OptimStep active'],
    );
    assert.strictEqual(s.events[0]!.reason, 'concurrent training clients rate limit hit');
  });
});

describe('service simulation: 429 and 402', function () {
  this.timeout(120_000);
  const s = useSimulatedEngine('tinker-queue-refusals-', {
    refusals: [
      { request: 'OptimStep', at: [1], status: 429, times: 2, retry_after_ms: 7 },
      { request: 'ForwardBackward', at: [2], status: 402 },
      { request: 'OptimStep', at: [2], status: 402, on: 'poll', times: 2 },
      { request: 'Sample', at: [1], status: 402 },
      { request: 'Sample', at: [2], status: 429, on: 'poll' },
    ],
  });

  it('a 429 on a submission is retried after the Retry-After it carries', async () => {
    const tc = await s.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 1 });
    await (await tc.forwardBackward(DATA, 'cross_entropy')).result();
    s.sleeps.length = 0;
    const r = await (await tc.optimStep({ learning_rate: 1e-3 })).result();
    assert.ok(r.metrics, 'the optim step went through');
    assert.deepStrictEqual(s.sleeps, [7, 7], 'two refusals, each waited out for its Retry-After');
    assert.deepStrictEqual(s.events, [], 'a rate-limited submission is retried, not shown as a queue pause');
  });

  it('a 402 on a submission pauses (5 s at a time) and is reported as a billing pause until accepted', async () => {
    const tc = await s.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 2 });
    s.events.length = 0;
    s.sleeps.length = 0;
    s.client.queuePauses.take();
    const out = await (await tc.forwardBackward(DATA, 'cross_entropy')).result();
    assert.ok(out.loss_fn_outputs.length === 1, 'the forward_backward went through');
    assert.deepStrictEqual(s.sleeps, [5000]);
    assert.deepStrictEqual(
      s.events.map((e) => [e.requestId, e.queueState, e.reason]),
      [
        ['', 'paused_billing', 'billing'],
        ['', 'active', undefined],
      ],
    );
    assert.ok(s.client.queuePauses.take() > 0);
  });

  it('a 402 on the result\'s polls pauses that request (billing), then its result arrives', async () => {
    const tc = await s.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 3 });
    await (await tc.forwardBackward(DATA, 'cross_entropy')).result();
    s.events.length = 0;
    s.sleeps.length = 0;
    s.client.queuePauses.take();
    const fut = await tc.optimStep({ learning_rate: 1e-3 });
    await fut.result();
    assert.deepStrictEqual(s.sleeps, [5000, 5000], 'two 402s, 5 s each');
    assert.deepStrictEqual(
      s.events.map((e) => [e.requestId, e.requestType, e.queueState]),
      [
        [fut.requestId, 'OptimStep', 'paused_billing'],
        [fut.requestId, 'OptimStep', 'active'],
      ],
    );
    assert.ok(s.client.queuePauses.take() > 0);
  });

  it('sampling: a 402 on asample waits like backpressure (a billing pause), a 429 on its poll backs off; both samples arrive', async () => {
    const sc = await s.client.createSamplingClient({ baseModel: RANDOM_MODEL });
    s.events.length = 0;
    s.sleeps.length = 0;
    const prompt = textInput(encodeChat('<|im_start|>user\n2+2<|im_end|>\n<|im_start|>assistant\n'));
    const first = await sc.sample(prompt, { max_tokens: 3, temperature: 1, top_k: -1, top_p: 1 });
    assert.strictEqual(first.sequences.length, 1);
    assert.deepStrictEqual(
      s.events.map((e) => [e.requestType, e.queueState, e.reason]),
      [
        ['Sample', 'paused_billing', 'billing'],
        ['Sample', 'active', undefined],
      ],
    );
    assert.strictEqual(s.sleeps.length, 1, `one back-off before resubmitting: ${s.sleeps.join(', ')}`);
    s.sleeps.length = 0;
    const second = await sc.sample(prompt, { max_tokens: 3, temperature: 1, top_k: -1, top_p: 1 });
    assert.strictEqual(second.sequences.length, 1);
    assert.strictEqual(s.sleeps[s.sleeps.length - 1], 2000, `a 429 while polling: min(2^1, 30) s (waits: ${s.sleeps.join(', ')})`);
  });
});

describe('service simulation: its option', () => {
  it('a malformed simulation names the field', () => {
    assert.throws(
      () => parseServiceSimulation('{"pauses":[{"request":"Sample","at":[1],"polls":1,"queue_state":"paused"}]}', 'TINKER_ENGINE_SIMULATION'),
      /TINKER_ENGINE_SIMULATION: service simulation pauses\.0\.queue_state: /,
    );
    assert.throws(() => parseServiceSimulation('{"refusals":[{"request":"Sample","status":429}]}', 'X'), /refusals\.0: give exactly one of "at" .* or "every"/);
    assert.throws(() => parseServiceSimulation('{pauses', 'X'), /X: the service simulation is not JSON/);
  });

  it('several requests paused together count once (the time is the union, not the sum)', () => {
    let t = 0;
    const q = new QueuePauses(() => t, () => 1000 * t);
    q.pause('a', 'paused_capacity');
    t = 2;
    q.pause('b', 'paused_rate_limit');
    t = 5;
    q.resume('a');
    assert.deepStrictEqual(q.current()?.queueState, 'paused_rate_limit');
    t = 6;
    q.resume('b');
    t = 9;
    assert.strictEqual(q.take(), 6);
    q.pause('c', 'paused_billing', 'billing');
    t = 10;
    assert.strictEqual(q.take(), 1, 'a pause still going counts up to now');
    t = 12;
    assert.strictEqual(describeQueuePause(q.current()!, 12_000), 'paused: billing — for 3 s so far');
    assert.strictEqual(q.take(), 2);
  });
});
