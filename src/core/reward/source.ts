// The text a runner executes, read once at creation (or given by the caller): every worker, and
// every replacement, then loads the same text even if the file changes on disk meanwhile.
import { existsSync, promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RewardLoadError } from './errors';
import type { RewardRunnerOptions } from './types';

export const REWARD_DEFAULTS = { python: 'python3', workers: 2, timeoutMs: 10_000, memoryMb: 1024 } as const;

/** loading may import heavy libraries: at least 30 s, or the per-call limit if that is longer */
export function loadTimeoutMs(opts: RewardRunnerOptions): number {
  return opts.loadTimeoutMs ?? Math.max(30_000, opts.timeoutMs ?? REWARD_DEFAULTS.timeoutMs);
}

/** the text to run: `source` when the caller passes it (an editor's unsaved contents), else the file */
export async function readRewardSource(file: string, source?: string): Promise<string> {
  if (source !== undefined) return source;
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new RewardLoadError(file, { message: `cannot read the file (${err instanceof Error ? err.message : String(err)})` });
  }
}

/** the reward file's folder (relative paths in user code), or the temp dir if it does not exist yet */
export function workingDirectory(file: string): string {
  const dir = path.dirname(file);
  return existsSync(dir) ? dir : os.tmpdir();
}
