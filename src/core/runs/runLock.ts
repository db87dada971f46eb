// One writer per run directory: a lock file holding the writer's pid and host, created exclusively.
// A lock whose process is gone (same host, pid not alive) is stale and taken over; so is one this
// process wrote but no longer holds (a run that ended without releasing it). A live holder gets a
// clear error naming it, so two windows (or a window and the CLI) never interleave metrics.jsonl.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod';
import { processGoingAway } from './shutdown';

export const RUN_LOCK_FILE = '.tinker-run.lock';

/** What a lock file holds: its writer's pid and host, and since when (the engine store's lock too). */
export const LockInfo = z.object({ pid: z.number().int(), host: z.string(), since: z.string() });
export type LockInfo = z.infer<typeof LockInfo>;

/** Lock files this process holds (so its own pid in a lock it does not hold means stale). */
const heldHere = new Set<string>();

export class RunDirectoryLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockInfo,
  ) {
    super(
      `${dir} is in use by another run (process ${holder.pid} on ${holder.host}, since ${holder.since}). ` +
        `Stop that run first; if no such process is running, delete ${path.join(dir, RUN_LOCK_FILE)}.`,
    );
    this.name = 'RunDirectoryLockedError';
  }
}

/** Whether a process with this pid exists on this machine. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockInfo | undefined {
  try {
    const parsed = LockInfo.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function isStale(file: string, holder: LockInfo | undefined): boolean {
  if (!holder) return true; // unreadable or not ours to understand: nobody can prove they hold it
  if (holder.host !== os.hostname()) return false; // cannot check a pid on another machine
  if (holder.pid === process.pid) return !heldHere.has(file);
  return !pidAlive(holder.pid);
}

export interface RunLock {
  readonly file: string;
  /** true when a stale lock (dead process) was taken over */
  readonly tookOver: boolean;
  release(): void;
}

/**
 * Whether a writer holds `dir`: `stale` means one took it and died without letting go (a window
 * reloaded or closed, a process killed in the middle of a run).
 */
export function runLockState(dir: string): 'free' | 'held' | 'stale' {
  const file = path.resolve(dir, RUN_LOCK_FILE);
  if (!fs.existsSync(file)) return 'free';
  const holder = readHolder(file);
  // a lock being written right now has no content yet: not proof of a dead writer
  if (!holder) return 'held';
  return isStale(file, holder) ? 'stale' : 'held';
}

/** Locks `dir` for writing; throws RunDirectoryLockedError when a live process holds it. */
export function lockRunDirectory(dir: string): RunLock {
  const file = path.resolve(dir, RUN_LOCK_FILE);
  const info: LockInfo = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() };
  let tookOver = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(info)}\n`, { flag: 'wx' });
      heldHere.add(file);
      let released = false;
      return {
        file,
        tookOver,
        release() {
          if (released) return;
          released = true;
          heldHere.delete(file);
          if (!processGoingAway() && readHolder(file)?.pid === process.pid) fs.rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(file);
    if (holder && !isStale(file, holder)) throw new RunDirectoryLockedError(path.resolve(dir), holder);
    fs.rmSync(file, { force: true });
    tookOver = true;
  }
  const holder = readHolder(file);
  throw new RunDirectoryLockedError(path.resolve(dir), holder ?? { pid: -1, host: 'unknown', since: 'unknown' });
}
