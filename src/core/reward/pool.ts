// A pool of reward worker processes, the same for Python and Node workers (they differ only in how
// a process is spawned and how its messages travel). Cases are split into batches and spread over
// the workers; a worker answers case by case, so when the per-call time limit expires or the process
// dies the pool knows exactly which case was running: that case fails ('timeout' / 'crash'), the
// worker is replaced, and the rest of its batch goes back to the front of the queue.
import { FromWorker, ToWorker } from './protocol';
import type { RewardCase, RewardError, RewardOutcome, RewardRunner } from './types';
import { awaitLoaded, readWorkerMessage, startWorker, workerCount, type LoadErrorDetail, type StartedWorker, type WorkerExit, type WorkerHandlers, type WorkerProcess } from './workerStart';

export type { LoadErrorDetail, WorkerExit, WorkerHandlers } from './workerStart';

export type SpawnWorker = (handlers: WorkerHandlers) => WorkerProcess<ToWorker>;

export interface PoolOptions {
  file: string;
  workers: number;
  timeoutMs: number;
  /** time limit for loading the file in each worker */
  loadTimeoutMs: number;
  /** the `load` message every worker gets first (the same source for every replacement) */
  load: ToWorker & { type: 'load' };
  /** the function's name as the user wrote it, for messages */
  functionName: string;
  /** turns what a dead worker left behind into the crash's message/traceback/line */
  describeCrash(exit: WorkerExit): Pick<RewardError, 'message' | 'traceback' | 'line'>;
  /** a load error as the worker reported it, possibly completed (e.g. a syntax error's position) */
  completeLoadError?(detail: LoadErrorDetail): LoadErrorDetail;
}

/** cases per message: large enough to amortise the round trip, small enough to spread the work */
const MAX_BATCH = 256;
/** consecutive failed (re)starts after which queued cases fail instead of waiting forever */
const MAX_START_FAILURES = 3;

interface Call {
  cases: readonly RewardCase[];
  /** filled as cases finish (sparse until then) */
  outcomes: RewardOutcome[];
  remaining: number;
  settled: boolean;
  resolve(outcomes: RewardOutcome[]): void;
  reject(reason: unknown): void;
}

interface Batch {
  call: Call;
  /** positions in call.cases */
  indices: number[];
}

interface Slot {
  worker: StartedWorker<ToWorker>;
  state: 'starting' | 'idle' | 'busy' | 'dead';
  batch?: Batch;
  /** position in batch.indices of the case running now */
  next: number;
  caseStartedAt: number;
  timer?: NodeJS.Timeout;
  /** the worker reported its own fatal failure (e.g. out of memory) and will exit: blame no case */
  exiting: boolean;
  /** why the pool killed it, if it did */
  killedFor?: 'timeout' | 'abort' | 'close' | 'protocol' | 'load';
}

const isLive = (s: Slot) => s.state !== 'dead' && s.killedFor === undefined;

export class WorkerPool implements RewardRunner {
  readonly file: string;
  private readonly slots = new Set<Slot>();
  private readonly queue: Batch[] = [];
  private closed = false;
  private startFailures = 0;

  constructor(
    private readonly spawn: SpawnWorker,
    private readonly opts: PoolOptions,
  ) {
    this.file = opts.file;
  }

  /** starts every worker and waits until each has loaded the file; rejects with RewardLoadError */
  async start(): Promise<void> {
    const started = Array.from({ length: workerCount(this.opts.workers) }, () => this.startSlot());
    await awaitLoaded(this.file, started.map((s) => s.worker.loaded), () => this.close(), this.opts.completeLoadError);
    this.dispatch();
  }

  score(cases: readonly RewardCase[], signal?: AbortSignal): Promise<RewardOutcome[]> {
    if (this.closed) return Promise.reject(new Error('the reward runner is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (cases.length === 0) return Promise.resolve([]);
    return new Promise<RewardOutcome[]>((resolve, reject) => {
      const call: Call = { cases, outcomes: new Array<RewardOutcome>(cases.length), remaining: cases.length, settled: false, resolve, reject };
      const onAbort = () => this.abort(call, signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      call.resolve = (o) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(o);
      };
      call.reject = (e) => {
        signal?.removeEventListener('abort', onAbort);
        reject(e);
      };
      const workers = workerCount(this.opts.workers);
      const size = Math.min(MAX_BATCH, Math.max(1, Math.ceil(cases.length / (workers * 4))));
      for (let i = 0; i < cases.length; i += size) {
        const indices: number[] = [];
        for (let j = i; j < Math.min(cases.length, i + size); j++) indices.push(j);
        this.queue.push({ call, indices });
      }
      this.ensureWorkers();
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const b of this.queue.splice(0)) this.fail(b.call, new Error('the reward runner was closed'));
    const exits: Array<Promise<void>> = [];
    for (const slot of this.slots) {
      if (slot.batch) this.fail(slot.batch.call, new Error('the reward runner was closed'));
      this.kill(slot, 'close');
      exits.push(slot.worker.exited);
    }
    await Promise.all(exits);
  }

  /** process ids of the live workers (for tests and diagnostics) */
  pids(): number[] {
    return [...this.slots].flatMap((s) => (isLive(s) && s.worker.proc.pid !== undefined ? [s.worker.proc.pid] : []));
  }

  private startSlot(): Slot {
    const worker = startWorker(this.spawn, this.opts.load, this.opts.loadTimeoutMs, {
      message: (raw) => this.onMessage(slot, raw),
      exit: (info) => this.onExit(slot, info),
      loadTimedOut: () => this.kill(slot, 'load'),
    });
    // the events only come later, by which time `slot` is assigned
    const slot: Slot = { worker, state: 'starting', next: 0, caseStartedAt: 0, exiting: false };
    this.slots.add(slot);
    return slot;
  }

  private ensureWorkers(): void {
    if (this.closed) return;
    const live = [...this.slots].filter(isLive).length;
    for (let i = live; i < workerCount(this.opts.workers); i++) {
      const slot = this.startSlot();
      void slot.worker.loaded.then((failure) => {
        if (failure === undefined) {
          this.startFailures = 0;
          this.dispatch();
          return;
        }
        this.kill(slot, 'close');
        this.onStartFailure(failure);
      });
    }
  }

  private onStartFailure(failure: LoadErrorDetail | Error): void {
    this.startFailures++;
    const anyReady = [...this.slots].some((s) => isLive(s) && (s.state === 'idle' || s.state === 'busy'));
    if (this.startFailures < MAX_START_FAILURES || anyReady) {
      if (!anyReady) this.ensureWorkers();
      return;
    }
    // nothing can run the queued cases: fail them rather than wait forever
    this.startFailures = 0;
    const message = `the reward worker could not be restarted: ${failure.message}`;
    for (const batch of this.queue.splice(0)) {
      for (const i of batch.indices) this.settleCase(batch.call, i, { ok: false, reward: 0, error: { kind: 'crash', message }, durationMs: 0 });
    }
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.state !== 'idle') continue;
      let batch = this.queue.shift();
      while (batch?.call.settled) batch = this.queue.shift();
      if (!batch) return;
      slot.state = 'busy';
      slot.batch = batch;
      slot.next = 0;
      slot.worker.proc.send({ type: 'score', cases: batch.indices.map((i) => [batch.call.cases[i].completion, batch.call.cases[i].groundTruth]) });
      this.startCaseTimer(slot);
    }
  }

  private startCaseTimer(slot: Slot): void {
    slot.caseStartedAt = performance.now();
    if (slot.timer) slot.timer.refresh();
    else slot.timer = setTimeout(() => this.onTimeout(slot), this.opts.timeoutMs);
  }

  private stopCaseTimer(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
  }

  private onMessage(slot: Slot, raw: unknown): void {
    if (slot.state === 'dead' || slot.killedFor) return;
    const read = readWorkerMessage(raw, FromWorker);
    if (!read.ok) return this.protocolError(slot, read.problem);
    const msg = read.msg;
    if (msg.type === 'ready' || msg.type === 'load_error') {
      if (!slot.worker.answerLoad(msg)) return this.protocolError(slot, `unexpected '${msg.type}' message`);
      if (msg.type === 'ready') slot.state = 'idle';
      return;
    }
    const batch = slot.batch;
    if (slot.state !== 'busy' || !batch || msg.index !== slot.next) return this.protocolError(slot, `result for case ${msg.index} out of order`);
    const position = batch.indices[slot.next];
    slot.next++;
    if (msg.type === 'reward') {
      this.settleCase(batch.call, position, { ok: true, reward: msg.reward, ...(msg.format !== undefined ? { format: msg.format } : {}), durationMs: msg.durationMs });
    } else {
      const { type: _type, index: _index, kind, durationMs, raw: rawValue, ...detail } = msg;
      if (kind === 'crash') slot.exiting = true;
      this.settleCase(batch.call, position, {
        ok: false,
        reward: 0,
        error: { kind, ...detail },
        durationMs,
        ...(rawValue === undefined ? {} : { raw: rawValue }),
      });
    }
    if (slot.exiting) return this.stopCaseTimer(slot);
    if (slot.next < batch.indices.length) return this.startCaseTimer(slot);
    this.stopCaseTimer(slot);
    slot.batch = undefined;
    slot.state = 'idle';
    this.dispatch();
  }

  private onTimeout(slot: Slot): void {
    slot.timer = undefined;
    const batch = slot.batch;
    if (slot.state !== 'busy' || !batch) return;
    const position = batch.indices[slot.next];
    slot.next++;
    this.settleCase(batch.call, position, {
      ok: false,
      reward: 0,
      error: { kind: 'timeout', message: `${this.opts.functionName} took longer than ${this.opts.timeoutMs} ms; its worker was stopped and replaced` },
      durationMs: performance.now() - slot.caseStartedAt,
    });
    this.kill(slot, 'timeout');
  }

  private protocolError(slot: Slot, message: string): void {
    const batch = slot.batch;
    if (batch && slot.next < batch.indices.length) {
      const position = batch.indices[slot.next];
      slot.next++;
      this.settleCase(batch.call, position, { ok: false, reward: 0, error: { kind: 'crash', message: `the reward worker broke its protocol (${message}); it was replaced` }, durationMs: 0 });
    }
    this.kill(slot, 'protocol');
  }

  private onExit(slot: Slot, info: WorkerExit): void {
    const wasStarting = slot.state === 'starting';
    slot.state = 'dead';
    this.stopCaseTimer(slot);
    this.slots.delete(slot);
    const batch = slot.batch;
    slot.batch = undefined;
    if (batch && slot.next < batch.indices.length && !batch.call.settled) {
      if (!slot.exiting && !slot.killedFor) {
        // died on its own while running this case
        const position = batch.indices[slot.next];
        slot.next++;
        this.settleCase(batch.call, position, {
          ok: false,
          reward: 0,
          error: { kind: 'crash', ...this.opts.describeCrash(info) },
          durationMs: performance.now() - slot.caseStartedAt,
        });
      }
      const rest = batch.indices.slice(slot.next);
      if (rest.length > 0 && slot.killedFor !== 'abort' && slot.killedFor !== 'close') this.queue.unshift({ call: batch.call, indices: rest });
    }
    if (this.closed || wasStarting) return;
    this.ensureWorkers();
    this.dispatch();
  }

  private kill(slot: Slot, why: NonNullable<Slot['killedFor']>): void {
    if (slot.state === 'dead' || slot.killedFor) return;
    slot.killedFor = why;
    this.stopCaseTimer(slot);
    slot.worker.proc.kill();
    // the replacement starts loading while the old process is still being reaped
    if (why === 'timeout' || why === 'protocol' || why === 'abort') this.ensureWorkers();
  }

  private settleCase(call: Call, position: number, outcome: RewardOutcome): void {
    if (call.settled || call.outcomes[position] !== undefined) return;
    call.outcomes[position] = outcome;
    if (--call.remaining === 0) {
      call.settled = true;
      call.resolve(call.outcomes);
    }
  }

  private fail(call: Call, reason: unknown): void {
    if (call.settled) return;
    call.settled = true;
    call.reject(reason);
  }

  private abort(call: Call, reason: unknown): void {
    this.fail(call, reason);
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i].call === call) this.queue.splice(i, 1);
    // abandon work in flight for this call: its workers are replaced rather than left computing
    for (const slot of this.slots) if (slot.batch?.call === call) this.kill(slot, 'abort');
  }
}
