// Validation of a reward file's text (an editor's contents, saved or not): a static scan for
// networking/process modules, then the file loaded in the real reward runner (a separate process
// with the time limit and memory cap) and every example scored twice. Everything that goes wrong
// becomes a diagnostic at an exact position: load errors where Python/V8 put them, exceptions at
// the innermost line of the reward file in the traceback, whole-function problems (time limit,
// non-finite or out-of-range results, different results for the same input) on the function's
// name, and mismatches with an expected reward on the examples file's line.
import { createRewardRunner, RewardLoadError, REWARD_DEFAULTS } from './index';
import type { RewardRunner, RewardRunnerOptions } from './types';
import {
  compareDiagnostics,
  functionAnchor,
  lineRange,
  linesOf,
  Range,
  restOfLineRange,
  RewardDiagnostic,
  RewardDiagnosticCode,
  tokenRange,
} from './diagnostics';
import { matches, RewardExample } from './examples';
import { scanForSideEffects, ScanLanguage } from './staticScan';
import { DEFAULT_REWARD_RANGE, ExampleResult, ExampleSummary, formatReward, functionName, rewardLanguage, summarize } from './summary';
import { errorMessage } from '../errors';

export interface ValidateRewardOptions {
  /** absolute path of the reward file (positions in tracebacks name it) */
  file: string;
  /** the text to validate */
  source: string;
  examples: readonly RewardExample[];
  /** the examples file's text, to place mismatch diagnostics on each line's `expected` value */
  examplesText?: string;
  /** rewards outside [min, max] are reported (default [0, 1]) */
  range?: readonly [number, number];
  /** per-call time limit in ms (default 10 000, as in run specs) */
  timeoutMs?: number;
  memoryMb?: number;
  python?: string;
  /** environment variables passed to the worker besides the built-in allowlist */
  environment?: readonly string[];
  signal?: AbortSignal;
}

export interface RewardValidation {
  /** problems in the reward file */
  diagnostics: RewardDiagnostic[];
  /** problems to show on the examples file, keyed by its line (mismatches with `expected`) */
  exampleDiagnostics: RewardDiagnostic[];
  /** false when the file could not be loaded (then no example ran) */
  loaded: boolean;
  results: ExampleResult[];
  summary?: ExampleSummary;
}

/** Validates a reward file's text; rejects only when `signal` aborts. */
export async function validateReward(o: ValidateRewardOptions): Promise<RewardValidation> {
  o.signal?.throwIfAborted();
  const language = rewardLanguage(o.file);
  const staticDiagnostics = scanForSideEffects(o.source, language);
  let runner: RewardRunner;
  try {
    runner = await createRewardRunner(validationRunnerOptions(o));
  } catch (err) {
    o.signal?.throwIfAborted();
    const d = loadFailureDiagnostic(o.source, err, functionAnchor(o.source, language));
    return { diagnostics: [...staticDiagnostics, d].sort(compareDiagnostics), exampleDiagnostics: [], loaded: false, results: [] };
  }
  try {
    o.signal?.throwIfAborted();
    const results = await scoreTwice(runner, o.examples, o.signal);
    const range = o.range ?? DEFAULT_REWARD_RANGE;
    const diagnostics = [...staticDiagnostics, ...outcomeDiagnostics(o, language, results, range)].sort(compareDiagnostics);
    return {
      diagnostics,
      exampleDiagnostics: mismatchDiagnostics(results, o.examplesText),
      loaded: true,
      results,
      ...(results.length > 0 ? { summary: summarize(results) } : {}),
    };
  } finally {
    await runner.close();
  }
}

/** The one-worker runner a validation loads the editor's text in (reward and environment files alike). */
export function validationRunnerOptions(o: Pick<ValidateRewardOptions, 'file' | 'source' | 'timeoutMs' | 'memoryMb' | 'python' | 'environment' | 'signal'>): RewardRunnerOptions {
  return {
    file: o.file,
    source: o.source,
    workers: 1,
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.memoryMb !== undefined ? { memoryMb: o.memoryMb } : {}),
    ...(o.python !== undefined ? { python: o.python } : {}),
    ...(o.environment !== undefined ? { environment: o.environment } : {}),
    ...(o.signal !== undefined ? { signal: o.signal } : {}),
  };
}

async function scoreTwice(runner: RewardRunner, examples: readonly RewardExample[], signal?: AbortSignal): Promise<ExampleResult[]> {
  const cases = examples.map((e) => ({ completion: e.completion, groundTruth: e.groundTruth }));
  const first = await runner.score(cases, signal);
  // the same inputs again, in the same worker when it survived: a counter or an unseeded random shows
  const again = examples.flatMap((_, i) => (first[i]!.ok ? [i] : []));
  const second = await runner.score(again.map((i) => cases[i]!), signal);
  const repeats = new Map(again.map((i, k) => [i, second[k]!]));
  return examples.map((example, i) => {
    const outcome = first[i]!;
    const repeat = repeats.get(i);
    return {
      example,
      outcome,
      ...(repeat ? { repeat } : {}),
      ...(example.expected !== undefined ? { matches: outcome.ok && matches(example.expected, outcome.reward) } : {}),
    };
  });
}

/**
 * Where a file that does not load goes wrong, as a diagnostic: a syntax error at its token, a missing
 * or malformed function, class or method (and wrong parameters) on `anchor` (the function's or class's
 * name; without a line from the worker, the first line unless `anchorAlways`), module-level code
 * raising at its line. Reward and environment files share it.
 */
export function loadFailureDiagnostic(source: string, err: unknown, anchor: Range, anchorAlways = false): RewardDiagnostic {
  if (!(err instanceof RewardLoadError)) return { ...lineRange(source, 1), severity: 'error', code: 'load', message: errorMessage(err) };
  const e = err.error;
  const message = e.message;
  let code: RewardDiagnosticCode = 'load';
  if (/^(SyntaxError|IndentationError|TabError|TypeScript feature not supported)\b/.test(message)) code = 'syntax';
  else if (/no function|not a function|no (environment|exported) class|no class |has no method|not a class|several (environment )?classes/.test(message)) code = 'missing-function';
  else if (/must take exactly|must be a plain def|must take the dataset line|must take one message/.test(message)) code = 'parameters';
  let range: Range;
  if (code === 'syntax' && e.line !== undefined) range = tokenRange(source, e.line, e.column);
  else if (code === 'parameters' || code === 'missing-function') range = e.line !== undefined || anchorAlways ? anchor : lineRange(source, 1);
  else range = e.line !== undefined ? restOfLineRange(source, e.line, e.column) : lineRange(source, 1);
  const prefix = code === 'load' ? 'the file raised while loading: ' : '';
  return { ...range, severity: 'error', code, message: `${prefix}${message}` };
}

interface Finding {
  code: RewardDiagnosticCode;
  severity: RewardDiagnostic['severity'];
  range: Range;
  /** the message without the "(on k of N examples, first …)" tail */
  text: string;
  example: RewardExample;
}

function outcomeDiagnostics(o: ValidateRewardOptions, language: ScanLanguage, results: readonly ExampleResult[], range: readonly [number, number]): RewardDiagnostic[] {
  const fn = functionName(language);
  const anchor = functionAnchor(o.source, language);
  const findings: Finding[] = [];
  for (const r of results) {
    const out = r.outcome;
    if (!out.ok) {
      const e = out.error;
      if (e.kind === 'exception') {
        const at = e.line !== undefined && e.line <= linesOf(o.source).length ? restOfLineRange(o.source, e.line, e.column) : anchor;
        findings.push({ code: 'exception', severity: 'error', range: at, text: e.message, example: r.example });
      } else if (e.kind === 'timeout') {
        findings.push({ code: 'timeout', severity: 'error', range: anchor, text: `${fn} took longer than the time limit of ${o.timeoutMs ?? REWARD_DEFAULTS.timeoutMs} ms; the call was stopped`, example: r.example });
      } else if (e.kind === 'invalid_result') {
        findings.push({ code: 'not-finite', severity: 'error', range: anchor, text: `${fn} returned ${out.raw ?? 'a value'}, not a finite number`, example: r.example });
      } else {
        const at = e.line !== undefined ? restOfLineRange(o.source, e.line, undefined) : anchor;
        findings.push({ code: 'crash', severity: 'error', range: at, text: e.message, example: r.example });
      }
      continue;
    }
    if (out.reward < range[0] || out.reward > range[1]) {
      findings.push({ code: 'out-of-range', severity: 'warning', range: anchor, text: `${fn} returned ${formatReward(out.reward)}, outside the reward range [${formatReward(range[0])}, ${formatReward(range[1])}]`, example: r.example });
    }
    const again = r.repeat;
    if (again && !(again.ok && again.reward === out.reward)) {
      const second = again.ok ? formatReward(again.reward) : `a failure (${again.error.message})`;
      findings.push({
        code: 'nondeterministic',
        severity: 'warning',
        range: anchor,
        text: `${fn} gave different results for the same input: ${formatReward(out.reward)}, then ${second}; reward functions must be deterministic`,
        example: r.example,
      });
    }
  }
  // one diagnostic per kind and place, counting the examples it happened on
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    const key = `${f.code}|${f.range.line}:${f.range.column}|${f.code === 'exception' || f.code === 'crash' ? f.text : ''}`;
    const list = groups.get(key);
    if (list) list.push(f);
    else groups.set(key, [f]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0]!;
    const where = list.length === 1 ? `on example ${first.example.source}` : `on ${list.length} of ${results.length} examples, first ${first.example.source}`;
    return { ...first.range, severity: first.severity, code: first.code, message: `${first.text} (${where})` };
  });
}

/** A mismatch with an expected reward, on the examples file at that example's `expected` value. */
function mismatchDiagnostics(results: readonly ExampleResult[], text: string | undefined): RewardDiagnostic[] {
  return results.flatMap((r): RewardDiagnostic[] => {
    if (r.matches !== false || r.example.line === undefined || r.example.expected === undefined) return [];
    const got = r.outcome.ok ? `got ${formatReward(r.outcome.reward)}` : `the call failed: ${r.outcome.error.message}`;
    const line = r.example.line;
    const d: RewardDiagnostic = { line, column: 1, endLine: line, endColumn: 1, severity: 'warning', code: 'example-mismatch', message: `expected ${formatReward(r.example.expected)}, ${got}` };
    return [text === undefined ? d : placeOnExpected(text, d)];
  });
}

/** Narrows a mismatch diagnostic to the `expected` value on its line of the examples file text. */
function placeOnExpected(text: string, d: RewardDiagnostic): RewardDiagnostic {
  const raw = linesOf(text)[d.line - 1];
  if (raw === undefined) return d;
  const m = /"expected"\s*:\s*(-?[\d.eE+-]+)/.exec(raw);
  if (!m) return { ...d, ...lineRange(text, d.line) };
  const column = m.index + m[0].length - m[1]!.length + 1;
  return { ...d, column, endColumn: column + m[1]!.length };
}
