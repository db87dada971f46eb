// The error a runner's creation rejects with when the reward file cannot be loaded: a syntax error,
// the function missing, not callable or taking the wrong parameters, or module-level code raising.
// It carries the `load` RewardError (line/column in the reward file when known) for diagnostics.
import * as path from 'path';
import type { RewardError } from './types';

export class RewardLoadError extends Error {
  override readonly name = 'RewardLoadError';
  readonly error: RewardError;

  constructor(
    readonly file: string,
    detail: { message: string; traceback?: string; line?: number; column?: number },
    /** what the file is, as the message names it */
    what: 'reward file' | 'environment file' = 'reward file',
  ) {
    const where = detail.line === undefined ? '' : `:${detail.line}${detail.column === undefined ? '' : `:${detail.column}`}`;
    super(`Cannot load ${what} ${path.basename(file)}${where}: ${detail.message}`);
    this.error = { kind: 'load', ...detail };
  }

  /** The same error about an environment file (the runner code it shares with reward files says "reward file"). */
  asEnvironmentFile(): RewardLoadError {
    const { kind: _kind, ...detail } = this.error;
    return new RewardLoadError(this.file, detail, 'environment file');
  }

  get line(): number | undefined {
    return this.error.line;
  }

  get column(): number | undefined {
    return this.error.column;
  }
}
