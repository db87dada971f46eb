// A pool of reward worker processes, the same for Python and Node workers (they differ only in how
// a process is spawned and how its messages travel). Cases are split into batches and spread over
// the workers; a worker answers case by case, so when the per-call time limit expires or the process
// dies the pool knows exactly which case was running: that case fails ('timeout' / 'crash'), the
// worker is replaced, and the rest of its batch goes back to the front of the queue.
import { RewardLoadError } from './errors';
import { FromWorker, MAX_MESSAGE_LINE_BYTES, ToWorker } from './protocol';
import type { RewardCase, RewardError, RewardOutcome, RewardRunner } from './types';

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** the last few KB the process wrote to stdout/stderr (user prints, fatal error reports) */
  outputTail: string;
  /** set when the process could not be started at all (e.g. the interpreter is missing) */
  spawnError?: Error;
}

export interface WorkerHandlers {
  message(raw: unknown): void;
  /** called once, after the process has exited and every message it sent has been delivered */
  exit(info: WorkerExit): void;
}

export interface WorkerProcess<M = ToWorker> {
  readonly pid: number | undefined;
  send(message: M): void;
  /** kills the process (and anything it started); `exit` follows */
  kill(): void;
}

export type SpawnWorker = (handlers: WorkerHandlers) => WorkerProcess;

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

export type LoadErrorDetail = { message: string; traceback?: string; line?: number; column?: number };

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
  proc: WorkerProcess;
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
  exited: Promise<void>;
  onReady?(error?: LoadErrorDetail | Error): void;
}

const isOversized = (raw: unknown): boolean => typeof raw === 'object' && raw !== null && 'type' in raw && raw.type === 'oversized';

const workerCount = (n: number) => (Number.isFinite(n) ? Math.max(1, Math.floor(n)) : 1);

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
    const results = await Promise.all(started.map((s) => s.loaded));
    const failure = results.find((r) => r !== undefined);
    if (failure !== undefined) {
      await this.close();
      if (failure instanceof Error) throw failure;
      throw new RewardLoadError(this.file, this.opts.completeLoadError ? this.opts.completeLoadError(failure) : failure);
    }
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
      exits.push(slot.exited);
    }
    await Promise.all(exits);
  }

  /** process ids of the live workers (for tests and diagnostics) */
  pids(): number[] {
    return [...this.slots].flatMap((s) => (isLive(s) && s.proc.pid !== undefined ? [s.proc.pid] : []));
  }

  private startSlot(): { slot: Slot; loaded: Promise<LoadErrorDetail | Error | undefined> } {
    let markExited!: () => void;
    let onReady!: (error?: LoadErrorDetail | Error) => void;
    const loaded = new Promise<LoadErrorDetail | Error | undefined>((resolve) => (onReady = resolve));
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const handlers: WorkerHandlers = {
      message: (raw) => this.onMessage(slot, raw),
      exit: (info) => {
        this.onExit(slot, info);
        markExited();
      },
    };
    // handlers only run from later events, by which time `slot` is assigned
    const slot: Slot = { proc: this.spawn(handlers), state: 'starting', next: 0, caseStartedAt: 0, exiting: false, exited, onReady };
    this.slots.add(slot);
    slot.proc.send(this.opts.load);
    // module-level code that never finishes must not hang the caller
    const limitMs = this.opts.loadTimeoutMs;
    const loadTimer = setTimeout(() => {
      if (slot.state !== 'starting' || !slot.onReady) return;
      slot.onReady({ message: `loading the file took longer than ${limitMs} ms (module-level code that never finishes?)` });
      slot.onReady = undefined;
      this.kill(slot, 'load');
    }, limitMs);
    void loaded.then(() => clearTimeout(loadTimer));
    return { slot, loaded };
  }

  private ensureWorkers(): void {
    if (this.closed) return;
    const live = [...this.slots].filter(isLive).length;
    for (let i = live; i < workerCount(this.opts.workers); i++) {
      const { slot, loaded } = this.startSlot();
      void loaded.then((failure) => {
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
      slot.proc.send({ type: 'score', cases: batch.indices.map((i) => [batch.call.cases[i].completion, batch.call.cases[i].groundTruth]) });
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
    if (isOversized(raw)) {
      return this.protocolError(slot, `it sent a message longer than ${MAX_MESSAGE_LINE_BYTES} bytes, more than a result or an error report can need`);
    }
    const parsed = FromWorker.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const tooBig = issue?.code === 'too_big' ? ` (${issue.path.join('.')} is longer than ${issue.maximum} characters)` : '';
      return this.protocolError(slot, `unexpected message from the worker${tooBig}: ${parsed.error.message.slice(0, 500)}`);
    }
    const msg = parsed.data;
    if (msg.type === 'ready' || msg.type === 'load_error') {
      if (slot.state !== 'starting') return this.protocolError(slot, `unexpected '${msg.type}' message`);
      if (msg.type === 'ready') {
        slot.state = 'idle';
        slot.onReady?.();
      } else {
        const { type: _type, ...detail } = msg;
        slot.onReady?.(detail);
      }
      slot.onReady = undefined;
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
    if (wasStarting && slot.onReady) {
      slot.onReady(info.spawnError ?? this.diedWhileLoading(info));
      slot.onReady = undefined;
    }
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

  /** the file's module-level code killed the worker (exit, crash): a load error of the file */
  private diedWhileLoading(info: WorkerExit): LoadErrorDetail {
    const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    const tail = info.outputTail.trim();
    return { message: `the worker ${how} while loading the file`, ...(tail ? { traceback: tail.slice(-4000) } : {}) };
  }

  private kill(slot: Slot, why: NonNullable<Slot['killedFor']>): void {
    if (slot.state === 'dead' || slot.killedFor) return;
    slot.killedFor = why;
    this.stopCaseTimer(slot);
    slot.proc.kill();
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
