// Reward runners: `createRewardRunner` picks the Python pool or the Node pool by the file's
// extension, loads the file, and rejects with a RewardLoadError when it cannot be loaded.
import * as path from 'path';
import { RewardLoadError } from './errors';
import { createNodeRewardRunner } from './node';
import { createPythonRewardRunner } from './python';
import type { RewardRunner, RewardRunnerOptions } from './types';

export { RewardLoadError } from './errors';
export { REWARD_DEFAULTS } from './source';
export type { RewardCase, RewardError, RewardErrorKind, RewardOutcome, RewardRunner, RewardRunnerOptions } from './types';

const NODE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts']);

export function createRewardRunner(opts: RewardRunnerOptions): Promise<RewardRunner> {
  const ext = path.extname(opts.file).toLowerCase();
  if (ext === '.py') return createPythonRewardRunner(opts);
  if (NODE_EXTENSIONS.has(ext)) return createNodeRewardRunner(opts);
  return Promise.reject(new RewardLoadError(opts.file, { message: `unsupported reward file type '${ext || '(none)'}': use .py, .js, .mjs, .cjs or .ts` }));
}
