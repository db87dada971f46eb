// Whole-file writes that either replace the target or leave it as it was: a temp file in the same
// directory, then rename. The temp file is removed when anything fails. On Windows a rename onto a
// file another process (an indexer, an antivirus, a reader) briefly holds fails with EPERM/EACCES/
// EBUSY; that is retried a few times before giving up.
import * as fs from 'node:fs';
import * as path from 'node:path';

const TRANSIENT = new Set(['EPERM', 'EACCES', 'EBUSY']);
const RETRY_DELAYS_MS = [10, 30, 100, 300, 1000];

export interface AtomicWriteOptions {
  /** retry transient rename errors (default: only on Windows, where they happen) */
  retryRename?: boolean;
  /** for tests: the rename to use (default fs.renameSync / fs.promises.rename) */
  rename?: (from: string, to: string) => void;
  renameAsync?: (from: string, to: string) => Promise<void>;
}

let tmpCounter = 0;
function tmpName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${++tmpCounter}.tmp`);
}

function isTransient(err: unknown): boolean {
  return TRANSIENT.has((err as NodeJS.ErrnoException).code ?? '');
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Writes `content` to `file` atomically (fsync before the rename); no temp file survives a failure. */
export function writeFileAtomicSync(file: string, content: string | Uint8Array, opts: AtomicWriteOptions = {}): void {
  const tmp = tmpName(file);
  const retry = opts.retryRename ?? process.platform === 'win32';
  const rename = opts.rename ?? fs.renameSync;
  try {
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeFileSync(fd, content);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        rename(tmp, file);
        return;
      } catch (err) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (!retry || !isTransient(err) || delay === undefined) throw err;
        sleepSync(delay);
      }
    }
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** The asynchronous twin of writeFileAtomicSync. */
export async function writeFileAtomic(file: string, content: string | Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  const tmp = tmpName(file);
  const retry = opts.retryRename ?? process.platform === 'win32';
  const rename = opts.renameAsync ?? fs.promises.rename;
  try {
    const handle = await fs.promises.open(tmp, 'w');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await rename(tmp, file);
        return;
      } catch (err) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (!retry || !isTransient(err) || delay === undefined) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  } catch (err) {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
}
