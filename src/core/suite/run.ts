// Runs a suite on one checkpoint: every entry is an eval (the eval runner, resumable per sample) with
// the checkpoint as its only target, its results folder under the (suite version, checkpoint) folder,
// and `result.json` there rewritten atomically after each entry, so an interrupted run keeps the
// entries it finished and a re-run resumes the one it was in. Entries that draw the same samples
// share them (share.ts).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../fs/atomic';
import { errorMessage } from '../errors';
import type { EvalSummary, Estimate, TargetSummary } from '../evals/results';
import { runEval, targetIdOf, type RunEvalOptions } from '../evals/runEval';
import { parseEvalSpecFile, parseEvalSpecValue, type EvalSpec, type LoadedEvalSpec } from '../evals/spec';
import { passAtK } from '../evals/stats';
import { resolveSuiteCheckpoint, type SuiteCheckpoint } from './checkpoint';
import type { DataFingerprint, SuiteEntryResult, SuiteResult, SuiteRunner } from './contract';
import { samplingKey, takeSharedSamples } from './share';
import { canonicalJson, loadSuite, readSuiteResult, sha256File, SUITE_RESULT_FILE, suiteResultDir, type LoadedSuite, type LoadedSuiteEntry } from './store';

/** What a suite run needs besides the request: the backend, the caches, where runs are. */
export interface SuiteRunEnv {
  /** opens the backend (the CLI's connector, the extension's connection) */
  connect: RunEvalOptions['connect'];
  /** tokenizer and Hugging Face cache */
  cacheDir: string;
  /** overrides every entry's backend (the CLI's --backend) */
  backend?: 'local' | 'cloud' | 'custom';
  python?: string;
  /** where a checkpoint given as `latest` looks for runs */
  runsDirs?: readonly string[];
  /** relative run directories given as the checkpoint are against this (default: the process's) */
  cwd?: string;
  log?: (line: string) => void;
  /** bootstrap resamples (default 2,000) */
  resamples?: number;
}

export class SuiteRunError extends Error {}

/** The value of `metric` per item of one target of an eval summary, and its estimate; undefined when the summary has no such metric. */
export function metricOf(summary: EvalSummary, targetId: string, metric: string): { estimate: Estimate; perItem: Record<string, number> } | undefined {
  const t = summary.targets.find((x) => x.id === targetId);
  if (!t) return undefined;
  const m = t.metrics as TargetSummary['metrics'] & { nll?: Estimate };
  const k = /^pass@(\d+)$/.exec(metric);
  const estimate = metric === 'reward' ? m.reward : metric === 'nll' ? m.nll : k ? m.pass_at[metric] : undefined;
  if (!estimate) return undefined;
  const perItem: Record<string, number> = {};
  for (const row of summary.problems) {
    const cell = row.targets[targetId] as ({ reward: number; correct: number; samples: number; nll?: number } | undefined);
    if (!cell) continue;
    const v = metric === 'reward' ? cell.reward : metric === 'nll' ? cell.nll : passAtK(cell.samples, cell.correct, Number(k![1]));
    if (v !== undefined && Number.isFinite(v)) perItem[row.problem_id] = v;
  }
  return { estimate, perItem };
}

const posix = (p: string) => p.split(path.sep).join('/');

/** The files an entry read (its problems or chats, its grader or environment), with their hashes now. */
async function fingerprints(spec: EvalSpec, suiteDir: string): Promise<DataFingerprint[]> {
  const nll = (spec as { nll?: { dataset?: { path?: unknown } } }).nll;
  const files = [spec.dataset?.path, typeof nll?.dataset?.path === 'string' ? path.resolve(suiteDir, nll.dataset.path) : undefined, spec.grader?.file, spec.env?.file].filter((f): f is string => typeof f === 'string');
  const out: DataFingerprint[] = [];
  for (const f of [...new Set(files)]) {
    const h = await sha256File(f);
    out.push({ file: posix(path.relative(suiteDir, f)), ...h });
  }
  return out;
}

/** An entry's eval spec with the checkpoint as its only target. */
async function entrySpec(suite: LoadedSuite, entry: LoadedSuiteEntry, index: number, ck: SuiteCheckpoint, model: string): Promise<LoadedEvalSpec> {
  let base: LoadedEvalSpec;
  try {
    base = entry.evalFile ? await parseEvalSpecFile(entry.evalFile) : parseEvalSpecValue(entry.spec.eval, suite.file);
  } catch (e) {
    throw new SuiteRunError(`${path.basename(suite.file)}: entries.${index} (${entry.name}): ${errorMessage(e)}`);
  }
  const { baseline: _b, ...rest } = base.spec;
  return { ...base, spec: { ...rest, name: entry.name, model, targets: [ck.path] } };
}

/** The checkpoint's base model: known from its name or run, from an earlier result, else asked of the server. */
async function modelOf(ck: SuiteCheckpoint, suite: LoadedSuite, env: SuiteRunEnv, signal?: AbortSignal): Promise<string> {
  if (ck.model) return ck.model;
  const earlier = await readSuiteResult(suite, ck.path).catch(() => undefined);
  if (earlier?.checkpoint.model) return earlier.checkpoint.model;
  const first = suite.entries[0]!;
  const backend = env.backend ?? (first.evalFile ? (await parseEvalSpecFile(first.evalFile)).spec.backend : 'local');
  const service = await env.connect({ backend });
  try {
    return (await service.weightsInfo(ck.path, signal)).base_model;
  } catch (e) {
    throw new SuiteRunError(`${ck.path}: cannot read its base model from the server: ${errorMessage(e)}`);
  } finally {
    service.close();
  }
}

const metricsOf = (n: number) => `pass@1…pass@${n}, reward`;

/**
 * Runs (or resumes) every entry of the suite on the checkpoint. Resolves to the result of (the suite's
 * version, checkpoint): complete, or as far as it got when `signal` aborted. Other failures throw after
 * the finished entries are written.
 */
export async function runSuite(req: Parameters<SuiteRunner>[0], env?: SuiteRunEnv): Promise<SuiteResult> {
  if (!env) throw new SuiteRunError('runSuite needs a backend to run on (its second argument: connect and cacheDir)');
  const log = env.log ?? (() => undefined);
  const suite = await loadSuite(req.suiteFile);
  const ck = await resolveSuiteCheckpoint(req.checkpoint, { ...(env.runsDirs ? { runsDirs: env.runsDirs } : {}), ...(env.cwd ? { cwd: env.cwd } : {}) });
  const model = await modelOf(ck, suite, env, req.signal);
  const dir = suiteResultDir(suite, ck.path);
  const targetId = targetIdOf(ck.path);
  const specs: LoadedEvalSpec[] = [];
  for (const [i, e] of suite.entries.entries()) specs.push(await entrySpec(suite, e, i, ck, model));
  // the metric must be one the entry's eval reports
  for (const [i, e] of suite.entries.entries()) {
    const s = specs[i]!.spec;
    const isNll = (s as Record<string, unknown>)['nll'] !== undefined;
    const k = /^pass@(\d+)$/.exec(e.metric);
    const ok = isNll ? e.metric === 'nll' : e.metric === 'reward' || (k !== null && Number(k[1]) >= 1 && Number(k[1]) <= s.n);
    if (!ok) throw new SuiteRunError(`${path.basename(suite.file)}: entries.${i}.metric: "${e.metric}" is not a metric of ${e.name}'s eval (it has ${isNll ? 'nll' : metricsOf(s.n)})`);
  }
  log(`suite ${suite.name} (version ${suite.version}): ${suite.entries.length} entries on ${ck.label} → ${dir}`);

  const earlier = await readSuiteResult(suite, ck.path).catch(() => undefined);
  const now = new Date().toISOString();
  const result: SuiteResult = {
    kind: 'suite-result',
    version: 1,
    suite: { name: suite.name, version: suite.version, file: suite.file },
    checkpoint: { label: ck.label, path: ck.path, model },
    entries: [],
    complete: false,
    created_at: earlier?.created_at ?? now,
    updated_at: now,
  };
  fs.mkdirSync(dir, { recursive: true });
  const write = async () => {
    result.updated_at = new Date().toISOString();
    await writeFileAtomic(path.join(dir, SUITE_RESULT_FILE), JSON.stringify(result, null, 2) + '\n');
  };
  // the first entry of each sampling key samples; the others take its samples
  const sampledBy = new Map<string, number>();
  try {
    for (const [i, e] of suite.entries.entries()) {
      if (req.signal?.aborted) break;
      const loaded = specs[i]!;
      const out = path.join(dir, e.name);
      const what = `${e.name} (${i + 1}/${suite.entries.length})`;
      const key = samplingKey(loaded.spec);
      const leader = key !== undefined ? sampledBy.get(key) : undefined;
      if (key !== undefined && leader === undefined) sampledBy.set(key, i);
      if (leader !== undefined) {
        const from = suite.entries[leader]!;
        const taken = await takeSharedSamples({
          fromDir: path.join(dir, from.name),
          from: specs[leader]!.spec,
          toDir: out,
          to: loaded.spec,
          targetId,
          ...(env.python ? { python: env.python } : {}),
          ...(req.signal ? { signal: req.signal } : {}),
          onGraded: (n) => req.onProgress?.(n, n, `${what}: grading ${from.name}'s samples`),
        });
        if (taken) log(`${e.name}: took ${taken} samples from ${from.name} (same problems and sampling), graded by its own grader`);
        if (req.signal?.aborted) break;
      }
      const summary = await runEval({
        specFile: loaded.file,
        loaded,
        out,
        ...(env.backend ? { backend: env.backend } : {}),
        connect: env.connect,
        cacheDir: env.cacheDir,
        ...(env.python ? { python: env.python } : {}),
        ...(env.runsDirs ? { runsDirs: env.runsDirs } : {}),
        ...(env.resamples !== undefined ? { resamples: env.resamples } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        log: (l) => log(`${e.name}: ${l}`),
        onProgress: (p) => req.onProgress?.(p.done, p.total, what),
      });
      const m = metricOf(summary, targetId, e.metric);
      if (!m) throw new SuiteRunError(`${e.name}: the eval's summary has no ${e.metric} for ${ck.label}`);
      const entry: SuiteEntryResult = {
        name: e.name,
        layer: e.layer,
        metric: e.metric,
        goal: e.goal,
        estimate: m.estimate,
        n: Object.keys(m.perItem).length,
        per_item: m.perItem,
        data: await fingerprints(loaded.spec, suite.dir),
        spec_sha256: createHash('sha256').update(canonicalJson(loaded.spec)).digest('hex'),
        results_dir: e.name,
      };
      result.entries.push(entry);
      await write();
    }
  } catch (err) {
    await write();
    // an abort is not a failure: the result says how far it got
    if (!req.signal?.aborted) throw err;
  }
  result.complete = result.entries.length === suite.entries.length;
  await write();
  return result;
}

/** The suite runner the registry and the extension are handed: `runSuite` on this environment. */
export function suiteRunner(env: SuiteRunEnv): SuiteRunner {
  return (req) => runSuite(req, env);
}
