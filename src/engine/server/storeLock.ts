// The lock on the engine store's index (engine-store.json): a lock file created exclusively, holding
// the writer's pid and host. It is held only for one read-merge-write of the index (milliseconds), so
// a second engine on the same store waits for it; a lock whose process is gone (same host, pid not
// alive) is stale and taken over; a lock held past the wait gives an error naming its holder.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockInfo, pidAlive } from '../../core/runs/runLock';

export const STORE_LOCK_FILE = 'engine-store.lock';

/** Per lock file, the last acquisition queued in this process: one holder per process at a time. */
const queues = new Map<string, Promise<unknown>>();

export class StoreLockedError extends Error {
  constructor(
    readonly file: string,
    readonly holder: LockInfo | undefined,
  ) {
    super(
      `the engine's checkpoint store ${path.dirname(file)} is locked ` +
        (holder ? `by process ${holder.pid} on ${holder.host} (since ${holder.since})` : '(the lock file is being written or unreadable)') +
        `; if no such process is running, delete ${file}`,
    );
    this.name = 'StoreLockedError';
  }
}

function parseHolder(text: string | undefined): LockInfo | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = LockInfo.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function isStale(holder: LockInfo): boolean {
  if (holder.host !== os.hostname()) return false; // a pid on another machine cannot be checked
  // this process's own pid: left by an acquisition of this process that ended (this process queues
  // its own acquisitions, so none of them holds the file while another tries)
  if (holder.pid === process.pid) return true;
  return !pidAlive(holder.pid);
}

/** A lock file that never got its content (its writer died between create and write). */
async function abandonedEmpty(file: string): Promise<boolean> {
  try {
    return Date.now() - (await fs.stat(file)).mtimeMs > 5_000;
  } catch {
    return false;
  }
}

export interface StoreLockOptions {
  /** how long to wait for a live holder before giving up (default 15 s) */
  waitMs?: number;
}

/** Runs `fn` holding the store's lock; waits (with backoff) while another engine holds it. */
export function withStoreLock<T>(dataDir: string, fn: () => Promise<T>, opts: StoreLockOptions = {}): Promise<T> {
  const file = path.join(dataDir, STORE_LOCK_FILE);
  const run = (queues.get(file) ?? Promise.resolve()).then(() => holding(file, fn, opts));
  const settled = run.catch(() => undefined);
  queues.set(file, settled);
  void settled.then(() => {
    if (queues.get(file) === settled) queues.delete(file);
  });
  return run;
}

async function holding<T>(file: string, fn: () => Promise<T>, opts: StoreLockOptions): Promise<T> {
  const deadline = Date.now() + (opts.waitMs ?? 15_000);
  for (let attempt = 0; ; attempt++) {
    try {
      const info: LockInfo = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() };
      await fs.writeFile(file, `${JSON.stringify(info)}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const text = await fs.readFile(file, 'utf8').catch(() => undefined);
    const holder = parseHolder(text);
    if (holder ? isStale(holder) : await abandonedEmpty(file)) {
      // only the stale lock itself: not a fresh one another engine took over it meanwhile
      if ((await fs.readFile(file, 'utf8').catch(() => undefined)) === text) await fs.rm(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new StoreLockedError(file, holder);
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, 2 + attempt * 3)));
  }
  try {
    return await fn();
  } finally {
    await fs.rm(file, { force: true });
  }
}
