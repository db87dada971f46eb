// The lock on the engine store's index (engine-store.json): a lock file created exclusively, holding
// the writer's pid and host. It is held only for one read-merge-write of the index (milliseconds), so
// a second engine on the same store waits for it; a lock whose process is gone (same host, pid not
// alive) is stale and taken over; a lock held past the wait gives an error naming its holder.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockInfo, pidAlive } from '../../core/runs/runLock';

export const STORE_LOCK_FILE = 'engine-store.lock';

/** Lock files this process holds right now (its own pid in a lock it does not hold means stale). */
const heldHere = new Set<string>();

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

async function readHolder(file: string): Promise<LockInfo | undefined> {
  try {
    const parsed = LockInfo.safeParse(JSON.parse(await fs.readFile(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function isStale(file: string, holder: LockInfo): boolean {
  if (holder.host !== os.hostname()) return false; // a pid on another machine cannot be checked
  if (holder.pid === process.pid) return !heldHere.has(file);
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
export async function withStoreLock<T>(dataDir: string, fn: () => Promise<T>, opts: StoreLockOptions = {}): Promise<T> {
  const file = path.join(dataDir, STORE_LOCK_FILE);
  const deadline = Date.now() + (opts.waitMs ?? 15_000);
  const info: LockInfo = { pid: process.pid, host: os.hostname(), since: '' };
  for (let attempt = 0; ; attempt++) {
    // within this process, one holder at a time: wait for ours before touching the file
    if (!heldHere.has(file)) {
      info.since = new Date().toISOString();
      try {
        await fs.writeFile(file, `${JSON.stringify(info)}\n`, { flag: 'wx' });
        heldHere.add(file);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = await readHolder(file);
      if (holder ? isStale(file, holder) : await abandonedEmpty(file)) {
        await fs.rm(file, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new StoreLockedError(file, holder);
    } else if (Date.now() > deadline) {
      throw new StoreLockedError(file, { pid: process.pid, host: os.hostname(), since: info.since });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, 2 + attempt * 3)));
  }
  try {
    return await fn();
  } finally {
    heldHere.delete(file);
    await fs.rm(file, { force: true });
  }
}
