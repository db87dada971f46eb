// The agent's eval tools (`evaluate`, `eval_status`) on the eval runner. They run beside the training
// session, never behind its call in progress: an eval opens its own connection. A large eval runs in
// the background and `evaluate` answers at once with its results folder; `eval_status` reports its
// progress, then the table and the regressed problems.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { errorMessage } from '../errors';
import { isEvalResultsDir, readEvalResults } from '../evals/results';
import { runEval, type EvalProgress } from '../evals/runEval';
import { evalNameOf, parseEvalSpecFile } from '../evals/spec';
import { gradingField } from '../env/files';
import { everySampleFailed, formatEvalStatus, formatEvalTable } from '../evals/table';
import type { TrainingSession } from './session';
import { BENCHMARK_NAMES } from '../evals/benchmarks/contract';
import { benchmarkEvalSpec } from '../evals/benchmarks/templates';

/** Above this many samples, evaluate answers at once and the eval goes on in the background. */
export const EVAL_WAIT_SAMPLES = 256;

export const EvaluateInput = z.object({
  spec_file: z.string().min(1).optional().describe('an *.eval.json spec, relative to the workspace'),
  targets: z.array(z.string().min(1)).min(1).optional().describe('inline: base model names or tinker:// sampler paths (the first is the baseline)'),
  benchmark: z.enum(BENCHMARK_NAMES).optional().describe("inline: a public benchmark instead of dataset + grader: its problems, prompt and grader as the cookbook's, its sampling defaults unless n, temperature or max_tokens are given; max_problems takes a seeded subset"),
  dataset: z.string().min(1).optional().describe('inline: a JSONL file of problems (fields question/answer), relative to the workspace'),
  grader: z.string().min(1).optional().describe('inline: the reward file, or an environment file (*.env.py, …: each sample is an episode, scored by its total reward), relative to the workspace'),
  n: z.number().int().min(1).max(64).optional().describe('inline: samples per problem (default 1)'),
  max_problems: z.number().int().min(1).optional().describe('inline: at most this many problems'),
  max_tokens: z.number().int().min(1).max(8192).optional().describe('inline: most tokens per completion (default 256)'),
  temperature: z.number().min(0).max(2).optional().describe('inline: sampling temperature (default 1)'),
  backend: z.enum(['local', 'cloud', 'custom']).optional(),
});
export type EvaluateInput = z.output<typeof EvaluateInput>;

export const EvalStatusInput = z.object({
  results: z.string().min(1).describe("the results folder evaluate returned, the eval's name (e.g. agent-2026-…, or holdout for evals/holdout/), or an *.eval.json spec (its default folder)"),
});

interface Job {
  progress: EvalProgress;
  done: Promise<void>;
  error?: string;
  finished: boolean;
}

const jobs = new Map<string, Job>();

/** An inline eval's spec file: beside its results, inside its folder, and not an *.eval.json (no eval spec of the workspace). */
export const INLINE_SPEC_FILE = 'spec.json';

/** The spec to run and its results folder: a spec file's default folder (`evals/<name>/` beside it, as the CLI and the editor put it), or for inline targets `evals/agent-<time>/` under the workspace, its spec inside. */
function specFor(s: TrainingSession, a: EvaluateInput): { specFile: string; out?: string } {
  const { baseDir } = s.evalContext();
  if (a.spec_file) return { specFile: path.resolve(baseDir, a.spec_file) };
  if (a.benchmark && (a.dataset || a.grader)) throw new Error('evaluate: give a benchmark, or dataset + grader, not both (a benchmark brings its problems and grader)');
  const missing = 'evaluate: give spec_file, or targets + dataset + grader, or targets + benchmark';
  if (!a.targets || (!a.benchmark && (!a.dataset || !a.grader))) throw new Error(missing);
  const name = `agent-${a.benchmark ? `${a.benchmark}-` : ''}${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const out = path.join(baseDir, 'evals', name);
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, INLINE_SPEC_FILE);
  if (a.benchmark) {
    const given = { ...(a.temperature !== undefined ? { temperature: a.temperature } : {}), ...(a.max_tokens !== undefined ? { max_tokens: a.max_tokens } : {}) };
    const spec = { name, ...benchmarkEvalSpec(a.benchmark, a.targets, { backend: a.backend ?? 'local', ...(a.max_problems ? { max_problems: a.max_problems } : {}), ...(a.n ? { n: a.n } : {}) }), ...given };
    fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
    return { specFile: file, out };
  }
  const { dataset, grader } = a;
  if (!dataset || !grader) throw new Error(missing);
  const spec = {
    name,
    dataset: { path: path.resolve(baseDir, dataset), ...(a.max_problems ? { max_problems: a.max_problems } : {}) },
    ...gradingField(path.resolve(baseDir, grader)),
    n: a.n ?? 1,
    temperature: a.temperature ?? 1,
    max_tokens: a.max_tokens ?? 256,
    seed: 0,
    ...(a.backend ? { backend: a.backend } : {}),
    targets: a.targets,
  };
  fs.writeFileSync(file, JSON.stringify(spec, null, 2) + '\n');
  return { specFile: file, out };
}

/** A spec's default results folder, as runEval writes it: `evals/<spec name>/` beside the spec (its `name` field, else the file name). */
async function defaultResultsDir(specFile: string): Promise<string> {
  const loaded = await parseEvalSpecFile(specFile).catch(() => undefined);
  return path.join(path.dirname(specFile), 'evals', loaded?.spec.name ?? evalNameOf(specFile));
}

export async function evaluate(s: TrainingSession, a: EvaluateInput, signal?: AbortSignal): Promise<{ text: string; value: unknown }> {
  const ctx = s.evalContext();
  const { specFile, out: inlineOut } = specFor(s, a);
  const loaded = await parseEvalSpecFile(specFile);
  const out = inlineOut ?? path.join(loaded.dir, 'evals', loaded.spec.name);
  const running = jobs.get(out);
  if (running && !running.finished) return { text: `already running: ${out} (${running.progress.done}/${running.progress.total} samples); call eval_status`, value: { results: out, running: true } };
  const job: Job = { progress: { done: 0, total: 0 }, finished: false, done: Promise.resolve() };
  jobs.set(out, job);
  const run = runEval({
    specFile,
    out,
    cacheDir: ctx.cacheDir,
    ...(ctx.python ? { python: ctx.python } : {}),
    ...(a.backend ? { backend: a.backend } : {}),
    connect: ctx.connect,
    log: ctx.log,
    onProgress: (p) => (job.progress = p),
  });
  job.done = run.then(
    () => undefined,
    (e: unknown) => void (job.error = errorMessage(e)),
  ).finally(() => (job.finished = true));
  // an estimate of the size before the targets are resolved: problems are capped by max_problems
  const perTarget = (loaded.spec.nll ? (loaded.spec.nll.dataset.max_chats ?? Infinity) : (loaded.spec.max_problems ?? loaded.spec.dataset?.max_problems ?? Infinity)) * loaded.spec.n;
  const small = perTarget * loaded.spec.targets.length <= EVAL_WAIT_SAMPLES;
  if (!small) {
    return { text: `evaluating in the background: ${out}\ncall eval_status with {"results": ${JSON.stringify(out)}} to follow it`, value: { results: out, running: true } };
  }
  const abort = new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(new Error('cancelled (the eval goes on; call eval_status)')), { once: true }));
  await Promise.race([job.done, abort]);
  if (job.error) throw new Error(job.error);
  const summary = readEvalResults(out).summary;
  // the grader or environment failed on every sample: the table would be zeros that mean nothing
  const nothing = everySampleFailed(summary);
  if (nothing) throw new Error(`evaluate: ${nothing}\n${formatEvalTable(summary)}\nresults: ${out}`);
  return { text: `${formatEvalTable(summary)}\nresults: ${out}`, value: { results: out, summary } };
}

/**
 * The results folder eval_status means: a results folder, an *.eval.json spec (its default folder), or
 * an eval's name (`agent-2026-…`, `holdout`): the folder `evals/<name>/` under the workspace, or an eval
 * this server runs by that name.
 */
async function resultsDirFor(baseDir: string, given: string): Promise<string> {
  const p = path.resolve(baseDir, given);
  if (p.toLowerCase().endsWith('.eval.json')) return defaultResultsDir(p);
  if (jobs.has(p) || isEvalResultsDir(p)) return p;
  const isName = !given.includes('/') && !given.includes('\\');
  if (isName) {
    const byName = [...jobs.keys()].find((dir) => path.basename(dir) === given);
    if (byName) return byName;
    const under = path.join(baseDir, 'evals', given);
    if (jobs.has(under) || isEvalResultsDir(under)) return under;
  }
  return p;
}

export async function evalStatus(s: TrainingSession, a: z.output<typeof EvalStatusInput>): Promise<{ text: string; value: unknown }> {
  const dir = await resultsDirFor(s.evalContext().baseDir, a.results);
  const job = jobs.get(dir);
  const head = job && !job.finished ? `running: ${job.progress.done}/${job.progress.total} samples\n` : job?.error ? `the last run stopped: ${job.error}\n` : '';
  // neither results nor an eval of this server by that name: a misspelt name must not read as "nothing yet"
  if (!job && !isEvalResultsDir(dir)) throw new Error(`eval_status: no eval "${a.results}": no results folder at ${dir}, and no eval of this session by that name; give the folder evaluate returned, an eval's name (evals/<name>/ under the workspace) or its *.eval.json spec`);
  if (!isEvalResultsDir(dir)) return { text: head.trim(), value: { results: dir, running: Boolean(job && !job.finished) } };
  const summary = readEvalResults(dir).summary;
  return { text: `${head}${formatEvalStatus(summary)}\nresults: ${dir}`, value: { results: dir, running: Boolean(job && !job.finished), summary } };
}
