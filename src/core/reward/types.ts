// The contract of reward runners: user code `compute_reward(completion, ground_truth) -> float`
// (Python) or `computeReward(completion, groundTruth)` (JS/TS), run out of the caller's process.
// The function may instead return `{"reward": x, "format": y}` (a dict / an object; `format` may be
// left out): `format` is the grader's own format check (e.g. "the answer is in a box"), carried into
// the `format` metric of training and of evaluations; nothing else may be in it.
// A failing case never throws out of `score`: it scores 0 and carries what went wrong.

export interface RewardCase {
  /** the completion's text content (the stop sequence removed) */
  completion: string;
  groundTruth: string;
}

export type RewardErrorKind =
  /** the function raised; `traceback` and `line` (in the reward file) say where */
  | 'exception'
  /** the call took longer than the per-call time limit; the worker was replaced */
  | 'timeout'
  /** the worker process/thread died (e.g. exit, memory cap); it was replaced */
  | 'crash'
  /** the result is not a finite number */
  | 'invalid_result'
  /** the file could not be loaded: syntax error, missing function, wrong parameters */
  | 'load';

export interface RewardError {
  kind: RewardErrorKind;
  message: string;
  /** the traceback/stack as the language printed it */
  traceback?: string;
  /** 1-based line in the reward file the error points at, when known */
  line?: number;
  /** 1-based column, when known */
  column?: number;
}

export type RewardOutcome =
  | { ok: true; reward: number; /** the grader's `format` metric, when it returned one */ format?: number; durationMs: number }
  | { ok: false; reward: 0; error: RewardError; durationMs: number; /** the raw value for invalid_result */ raw?: string };

export interface RewardRunner {
  /** the reward file this runner executes */
  readonly file: string;
  /** scores every case, in order; never rejects for a case's failure (only for `signal` or `close`) */
  score(cases: readonly RewardCase[], signal?: AbortSignal): Promise<RewardOutcome[]>;
  close(): Promise<void>;
}

export interface RewardRunnerOptions {
  /** absolute path of a .py, .js, .mjs, .cjs or .ts file */
  file: string;
  /** the file's text to run instead of what is on disk (an editor's unsaved contents); positions
   *  in errors and tracebacks still name `file`, and its folder stays the working directory */
  source?: string;
  /** Python interpreter (default "python3") */
  python?: string;
  /** environment variables (names, or NAME_* prefixes) passed to workers besides the built-in allowlist */
  environment?: readonly string[];
  /** parallel workers (default: 2) */
  workers?: number;
  /** per-call time limit in ms (default 10_000) */
  timeoutMs?: number;
  /** memory cap per worker in MB (default 1024) */
  memoryMb?: number;
  /** time limit for loading the file (module-level code, imports) in ms (default: the larger of 30_000 and timeoutMs) */
  loadTimeoutMs?: number;
  /** aborting while the workers load stops them; creation then rejects with the signal's reason */
  signal?: AbortSignal;
}
