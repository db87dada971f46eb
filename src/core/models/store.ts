// Reading and writing the registry file. Every change is read-modify-write under an exclusive lock file
// (created with O_EXCL, released after the write): the file is re-read inside the lock, so two windows
// or a window and the CLI changing it at once both keep their change. A lock left by a dead process is
// taken over. Writes are atomic, and MODELS.md is regenerated with each one.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeFileAtomic } from '../fs/atomic';
import { LockInfo, pidAlive } from '../runs/runLock';
import { formatIssue } from '../spec/issues';
import { parseJsonWithPosition, RunSpecError } from '../spec/text';
import { renderModelsMd } from './markdown';
import { Actor, emptyRegistry, MODELS_MD, REGISTRY_FILE, Registry, RegistryFileSchema } from './registry';

export const REGISTRY_LOCK_SUFFIX = '.lock';
/** how long a writer waits for another's lock before saying who holds it */
const LOCK_WAIT_MS = 30_000;
/** a lock file with no readable holder this old was left half-written by a crash */
const UNREADABLE_LOCK_STALE_MS = 5_000;

export function registryFileIn(workspaceRoot: string): string {
  return path.join(workspaceRoot, REGISTRY_FILE);
}

export function modelsMdOf(registryFile: string): string {
  return path.join(path.dirname(registryFile), MODELS_MD);
}

/** Parses the registry's text; the error names the file and the field. */
export function parseRegistry(text: string, file: string): Registry {
  const r = RegistryFileSchema.safeParse(parseJsonWithPosition(text, file), { reportInput: true });
  if (!r.success) throw new RunSpecError(r.error.issues.map((i) => `${file}: ${formatIssue(i, RegistryFileSchema)}`));
  return r.data;
}

/** The registry, or an empty one when the file does not exist yet. */
export async function readRegistry(file: string): Promise<Registry> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyRegistry();
    throw e;
  }
  return parseRegistry(text, file);
}

export function registryText(reg: Registry): string {
  return `${JSON.stringify(reg, null, 2)}\n`;
}

/** Writes MODELS.md next to the registry file from `reg`. */
export async function writeModelsMd(file: string, reg: Registry): Promise<string> {
  const md = modelsMdOf(file);
  await writeFileAtomic(md, renderModelsMd(reg, { registryDir: path.dirname(file) }));
  return md;
}

function readHolder(lock: string): LockInfo | undefined {
  try {
    const r = LockInfo.safeParse(JSON.parse(fs.readFileSync(lock, 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

function lockIsStale(lock: string, holder: LockInfo | undefined): boolean {
  if (!holder) {
    try {
      return Date.now() - fs.statSync(lock).mtimeMs > UNREADABLE_LOCK_STALE_MS;
    } catch {
      return false; // gone already: the next attempt creates it
    }
  }
  return holder.host === os.hostname() && holder.pid !== process.pid && !pidAlive(holder.pid);
}

/** Moves a stale lock aside (only one taker's rename succeeds), and puts it back if it turned out live. */
function takeOverStale(lock: string): void {
  const aside = `${lock}.stale.${process.pid}.${Date.now()}`;
  try {
    fs.renameSync(lock, aside);
  } catch {
    return;
  }
  const holder = readHolder(aside);
  if (holder && !lockIsStale(aside, holder)) {
    // another writer created a fresh lock between our check and the rename: give it back
    try {
      fs.linkSync(aside, lock);
    } catch {
      // a third writer holds the lock now; the one we moved finishes its write without it
    }
  }
  fs.rmSync(aside, { force: true });
}

async function acquireLock(file: string, signal?: AbortSignal): Promise<() => void> {
  const lock = `${file}${REGISTRY_LOCK_SUFFIX}`;
  const info: LockInfo = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() };
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    signal?.throwIfAborted();
    try {
      const fd = fs.openSync(lock, 'wx');
      try {
        fs.writeFileSync(fd, `${JSON.stringify(info)}\n`);
      } finally {
        fs.closeSync(fd);
      }
      return () => {
        if (readHolder(lock)?.pid === process.pid) fs.rmSync(lock, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(lock);
    if (lockIsStale(lock, holder)) {
      takeOverStale(lock);
      continue;
    }
    if (Date.now() > deadline) {
      const who = holder ? `process ${holder.pid} on ${holder.host}, since ${holder.since}` : 'an unknown process';
      throw new Error(`${file} is being changed by ${who}; try again, or if no such process is running delete ${lock}`);
    }
    // the holder writes a few kilobytes and lets go: a short back-off, not a fixed wait for something
    await new Promise((r) => setTimeout(r, wait + Math.random() * wait));
  }
}

/**
 * Changes the registry: under the lock, re-reads the file, applies `change` to it, writes it
 * atomically and regenerates MODELS.md. `change` throwing leaves both files as they were.
 */
export async function updateRegistry<T>(file: string, change: (reg: Registry) => T | Promise<T>, o: { signal?: AbortSignal } = {}): Promise<T> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const release = await acquireLock(file, o.signal);
  try {
    const reg = await readRegistry(file);
    const out = await change(reg);
    // the schema again: a change must leave a registry that reads back
    const checked = RegistryFileSchema.parse(reg);
    await writeFileAtomic(file, registryText(checked));
    await writeModelsMd(file, checked);
    return out;
  } finally {
    release();
  }
}

/** Who is acting: the OS user and git's user.name in `cwd` (when git and a name are there). */
export function currentActor(cwd: string): Actor {
  let osUser: string;
  try {
    osUser = os.userInfo().username;
  } catch {
    osUser = process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
  let gitUser: string | undefined;
  try {
    gitUser = execFileSync('git', ['config', 'user.name'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim() || undefined;
  } catch {
    // no git, or no user.name: the OS user says who
  }
  return { os_user: osUser, ...(gitUser ? { git_user: gitUser } : {}) };
}
