// What the reward pool and the environment pool share about one worker process: starting it with
// its `load` message under a time limit, the ready/load_error handshake, reading its messages
// (oversized or malformed ones are protocol errors) and what a worker that died while loading left
// behind. The pools keep only what differs: how work is queued, sent and answered.
import type { z } from 'zod';
import { RewardLoadError } from './errors';
import { MAX_MESSAGE_LINE_BYTES } from './protocol';

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

export interface WorkerProcess<M> {
  readonly pid: number | undefined;
  send(message: M): void;
  /** kills the process (and anything it started); `exit` follows */
  kill(): void;
}

export type LoadErrorDetail = { message: string; traceback?: string; line?: number; column?: number };

/** undefined once the worker has loaded the file, else why it did not */
export type LoadOutcome = LoadErrorDetail | Error | undefined;

export type LoadAnswer = { type: 'ready' } | ({ type: 'load_error' } & LoadErrorDetail);

export interface StartedWorker<M> {
  readonly proc: WorkerProcess<M>;
  readonly loaded: Promise<LoadOutcome>;
  /** resolves after the process has exited and the pool's exit handler has run */
  readonly exited: Promise<void>;
  /** still waiting for the answer to `load` */
  readonly loading: boolean;
  /** takes the worker's answer to `load`; false when none was awaited (a protocol error) */
  answerLoad(answer: LoadAnswer): boolean;
}

export interface WorkerEvents {
  message(raw: unknown): void;
  exit(info: WorkerExit): void;
  /** the load time limit passed: the pool kills the worker */
  loadTimedOut(): void;
}

/** Spawns a worker, sends it `load`, and settles `loaded` by its answer, its death or the time limit. */
export function startWorker<M>(spawn: (handlers: WorkerHandlers) => WorkerProcess<M>, load: M, loadTimeoutMs: number, on: WorkerEvents): StartedWorker<M> {
  let settleLoad!: (outcome: LoadOutcome) => void;
  let markExited!: () => void;
  let loading = true;
  const loaded = new Promise<LoadOutcome>((resolve) => (settleLoad = resolve));
  const exited = new Promise<void>((resolve) => (markExited = resolve));
  const settle = (outcome: LoadOutcome): boolean => {
    if (!loading) return false;
    loading = false;
    settleLoad(outcome);
    return true;
  };
  const proc = spawn({
    message: (raw) => on.message(raw),
    exit: (info) => {
      on.exit(info);
      // the file's module-level code killed the worker (exit, crash): a load error of the file
      settle(info.spawnError ?? diedWhileLoading(info));
      markExited();
    },
  });
  proc.send(load);
  // module-level code that never finishes must not hang the caller
  const loadTimer = setTimeout(() => {
    if (settle({ message: `loading the file took longer than ${loadTimeoutMs} ms (module-level code that never finishes?)` })) on.loadTimedOut();
  }, loadTimeoutMs);
  void loaded.then(() => clearTimeout(loadTimer));
  return {
    proc,
    loaded,
    exited,
    get loading() {
      return loading;
    },
    answerLoad: (answer) => {
      if (answer.type === 'ready') return settle(undefined);
      const { type: _type, ...detail } = answer;
      return settle(detail);
    },
  };
}

function diedWhileLoading(info: WorkerExit): LoadErrorDetail {
  const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
  const tail = info.outputTail.trim();
  return { message: `the worker ${how} while loading the file`, ...(tail ? { traceback: tail.slice(-4000) } : {}) };
}

/**
 * Waits until every worker has loaded the file. On the first failure it closes the pool and throws:
 * a failure to start as is, the file's own load error as RewardLoadError (completed if asked).
 */
export async function awaitLoaded(file: string, loads: ReadonlyArray<Promise<LoadOutcome>>, close: () => Promise<void>, complete?: (detail: LoadErrorDetail) => LoadErrorDetail): Promise<void> {
  const failure = (await Promise.all(loads)).find((r) => r !== undefined);
  if (failure === undefined) return;
  await close();
  if (failure instanceof Error) throw failure;
  throw new RewardLoadError(file, complete ? complete(failure) : failure);
}

/** A worker's message checked against the protocol, or what is wrong with it. */
export function readWorkerMessage<T>(raw: unknown, schema: z.ZodType<T>): { ok: true; msg: T } | { ok: false; problem: string } {
  if (typeof raw === 'object' && raw !== null && 'type' in raw && raw.type === 'oversized') {
    return { ok: false, problem: `it sent a message longer than ${MAX_MESSAGE_LINE_BYTES} bytes, more than a result or an error report can need` };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, msg: parsed.data };
  const issue = parsed.error.issues[0];
  const tooBig = issue?.code === 'too_big' ? ` (${issue.path.join('.')} is longer than ${issue.maximum} characters)` : '';
  return { ok: false, problem: `unexpected message from the worker${tooBig}: ${parsed.error.message.slice(0, 500)}` };
}

/** the configured worker count, at least one */
export const workerCount = (n: number): number => (Number.isFinite(n) ? Math.max(1, Math.floor(n)) : 1);
