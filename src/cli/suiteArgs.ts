// Arguments of `tinker-studio suite run|show|compare <suite> <checkpoint>…`, parsed with errors that say what to type.
import { BACKEND_OPTIONS, UsageError, backendArgs, readOptions } from './options';

export interface SuiteArgs {
  command: 'suite';
  action: 'run' | 'show' | 'compare';
  suite: string;
  /** run, show: one; compare: A then B (B plays the production model) */
  checkpoints: string[];
  runsDir?: string;
  backend?: 'local' | 'cloud' | 'custom';
  baseUrl?: string;
  cacheDir?: string;
  python?: string;
  json?: boolean;
}

export const SUITE_USAGE = `       tinker-studio suite run <file.suite.json> <checkpoint> [options]
       tinker-studio suite show <file.suite.json> <checkpoint> [--json]
       tinker-studio suite compare <file.suite.json> <checkpoint A> <checkpoint B> [--json]`;

export const SUITE_HELP = `"suite run" evaluates a checkpoint on every entry of a suite (resumably: Ctrl-C, then the same command
goes on where it stopped) and prints the table of the suite's layers with 95 % intervals; results go to
suites/<name>/<version>/<checkpoint>/ next to the suite file. A checkpoint is a base model name, a
tinker:// sampler path, a run directory (its final sampler checkpoint) or "latest" (the newest run in
--runs-dir). "suite show" prints a stored result; "suite compare" puts A and B side by side: each
entry's paired difference A − B (better positive) with its interval and the gate's verdict, B playing
the production model.`;

const OPTIONS = { ...BACKEND_OPTIONS, python: { type: 'string' }, json: { type: 'boolean' } } as const;

export function parseSuiteArgs(rest: readonly string[]): SuiteArgs {
  const { values: v, positionals, flags } = readOptions(OPTIONS, rest);
  const [action, suite, ...checkpoints] = positionals;
  if (action !== 'run' && action !== 'show' && action !== 'compare') throw new UsageError(`suite: give run, show or compare${action ? ` (got "${action}")` : ''}`);
  if (!suite) throw new UsageError(`suite ${action}: give a suite file (*.suite.json)`);
  const want = action === 'compare' ? 2 : 1;
  if (checkpoints.length !== want)
    throw new UsageError(`suite ${action}: give ${action === 'compare' ? 'two checkpoints (A, then B as production)' : 'one checkpoint'}: a base model name, a tinker:// path, a run directory or "latest" (got ${checkpoints.length})`);
  if (flags.has('json') && action === 'run') throw new UsageError('suite run: --json is for show and compare');
  return { command: 'suite', action, suite, checkpoints, ...backendArgs(v), ...(v.python !== undefined ? { python: v.python } : {}), ...(flags.has('json') ? { json: true } : {}) };
}
