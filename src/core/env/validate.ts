// Validation of an environment file's text (an editor's contents, saved or not), as reward files get
// it (src/core/reward/validate.ts, whose diagnostics, static scan and load-error placement this
// reuses): the static scan for networking/process modules, then the file loaded in the real env
// worker pool (a separate hardened process, time limit, memory cap), its class found (a missing class
// or method, wrong constructor or step parameters are load errors), and one episode played on each
// dataset line given, with an empty assistant reply each turn up to max_turns: every constructor,
// initial_observation and step result is checked against the shape the loop needs. A problem becomes
// a diagnostic at an exact position: exceptions at the innermost line of the file in the traceback,
// wrong shapes and time limits on the method's name.
import type { ChatMessage } from '../../protocol/chatMessage';
import { compareDiagnostics, lineRange, linesOf, positionAt, restOfLineRange, type Range, type RewardDiagnostic } from '../reward/diagnostics';
import { scanForSideEffects } from '../reward/staticScan';
import { rewardLanguage } from '../reward/summary';
import { loadFailureDiagnostic, validationRunnerOptions } from '../reward/validate';
import { REWARD_DEFAULTS } from '../reward/source';
import { createEnvRunner, type EnvRunner } from './runner';
import type { EnvCallError } from './types';

export interface EnvValidationProblem {
  /** the dataset line the env is constructed from */
  problem: unknown;
  /** where it came from, for messages: "train.jsonl:1" */
  source: string;
}

export interface ValidateEnvOptions {
  file: string;
  source: string;
  className?: string;
  problems: readonly EnvValidationProblem[];
  /** turns per episode (the spec's max_turns; default 8) */
  maxTurns?: number;
  timeoutMs?: number;
  memoryMb?: number;
  python?: string;
  environment?: readonly string[];
  signal?: AbortSignal;
}

export interface EnvEpisodeCheck {
  source: string;
  ok: boolean;
  turns: number;
  /** the reward of each step */
  rewards: number[];
  done: boolean;
  error?: EnvCallError & { where: 'constructor' | 'initial_observation' | 'step' | 'compute_group_rewards' };
}

export interface EnvValidation {
  diagnostics: RewardDiagnostic[];
  loaded: boolean;
  className?: string;
  episodes: EnvEpisodeCheck[];
}

/** The reply each validation turn hands step(): empty, as a model that says nothing. */
export const VALIDATION_REPLY: ChatMessage = { role: 'assistant', content: '' };

/** Validates an environment file's text; rejects only when `signal` aborts. */
export async function validateEnv(o: ValidateEnvOptions): Promise<EnvValidation> {
  o.signal?.throwIfAborted();
  const language = rewardLanguage(o.file);
  const staticDiagnostics = scanForSideEffects(o.source, language, 'environments');
  let runner: EnvRunner;
  try {
    runner = await createEnvRunner({ ...validationRunnerOptions(o), ...(o.className ? { className: o.className } : {}) });
  } catch (err) {
    o.signal?.throwIfAborted();
    const d = loadFailureDiagnostic(o.source, err, classAnchor(o.source, language, o.className), true);
    return { diagnostics: [...staticDiagnostics, d].sort(compareDiagnostics), loaded: false, episodes: [] };
  }
  try {
    const episodes: EnvEpisodeCheck[] = [];
    for (const p of o.problems) {
      o.signal?.throwIfAborted();
      episodes.push(await checkEpisode(runner, p, o.maxTurns ?? 8));
    }
    const diagnostics = [...staticDiagnostics, ...episodeDiagnostics(o, language, runner.className, episodes)].sort(compareDiagnostics);
    return { diagnostics, loaded: true, className: runner.className, episodes };
  } finally {
    await runner.close();
  }
}

async function checkEpisode(runner: EnvRunner, p: EnvValidationProblem, maxTurns: number): Promise<EnvEpisodeCheck> {
  const ep = runner.episode(p.problem);
  const check: EnvEpisodeCheck = { source: p.source, ok: true, turns: 0, rewards: [], done: false };
  const fail = (error: EnvCallError, where: NonNullable<EnvEpisodeCheck['error']>['where']) => {
    check.ok = false;
    check.error = { ...error, where };
  };
  try {
    const start = await ep.start();
    if (!start.ok) {
      // the constructor's failure comes back from start() too: an exception's traceback says which
      fail(start.error, /__init__|\bat new |constructor/.test(start.error.traceback ?? '') ? 'constructor' : 'initial_observation');
      return check;
    }
    for (let turn = 0; turn < maxTurns; turn++) {
      const step = await ep.step(VALIDATION_REPLY);
      check.turns++;
      if (!step.ok) {
        fail(step.error, 'step');
        return check;
      }
      check.rewards.push(step.value.reward);
      if (step.value.episode_done) {
        check.done = true;
        break;
      }
    }
  } finally {
    await ep.close();
  }
  if (runner.hasGroupRewards) {
    const g = await runner.groupRewards([p.problem], [[VALIDATION_REPLY]]);
    if (!g.ok) fail(g.error, 'compute_group_rewards');
  }
  return check;
}

const METHOD_NAMES: Record<NonNullable<EnvEpisodeCheck['error']>['where'], { python: string; javascript: string }> = {
  constructor: { python: '__init__', javascript: 'constructor' },
  initial_observation: { python: 'initial_observation', javascript: 'initialObservation' },
  step: { python: 'step', javascript: 'step' },
  compute_group_rewards: { python: 'compute_group_rewards', javascript: 'computeGroupRewards' },
};

/** The name of a method (or module-level function) where it is defined, else the class's name. */
export function methodAnchor(source: string, language: 'python' | 'javascript', where: keyof typeof METHOD_NAMES, className?: string): Range {
  const names = language === 'python' ? [METHOD_NAMES[where].python] : [METHOD_NAMES[where].javascript, METHOD_NAMES[where].python];
  for (const name of names) {
    const re = language === 'python' ? new RegExp(`^[ \\t]*(?:async[ \\t]+)?def[ \\t]+(${name})\\b`, 'm') : new RegExp(`^[ \\t]*(?:export[ \\t]+)?(?:async[ \\t]+)?(?:function[ \\t]*)?(${name})[ \\t]*\\(`, 'm');
    const m = re.exec(source);
    if (m) return nameRange(source, m.index + m[0].lastIndexOf(m[1]!), m[1]!.length);
  }
  return classAnchor(source, language, className);
}

/** The env class's name where it is defined (the named one, else the first class), else the first line. */
export function classAnchor(source: string, _language: 'python' | 'javascript', className?: string): Range {
  const re = new RegExp(`^[ \\t]*(?:export[ \\t]+(?:default[ \\t]+)?)?class[ \\t]+(${className ?? '[A-Za-z_$][\\w$]*'})\\b`, 'm');
  const m = re.exec(source);
  return m ? nameRange(source, m.index + m[0].lastIndexOf(m[1]!), m[1]!.length) : lineRange(source, 1);
}

function nameRange(source: string, at: number, length: number): Range {
  const { line, column } = positionAt(source, at);
  return { line, column, endLine: line, endColumn: column + length };
}

function episodeDiagnostics(o: ValidateEnvOptions, language: 'python' | 'javascript', className: string, episodes: readonly EnvEpisodeCheck[]): RewardDiagnostic[] {
  const groups = new Map<string, { d: RewardDiagnostic; sources: string[] }>();
  for (const e of episodes) {
    const err = e.error;
    if (!err) continue;
    const anchor = methodAnchor(o.source, language, err.where, className);
    let range = anchor;
    let code: RewardDiagnostic['code'];
    let text: string;
    if (err.kind === 'exception') {
      code = 'exception';
      text = `${err.where} raised: ${err.message}`;
      if (err.line !== undefined && err.line <= linesOf(o.source).length) range = restOfLineRange(o.source, err.line, err.column);
    } else if (err.kind === 'timeout') {
      code = 'timeout';
      text = `${err.where} took longer than the time limit of ${o.timeoutMs ?? REWARD_DEFAULTS.timeoutMs} ms; the call was stopped`;
    } else if (err.kind === 'invalid_result') {
      code = 'wrong-shape';
      text = err.message;
    } else {
      code = 'crash';
      text = err.message;
      if (err.line !== undefined && err.line <= linesOf(o.source).length) range = restOfLineRange(o.source, err.line, undefined);
    }
    const key = `${code}|${range.line}:${range.column}|${text}`;
    const g = groups.get(key);
    if (g) g.sources.push(e.source);
    else groups.set(key, { d: { ...range, severity: 'error', code, message: text }, sources: [e.source] });
  }
  const out = [...groups.values()].map(({ d, sources }) => ({
    ...d,
    message: `${d.message} (${sources.length === 1 ? `on dataset line ${sources[0]}` : `on ${sources.length} of ${episodes.length} dataset lines, first ${sources[0]}`}, the assistant replying "")`,
  }));
  if (episodes.length === 0) {
    out.push({
      ...classAnchor(o.source, language, className),
      severity: 'information',
      code: 'examples-file',
      message: `No dataset line to play an episode on: name this file in a run spec's "env" (its dataset's first lines are used) or put a JSONL dataset beside it; "Tinker: Play as the Model" steps through it by hand.`,
    });
  }
  return out;
}
