// A pool of environment worker processes (Python or Node, the reward workers' hardening: filtered
// environment, memory cap, process group, the file's folder as working directory). Unlike reward
// calls, environment calls have state: each episode's instance lives in one worker from `create` to
// `drop`, and every call of that episode goes to that worker. A worker runs its calls one at a time,
// in the order sent; the per-call time limit runs from when a call becomes the one running.
// When a call fails by time limit or the worker dies, the worker is replaced: that call fails
// ('timeout' / 'crash' with the worker's last words), and every other episode it hosted loses its
// state, so their pending and later calls fail too ('crash', saying why). Nothing here throws for a
// user-code failure: calls resolve to an outcome.
import { crashError, type EnvCallError, type EnvCallOutcome } from './types';
import { EnvFromWorker, type EnvToWorker } from './protocol';
import { awaitLoaded, readWorkerMessage, startWorker, workerCount, type LoadErrorDetail, type StartedWorker, type WorkerExit, type WorkerHandlers, type WorkerProcess } from '../reward/workerStart';
import type { ChatMessage } from '../../protocol/chatMessage';

export type SpawnEnvWorker = (handlers: WorkerHandlers) => WorkerProcess<EnvToWorker>;

export interface EnvPoolOptions {
  file: string;
  workers: number;
  timeoutMs: number;
  loadTimeoutMs: number;
  load: EnvToWorker & { type: 'load' };
  describeCrash(exit: WorkerExit): Pick<EnvCallError, 'message' | 'traceback' | 'line'>;
  completeLoadError?(detail: LoadErrorDetail): LoadErrorDetail;
}

type CallMessage = Extract<EnvToWorker, { type: 'call' }>;
type CallBody = CallMessage extends infer C ? (C extends CallMessage ? Omit<C, 'type' | 'id'> : never) : never;

interface PendingCall {
  id: number;
  op: CallMessage['op'];
  resolve(outcome: EnvCallOutcome): void;
  startedAt: number;
}

interface Slot {
  worker: StartedWorker<EnvToWorker>;
  state: 'starting' | 'ready' | 'dead';
  /** calls sent and not answered, in the order sent (the first is running) */
  calls: PendingCall[];
  /** the instances it hosts */
  instances: Set<number>;
  timer?: NodeJS.Timeout;
  killedFor?: 'timeout' | 'close' | 'protocol' | 'load' | 'crash';
  /** why its episodes lost their state */
  lostBecause?: string;
}

export interface EnvInfo {
  className: string;
  groupRewards: boolean;
}

export class EnvWorkerPool {
  readonly file: string;
  private readonly slots = new Set<Slot>();
  private readonly homes = new Map<number, Slot>();
  /** instances whose worker was replaced: why */
  private readonly lost = new Map<number, string>();
  private nextId = 0;
  private nextInstance = 0;
  private closed = false;
  info: EnvInfo = { className: '', groupRewards: false };

  constructor(
    private readonly spawn: SpawnEnvWorker,
    private readonly opts: EnvPoolOptions,
  ) {
    this.file = opts.file;
  }

  async start(): Promise<EnvInfo> {
    const started = Array.from({ length: workerCount(this.opts.workers) }, () => this.startSlot());
    await awaitLoaded(this.file, started.map((s) => s.worker.loaded), () => this.close(), this.opts.completeLoadError);
    return this.info;
  }

  /** A new episode's instance, constructed from the dataset line on the least busy worker. */
  async create(problem: unknown): Promise<{ instance: number; outcome: EnvCallOutcome }> {
    const instance = this.nextInstance++;
    for (let attempt = 0; attempt < 3 && !this.closed; attempt++) {
      // chosen and counted at once, so concurrent episodes spread over the workers
      const slot = this.leastBusy();
      slot.instances.add(instance);
      this.homes.set(instance, slot);
      const failure = await slot.worker.loaded;
      if (failure === undefined && slot.state === 'ready' && !slot.killedFor) return { instance, outcome: await this.send(slot, { op: 'create', instance, problem }) };
      slot.instances.delete(instance);
      this.homes.delete(instance);
      this.kill(slot, 'load', failure?.message ?? 'the worker did not start');
    }
    return { instance, outcome: this.failed('crash', 'no environment worker could be started') };
  }

  /** A call of an existing instance, on its own worker. */
  call(instance: number, body: { op: 'initial'; instance: number } | { op: 'step'; instance: number; message: ChatMessage }): Promise<EnvCallOutcome> {
    const lost = this.lost.get(instance);
    if (lost !== undefined) return Promise.resolve(this.failed('crash', lost));
    const slot = this.homes.get(instance);
    if (!slot || slot.state === 'dead' || slot.killedFor) return Promise.resolve(this.failed('crash', 'this episode\'s environment worker is gone'));
    return this.send(slot, body);
  }

  /** Forgets an instance (its worker drops it); never fails. */
  async drop(instance: number): Promise<void> {
    const slot = this.homes.get(instance);
    this.homes.delete(instance);
    this.lost.delete(instance);
    if (!slot || slot.state === 'dead' || slot.killedFor) return;
    slot.instances.delete(instance);
    await this.send(slot, { op: 'drop', instance });
  }

  /** The module-level compute_group_rewards, on any worker. */
  async group(problems: unknown[], transcripts: Extract<CallMessage, { op: 'group' }>['transcripts']): Promise<EnvCallOutcome> {
    const slot = await this.pickSlot();
    if (!slot) return this.failed('crash', 'no environment worker could be started');
    return this.send(slot, { op: 'group', problems, transcripts });
  }

  async close(): Promise<void> {
    this.closed = true;
    const exits: Array<Promise<void>> = [];
    for (const slot of this.slots) {
      this.kill(slot, 'close', 'the environment runner was closed');
      exits.push(slot.worker.exited);
    }
    await Promise.all(exits);
  }

  /** process ids of the live workers (tests) */
  pids(): number[] {
    return [...this.slots].flatMap((s) => (s.state !== 'dead' && !s.killedFor && s.worker.proc.pid !== undefined ? [s.worker.proc.pid] : []));
  }

  private failed(kind: EnvCallError['kind'], message: string): EnvCallOutcome {
    return { ok: false, error: { kind, message }, durationMs: 0 };
  }

  /** a live worker with the fewest instances and calls (ready ones first), starting replacements up to the pool's size */
  private leastBusy(): Slot {
    const live = [...this.slots].filter((s) => s.state !== 'dead' && !s.killedFor);
    for (let i = live.length; i < workerCount(this.opts.workers); i++) live.push(this.startSlot());
    const ready = live.filter((s) => s.state === 'ready');
    const pool = ready.length > 0 ? ready : live;
    return pool.reduce((a, b) => (b.instances.size + b.calls.length < a.instances.size + a.calls.length ? b : a));
  }

  /** a worker for a call of no episode (compute_group_rewards) */
  private async pickSlot(): Promise<Slot | undefined> {
    for (let attempt = 0; attempt < 3 && !this.closed; attempt++) {
      const slot = this.leastBusy();
      const failure = await slot.worker.loaded;
      if (failure === undefined && slot.state === 'ready' && !slot.killedFor) return slot;
      this.kill(slot, 'load', failure?.message ?? 'the worker did not start');
    }
    return undefined;
  }

  private startSlot(): Slot {
    const worker = startWorker(this.spawn, this.opts.load, this.opts.loadTimeoutMs, {
      message: (raw) => this.onMessage(slot, raw),
      exit: (info) => this.onExit(slot, info),
      loadTimedOut: () => this.kill(slot, 'load', 'the worker did not load in time'),
    });
    const slot: Slot = { worker, state: 'starting', calls: [], instances: new Set() };
    this.slots.add(slot);
    return slot;
  }

  private send(slot: Slot, body: CallBody): Promise<EnvCallOutcome> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      slot.calls.push({ id, op: body.op, resolve, startedAt: performance.now() });
      if (slot.calls.length === 1) this.startTimer(slot);
      slot.worker.proc.send({ type: 'call', id, ...body } as CallMessage);
    });
  }

  private startTimer(slot: Slot): void {
    const head = slot.calls[0];
    if (!head) return;
    head.startedAt = performance.now();
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => this.onTimeout(slot), this.opts.timeoutMs);
  }

  private onTimeout(slot: Slot): void {
    slot.timer = undefined;
    const head = slot.calls.shift();
    if (!head) return;
    head.resolve({ ok: false, error: { kind: 'timeout', message: `${opName(head.op)} took longer than ${this.opts.timeoutMs} ms; its worker was stopped and replaced` }, durationMs: performance.now() - head.startedAt });
    this.kill(slot, 'timeout', `the episode's environment worker was replaced after another episode's ${opName(head.op)} went over the time limit (${this.opts.timeoutMs} ms), losing its state`);
  }

  private onMessage(slot: Slot, raw: unknown): void {
    if (slot.state === 'dead' || slot.killedFor) return;
    const read = readWorkerMessage(raw, EnvFromWorker);
    if (!read.ok) return this.protocolError(slot, read.problem);
    const msg = read.msg;
    if (msg.type === 'ready' || msg.type === 'load_error') {
      if (!slot.worker.answerLoad(msg)) return this.protocolError(slot, `unexpected '${msg.type}' message`);
      if (msg.type === 'ready') {
        slot.state = 'ready';
        this.info = { className: msg.className, groupRewards: msg.groupRewards };
      }
      return;
    }
    const head = slot.calls[0];
    if (!head || head.id !== msg.id) return this.protocolError(slot, `answer to call ${msg.id} out of order`);
    slot.calls.shift();
    if (msg.type === 'result') head.resolve({ ok: true, value: msg.value, durationMs: msg.durationMs });
    else {
      const { type: _t, id: _i, durationMs, kind, raw: rawValue, ...detail } = msg;
      head.resolve({ ok: false, error: { kind, ...detail, ...(rawValue !== undefined ? { raw: rawValue } : {}) }, durationMs });
      // the worker reported its own fatal failure and exits: no new work goes to it
      if (kind === 'crash') return this.kill(slot, 'crash', `the episode's environment worker died (another episode's call: ${detail.message}), losing its state`);
    }
    if (slot.calls.length > 0) this.startTimer(slot);
    else if (slot.timer) {
      clearTimeout(slot.timer);
      slot.timer = undefined;
    }
  }

  private protocolError(slot: Slot, message: string): void {
    const head = slot.calls.shift();
    head?.resolve({ ok: false, error: { kind: 'crash', message: `the environment worker broke its protocol (${message}); it was replaced` }, durationMs: 0 });
    this.kill(slot, 'protocol', `the episode's environment worker was replaced (it broke its protocol), losing its state`);
  }

  private onExit(slot: Slot, info: WorkerExit): void {
    slot.state = 'dead';
    if (slot.timer) clearTimeout(slot.timer);
    this.slots.delete(slot);
    const why = slot.lostBecause ?? `the episode's environment worker died (another episode's call crashed it), losing its state`;
    const head = slot.calls.shift();
    if (head) {
      if (slot.killedFor) head.resolve({ ok: false, error: { kind: 'crash', message: why }, durationMs: 0 });
      else {
        const crash = crashError(this.opts.describeCrash(info));
        head.resolve({ ok: false, error: { kind: 'crash', ...crash }, durationMs: performance.now() - head.startedAt });
      }
    }
    for (const c of slot.calls.splice(0)) c.resolve({ ok: false, error: { kind: 'crash', message: why }, durationMs: 0 });
    for (const i of slot.instances) {
      this.lost.set(i, why);
      this.homes.delete(i);
    }
    slot.instances.clear();
  }

  private kill(slot: Slot, why: NonNullable<Slot['killedFor']>, lostBecause: string): void {
    if (slot.state === 'dead' || slot.killedFor) return;
    slot.killedFor = why;
    slot.lostBecause = lostBecause;
    if (slot.timer) clearTimeout(slot.timer);
    slot.worker.proc.kill();
  }
}

function opName(op: CallMessage['op']): string {
  return op === 'create' ? 'the constructor' : op === 'initial' ? 'initial_observation' : op === 'step' ? 'step' : op === 'group' ? 'compute_group_rewards' : 'drop';
}
