// The agent's suite tools (`run_suite`, `suite_status`) on the suite runner. Like the eval tools they
// run beside the training session with their own connection. A small suite answers with its table;
// a larger one goes on in the background and suite_status follows it, then gives the table or, with
// compare_with, the comparison and the gate's verdicts.
import * as path from 'node:path';
import * as z from 'zod';
import { errorMessage } from '../errors';
import { parseEvalSpecFile, parseEvalSpecValue } from '../evals/spec';
import { resolveSuiteCheckpoint } from '../suite/checkpoint';
import { compareSuiteResults, formatSuiteComparison, formatSuiteResult } from '../suite/compare';
import { runSuite } from '../suite/run';
import { loadSuite, readSuiteResult, resultStaleness, suiteResultDir, type LoadedSuite } from '../suite/store';
import { EVAL_WAIT_SAMPLES } from './evalTools';
import type { TrainingSession } from './session';

export const RunSuiteInput = z.object({
  suite_file: z.string().min(1).describe('a *.suite.json file, relative to the workspace'),
  checkpoint: z.string().min(1).describe('a base model name, a tinker:// sampler path, a run directory (its final checkpoint) or "latest"'),
  backend: z.enum(['local', 'cloud', 'custom']).optional(),
});

export const SuiteStatusInput = z.object({
  suite_file: z.string().min(1).describe('the *.suite.json file, relative to the workspace'),
  checkpoint: z.string().min(1).describe('the checkpoint run_suite was given'),
  compare_with: z.string().min(1).optional().describe('a second checkpoint with a result of the suite: the comparison, this one playing the production model'),
});

interface Job {
  progress: { done: number; total: number; what: string };
  done: Promise<void>;
  error?: string;
  finished: boolean;
}

/** per result folder (suite version, checkpoint) */
const jobs = new Map<string, Job>();

/** Samples the suite asks for at most (an NLL entry or an uncapped dataset counts as many). */
async function suiteSize(suite: LoadedSuite): Promise<number> {
  let total = 0;
  for (const e of suite.entries) {
    const spec = (e.evalFile ? await parseEvalSpecFile(e.evalFile) : parseEvalSpecValue(e.spec.eval, suite.file)).spec;
    total += (spec.max_problems ?? spec.dataset?.max_problems ?? Infinity) * spec.n;
  }
  return total;
}

const jobText = (j: Job) => `running: ${j.progress.what ? `${j.progress.what}: ` : ''}${j.progress.done}/${j.progress.total} samples`;

export async function runSuiteTool(s: TrainingSession, a: z.output<typeof RunSuiteInput>, signal?: AbortSignal): Promise<{ text: string; value: unknown }> {
  const ctx = s.evalContext();
  const suite = await loadSuite(path.resolve(ctx.baseDir, a.suite_file));
  const runsDirs = [ctx.runsDir];
  const ck = await resolveSuiteCheckpoint(a.checkpoint, { runsDirs, cwd: ctx.baseDir });
  const dir = suiteResultDir(suite, ck.path);
  const running = jobs.get(dir);
  if (running && !running.finished) return { text: `already ${jobText(running)}; call suite_status`, value: { results: dir, running: true } };
  const job: Job = { progress: { done: 0, total: 0, what: '' }, finished: false, done: Promise.resolve() };
  jobs.set(dir, job);
  let result: Awaited<ReturnType<typeof runSuite>> | undefined;
  job.done = runSuite(
    { suiteFile: suite.file, checkpoint: a.checkpoint, onProgress: (done, total, what) => (job.progress = { done, total, what }) },
    { connect: ctx.connect, cacheDir: ctx.cacheDir, runsDirs, cwd: ctx.baseDir, log: ctx.log, ...(ctx.python ? { python: ctx.python } : {}), ...(a.backend ? { backend: a.backend } : {}) },
  )
    .then(
      (r) => void (result = r),
      (e: unknown) => void (job.error = errorMessage(e)),
    )
    .finally(() => (job.finished = true));
  if ((await suiteSize(suite).catch(() => Infinity)) > EVAL_WAIT_SAMPLES) {
    return { text: `running suite ${suite.name} on ${ck.label} in the background: ${dir}\ncall suite_status with {"suite_file": ${JSON.stringify(a.suite_file)}, "checkpoint": ${JSON.stringify(a.checkpoint)}} to follow it`, value: { results: dir, running: true } };
  }
  const abort = new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(new Error('cancelled (the suite goes on; call suite_status)')), { once: true }));
  await Promise.race([job.done, abort]);
  if (job.error) throw new Error(`run_suite: ${job.error}`);
  return { text: `${formatSuiteResult(result!)}\nresults: ${dir}`, value: { results: dir, result } };
}

export async function suiteStatus(s: TrainingSession, a: z.output<typeof SuiteStatusInput>): Promise<{ text: string; value: unknown }> {
  const ctx = s.evalContext();
  const suite = await loadSuite(path.resolve(ctx.baseDir, a.suite_file));
  const runsDirs = [ctx.runsDir];
  const ck = await resolveSuiteCheckpoint(a.checkpoint, { runsDirs, cwd: ctx.baseDir });
  const dir = suiteResultDir(suite, ck.path);
  const job = jobs.get(dir);
  const head = job && !job.finished ? `${jobText(job)}\n` : job?.error ? `the last run stopped: ${job.error}\n` : '';
  const r = await readSuiteResult(suite, ck.path);
  if (!r) {
    if (job && !job.finished) return { text: head.trim(), value: { results: dir, running: true } };
    throw new Error(`suite_status: no result of suite ${suite.name} (version ${suite.version}) on ${ck.label}${head ? `; ${head.trim()}` : ''}: call run_suite first`);
  }
  const stale = (await resultStaleness(suite, r.checkpoint.path, r)).map((w) => `stale: ${w}`);
  if (a.compare_with) {
    const other = await resolveSuiteCheckpoint(a.compare_with, { runsDirs, cwd: ctx.baseDir });
    const prod = await readSuiteResult(suite, other.path);
    if (!prod) throw new Error(`suite_status: no result of suite ${suite.name} (version ${suite.version}) on ${other.label}: call run_suite on it first`);
    const c = compareSuiteResults(suite.entries, r, prod);
    return { text: [head.trim(), formatSuiteComparison(c), ...stale].filter(Boolean).join('\n'), value: { results: dir, comparison: c } };
  }
  return { text: [head.trim(), formatSuiteResult(r), ...stale, `results: ${dir}`].filter(Boolean).join('\n'), value: { results: dir, running: Boolean(job && !job.finished), result: r } };
}
