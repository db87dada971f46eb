// The text a runner executes, read once at creation (or given by the caller): every worker, and
// every replacement, then loads the same text even if the file changes on disk meanwhile. And the
// start of a runner's worker pool, the same for Python and Node apart from the command and messages.
import { existsSync, promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RewardLoadError } from './errors';
import { PoolOptions, WorkerPool } from './pool';
import type { RewardRunnerOptions } from './types';
import { spawnWorkerProcess, WorkerCommand } from './workerProcess';
import { errorMessage } from '../errors';

export const REWARD_DEFAULTS = { python: 'python3', workers: 2, timeoutMs: 10_000, memoryMb: 1024 } as const;

/** Starts a pool of `command` workers with the caller's limits; rejects with RewardLoadError. */
export async function startRewardPool(
  opts: RewardRunnerOptions,
  command: Omit<WorkerCommand, 'cwd'>,
  pool: Omit<PoolOptions, 'workers' | 'timeoutMs' | 'loadTimeoutMs'>,
): Promise<WorkerPool> {
  const timeoutMs = opts.timeoutMs ?? REWARD_DEFAULTS.timeoutMs;
  const cmd = { ...command, cwd: workingDirectory(pool.file) };
  const runner = new WorkerPool((handlers) => spawnWorkerProcess(cmd, handlers), {
    ...pool,
    workers: opts.workers ?? REWARD_DEFAULTS.workers,
    timeoutMs,
    // loading may import heavy libraries: at least 30 s, or the per-call limit if that is longer
    loadTimeoutMs: opts.loadTimeoutMs ?? Math.max(30_000, timeoutMs),
  });
  // a caller that no longer wants the runner (e.g. a newer edit) does not wait for a slow load
  const stop = () => void runner.close();
  opts.signal?.throwIfAborted();
  opts.signal?.addEventListener('abort', stop, { once: true });
  try {
    await runner.start();
    opts.signal?.throwIfAborted();
  } catch (err) {
    opts.signal?.throwIfAborted();
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', stop);
  }
  return runner;
}

/** the text to run: `source` when the caller passes it (an editor's unsaved contents), else the file */
export async function readRewardSource(file: string, source?: string): Promise<string> {
  if (source !== undefined) return source;
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new RewardLoadError(file, { message: `cannot read the file (${errorMessage(err)})` });
  }
}

/** the reward file's folder (relative paths in user code), or the temp dir if it does not exist yet */
function workingDirectory(file: string): string {
  const dir = path.dirname(file);
  return existsSync(dir) ? dir : os.tmpdir();
}
