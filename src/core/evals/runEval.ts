// Runs an evaluation spec: every target (base model, tinker:// sampler path, a run's checkpoints) is
// sampled `n` times on each problem, graded by the SAME reward runner and limits as training, and the
// samples are appended to `targets/<id>/samples.jsonl` in the runs' sample-record schema as they are
// graded. Re-running reads what is there and samples only what is missing; with `seed`, each sample's
// seed is derived from (seed, target, problem, sample index), so a resumed eval equals an
// uninterrupted one. All targets' requests interleave under one bounded concurrency.
// With `env` instead of a grader, a sample is an episode of the environment (the training loop's
// runEpisode, with the same limits and context cap), its reward the episode's total reward (step
// rewards plus compute_group_rewards', which sees the samples of a problem for one target run
// together); its record keeps the transcript, as a training sample's does.
// With `nll`, nothing is sampled: nllEval.ts scores the chats once the targets are resolved.
// With `benchmark`, the problems are the benchmark's (benchmarks/load.ts) and its grader grades
// (benchmarkEval.ts); the expected tokens and the max_tokens clamp are logged before sampling.
import { renderedPrompt } from '../data/problem';
import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadPromptPool } from '../data/pool';
import type { Problem } from '../data/types';
import type { DatasetSpec } from '../spec/datasets';
import { stopParam } from '../rollouts/rollout';
import { fmix32 } from '../rollouts/samplingSeed';
import { writeFileAtomicSync } from '../fs/atomic';
import { loadRenderer } from '../render';
import type { Renderer } from '../render/types';
import { createRewardRunner } from '../reward';
import type { RewardRunner } from '../reward/types';
import { listRuns, readMetricsRowsSync, type CheckpointRecord } from '../runs/runDirectory';
import { parseRunConfig } from '../runs/runConfig';
import { questionOf } from '../../protocol/promptQuestion';
import { parsedMessageFields, recordedRewardError, stoppedOnItsOwn, type SampleRecord } from '../../protocol/sampleSchema';
import type { ServiceClient, SamplingClient } from '../tinker/client';
import { ContextWindowError } from '../tinker/errors';
import { textInput, type SamplingParams } from '../tinker/types';
import {
  EvalManifest,
  MANIFEST_FILE,
  readTargetSamples,
  SUMMARY_FILE,
  targetSamplesFile,
  type EvalSummary,
  type PairedComparison,
  type ProblemRow,
  type TargetSource,
  type TargetSummary,
} from './results';
import { evalCorrectThreshold, evalGraderFile, evalGrading, parseEvalSpecFile, type EvalDatasetSpec, type EvalSpec, type EvalTarget, type LoadedEvalSpec } from './spec';
import { createEnvRunner, type EnvRunner } from '../env/runner';
import { envRunnerOptions, episodeLimits } from '../env/spec';
import { episodeRecords, runEpisodeGroups } from '../env/episodeGroups';
import { totalRewards } from '../env/trajectory';
import type { NetworkOptions } from '../tinker/proxy';
import { bootstrapMeans, DEFAULT_BOOTSTRAP, EVAL_STATS_SEED, mean, pairedComparison, passAtK } from './stats';
import { runPool } from './pool';
import { runNllEval } from './nllEval';
import { EvalSpend, withSpend } from './evalSpend';
import type { PriceTable } from '../cost/prices';
import { benchmarkDefinition } from './benchmarks/registry';
import { loadBenchmarkProblems } from './benchmarks/load';
import { benchmarkGrader, logExpectedTokens, type BenchmarkGrader } from './benchmarkEval';
import { DEFAULT_PRICES } from '../cost/defaultPrices';

export interface EvalProgress {
  done: number;
  total: number;
  target?: string;
  /** what done/total count: samples (absent), or chats scored (an NLL eval) */
  unit?: 'chats';
}

export interface RunEvalOptions {
  specFile: string;
  /** results folder; default `evals/<spec name>/` next to the spec */
  out?: string;
  backend?: 'local' | 'cloud' | 'custom';
  /** opens the backend (the CLI's connector, the extension's connection) */
  connect: (spec: { backend: 'local' | 'cloud' | 'custom'; base_url?: string }) => Promise<ServiceClient>;
  /** tokenizer and Hugging Face cache */
  cacheDir: string;
  python?: string;
  signal?: AbortSignal;
  onProgress?: (p: EvalProgress) => void;
  log?: (line: string) => void;
  /** where else `{"run": "latest"}` looks for runs (the CLI's --runs-dir, the extension's runs folder) */
  runsDirs?: readonly string[];
  /** bootstrap resamples (default 2,000) */
  resamples?: number;
  /** the spec already read (a suite entry's, its target set to the suite's checkpoint); else specFile is read */
  loaded?: LoadedEvalSpec;
  /** the price table in force: each target's cost_usd, and the spec's max_cost_usd (default: the shipped table) */
  prices?: PriceTable;
  /** a benchmark's rows: the datasets-server's base URL (default $TINKER_DATASETS_SERVER, else the public one), a token for gated ones, the proxy */
  datasetsServer?: string;
  hfToken?: string;
  network?: NetworkOptions;
}

/** A target as resolved: where its sampler is, what it is, its base model. */
export interface ResolvedTarget {
  id: string;
  label: string;
  source: TargetSource;
  model: string;
  /** a tinker:// sampler path; absent for a base model */
  samplerPath?: string;
}

export class EvalError extends Error {}

/** A folder-safe id: letters, digits, '.', '_' and '-'. */
export function targetIdOf(label: string): string {
  return label.replace(/^tinker:\/\//, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '') || 'target';
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return fmix32(h);
}

/** The seed of one sample: a hash of (eval seed, target id, problem id, sample index). */
export function sampleSeed(seed: number, targetId: string, problemId: string, sampleIndex: number): number {
  let h = fmix32(seed >>> 0);
  h = fmix32((h ^ hashString(targetId)) >>> 0);
  h = fmix32((h ^ hashString(problemId)) >>> 0);
  return fmix32((h ^ Math.imul(sampleIndex + 1, 0x68e31da4)) >>> 0);
}

/** The newest run (by its files' time) with sampler checkpoints in `<specDir>/runs`, `specDir` or the runs folders given. */
async function latestRun(specDir: string, runsDirs: readonly string[]): Promise<string> {
  const candidates = [];
  for (const d of [...new Set([path.join(specDir, 'runs'), specDir, ...runsDirs])]) {
    if (!fs.existsSync(d)) continue;
    candidates.push(...(await listRuns(d)).filter((r) => r.checkpoints.some((c) => c.sampler_path)));
  }
  if (candidates.length === 0) throw new EvalError(`targets: "latest": no run with sampler checkpoints in ${[path.join(specDir, 'runs'), specDir, ...runsDirs].join(', ')}`);
  candidates.sort((a, b) => b.modifiedMs - a.modifiedMs);
  return candidates[0]!.dir;
}

/** The step of a checkpoint record (its `batch`), for the metric-over-step curve. */
function stepOf(c: CheckpointRecord): number | undefined {
  return typeof c.batch === 'number' ? c.batch : undefined;
}

/** Resolves the spec's targets (and the baseline) to samplers, in the spec's order. */
export async function resolveTargets(spec: EvalSpec, specDir: string, where: string, runsDirs: readonly string[] = []): Promise<{ targets: ResolvedTarget[]; baseline: string }> {
  const out: ResolvedTarget[] = [];
  const defaultModel = spec.targets.find((t): t is string => typeof t === 'string' && !t.startsWith('tinker://'));
  const one = async (t: EvalTarget, field: string): Promise<ResolvedTarget[]> => {
    if (typeof t === 'string') {
      if (t.startsWith('tinker://')) {
        const model = spec.model ?? defaultModel;
        if (!model) throw new EvalError(`${where}: ${field}: the base model of ${t} is unknown: add "model" to the spec`);
        return [{ id: targetIdOf(t), label: t, source: { kind: 'path', path: t }, model, samplerPath: t }];
      }
      return [{ id: targetIdOf(t), label: t, source: { kind: 'base', model: t }, model: t }];
    }
    const runDir = t.run === 'latest' ? await latestRun(specDir, runsDirs) : path.resolve(specDir, t.run);
    const runs = await listRuns(path.dirname(runDir)).catch(() => []);
    const run = runs.find((r) => r.dir === runDir);
    if (!run) throw new EvalError(`${where}: ${field}.run: ${runDir} is not a run directory`);
    const configFile = path.join(runDir, 'config.json');
    const model = run.model ?? (fs.existsSync(configFile) ? parseRunConfig(fs.readFileSync(configFile, 'utf8'), configFile).model_name : undefined);
    if (!model) throw new EvalError(`${where}: ${field}.run: ${runDir} names no model in config.json`);
    let cks = run.checkpoints.filter((c) => c.sampler_path);
    if (t.checkpoints === 'best') {
      const rows = readMetricsRowsSync(runDir);
      const at = (c: CheckpointRecord) => {
        const step = stepOf(c);
        const before = rows.filter((r) => step === undefined || r.step <= step);
        const withTest = [...before].reverse().find((r) => typeof r['test/env/all/reward/total'] === 'number');
        const withTrain = [...before].reverse().find((r) => typeof r['env/all/reward/total'] === 'number');
        return (withTest?.['test/env/all/reward/total'] as number | undefined) ?? (withTrain?.['env/all/reward/total'] as number | undefined) ?? -Infinity;
      };
      const best = cks.reduce<CheckpointRecord | undefined>((b, c) => (b === undefined || at(c) > at(b) ? c : b), undefined);
      cks = best ? [best] : [];
    } else if (Array.isArray(t.checkpoints)) {
      const names = t.checkpoints;
      const unknown = names.filter((n) => !cks.some((c) => c.name === n));
      if (unknown.length) throw new EvalError(`${where}: ${field}.checkpoints: ${unknown.join(', ')} not among ${runDir}'s sampler checkpoints (${cks.map((c) => c.name).join(', ') || 'none'})`);
      cks = names.map((n) => cks.find((c) => c.name === n)!);
    }
    if (cks.length === 0) throw new EvalError(`${where}: ${field}: ${runDir} has no sampler checkpoint`);
    const runName = path.basename(runDir);
    return cks.map((c) => {
      const step = stepOf(c);
      return {
        id: targetIdOf(`${runName}-${c.name}`),
        label: `${runName}/${c.name}`,
        source: { kind: 'checkpoint', path: c.sampler_path!, run_dir: runDir, checkpoint: c.name, ...(step !== undefined ? { step } : {}) },
        model,
        samplerPath: c.sampler_path!,
      };
    });
  };
  for (const [i, t] of spec.targets.entries()) {
    for (const r of await one(t, `targets.${i}`)) if (!out.some((o) => o.id === r.id)) out.push(r);
  }
  let baseline = out[0]!.id;
  if (spec.baseline !== undefined) {
    const b = await one(spec.baseline, 'baseline');
    if (b.length !== 1) throw new EvalError(`${where}: baseline: must be one target (it names ${b.length})`);
    if (!out.some((o) => o.id === b[0]!.id)) out.unshift(b[0]!);
    baseline = b[0]!.id;
  }
  return { targets: out, baseline };
}

/** Loads the eval's problems: the dataset in a seeded order (seed 0), capped at max_problems. */
function loadProblems(spec: EvalSpec, specDir: string, cacheDir: string, signal?: AbortSignal): Promise<Problem[]> {
  if (!spec.dataset) throw new EvalError('dataset: required (the problems to sample)');
  return loadEvalProblems(spec.dataset, { specDir, cacheDir, ...(signal ? { signal } : {}), ...(spec.env ? { environment: true } : {}) });
}

/** An eval dataset's problems (an eval spec's, an inline evaluator's): in a seeded order (seed 0), capped at `maxProblems` (default: the dataset's max_problems). */
export async function loadEvalProblems(d: EvalDatasetSpec, o: { specDir: string; cacheDir: string; maxProblems?: number; network?: NetworkOptions; signal?: AbortSignal; environment?: boolean }): Promise<Problem[]> {
  const { max_problems, ...dataset } = d;
  const pool = await loadPromptPool({ ...dataset } as DatasetSpec, { specDir: o.specDir, seed: 0, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}), ...(o.signal ? { signal: o.signal } : {}), ...(o.environment ? { environment: true } : {}) });
  const max = o.maxProblems ?? max_problems;
  return max !== undefined ? pool.train.slice(0, max) : pool.train;
}

const key = (problemId: string, traj: number) => `${problemId}\u0000${traj}`;

/** Runs the eval (or resumes it) and writes summary.json; returns the summary. */
export async function runEval(o: RunEvalOptions): Promise<EvalSummary> {
  const log = o.log ?? (() => undefined);
  const started = Date.now();
  // every request in flight listens to the signal
  if (o.signal) setMaxListeners(0, o.signal);
  const loaded = o.loaded ?? (await parseEvalSpecFile(o.specFile));
  const spec: EvalSpec = { ...loaded.spec, ...(o.backend ? { backend: o.backend } : {}) };
  const where = path.basename(loaded.file);
  const outDir = path.resolve(o.out ?? path.join(loaded.dir, 'evals', spec.name));
  const { targets, baseline } = await resolveTargets(spec, loaded.dir, where, o.runsDirs ?? []);
  if (spec.nll) return runNllEval({ ...o, spec: { ...spec, nll: spec.nll }, specFile: loaded.file, specDir: loaded.dir, outDir, targets, baseline, createdAt: readCreatedAt(outDir), startedMs: started });
  const maxTokens = spec.max_tokens;
  if (maxTokens === undefined) throw new EvalError(`${where}: max_tokens: required`);
  let bench: BenchmarkGrader | undefined;
  let problems: Problem[];
  if (spec.benchmark) {
    const def = benchmarkDefinition(spec.benchmark);
    let shown = 0;
    const b = await loadBenchmarkProblems(def, {
      cacheDir: o.cacheDir,
      ...(spec.max_problems !== undefined ? { maxProblems: spec.max_problems } : {}),
      ...(spec.system_prompt ? { systemPrompt: spec.system_prompt } : {}),
      ...(o.datasetsServer ? { endpoint: o.datasetsServer } : {}),
      ...(o.hfToken ? { token: o.hfToken } : {}),
      ...(o.network ? { network: o.network } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      onProgress: (rows, total, config) => {
        if (rows < total && rows - shown < 500) return;
        shown = rows;
        log(`${def.title}: ${rows}/${total} rows${config ? ` of ${config}` : ''}`);
      },
    });
    bench = benchmarkGrader(def, b.byId);
    problems = b.problems;
    log(`${def.title}: ${problems.length} of ${b.available} problems`);
  } else problems = await loadProblems(spec, loaded.dir, o.cacheDir, o.signal);
  if (problems.length === 0) throw new EvalError(`${where}: dataset: no problems`);
  log(`${problems.length} problems × ${targets.length} target(s) × n=${spec.n} → ${outDir}`);

  fs.mkdirSync(outDir, { recursive: true });
  const spend = new EvalSpend(outDir, targets, o.prices ?? DEFAULT_PRICES, spec);
  const manifest: EvalManifest = {
    kind: 'eval',
    name: spec.name,
    spec_file: loaded.file,
    spec: spec as unknown as Record<string, unknown>,
    targets: targets.map(({ id, label, source, model }) => ({ id, label, source, model })),
    baseline,
  };
  writeFileAtomicSync(path.join(outDir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');

  // what is there already
  const have = new Map<string, Map<string, SampleRecord>>();
  for (const t of targets) {
    fs.mkdirSync(path.dirname(targetSamplesFile(outDir, t.id)), { recursive: true });
    const m = new Map<string, SampleRecord>();
    for (const r of readTargetSamples(outDir, t.id)) m.set(key(r.problem_id, r.traj_idx), r);
    have.set(t.id, m);
    // a torn tail (crash mid-line) is dropped from the file before appending
    const file = targetSamplesFile(outDir, t.id);
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, 'utf8');
      if (text.length && !text.endsWith('\n')) fs.writeFileSync(file, text.slice(0, text.lastIndexOf('\n') + 1));
    }
  }

  // the missing samples, interleaved: problem by problem, sample by sample, target by target
  type Task = { target: ResolvedTarget; p: number; i: number };
  const missing: Task[] = [];
  for (let p = 0; p < problems.length; p++)
    for (let i = 0; i < spec.n; i++) for (const t of targets) if (!have.get(t.id)!.has(key(problems[p]!.id, i))) missing.push({ target: t, p, i });
  const total = problems.length * spec.n * targets.length;
  let done = total - missing.length;
  if (done > 0) log(`resuming: ${done} of ${total} samples already in ${outDir}`);
  o.onProgress?.({ done, total });

  if (missing.length > 0) {
    let reward: RewardRunner | undefined;
    let env: EnvRunner | undefined;
    let service: ServiceClient | undefined;
    try {
      const grading = evalGrading(spec);
      if (grading.kind === 'benchmark') {
        // nothing to start: the benchmark's grader is TypeScript
      } else if (grading.kind === 'env') env = await createEnvRunner(envRunnerOptions(grading.env, { python: o.python, ...(o.signal ? { signal: o.signal } : {}) }));
      else reward = await createRewardRunner({ file: grading.grader.file, python: o.python, workers: grading.grader.workers, timeoutMs: grading.grader.timeout_ms, ...(o.signal ? { signal: o.signal } : {}) });
      service = await o.connect({ backend: spec.backend, ...(spec.base_url ? { base_url: spec.base_url } : {}) });
      const renderers = new Map<string, Promise<Renderer>>();
      const rendererFor = (model: string) => {
        let r = renderers.get(model);
        if (!r) {
          r = loadRenderer({ model, ...(spec.renderer ? { renderer: spec.renderer } : {}), cacheDir: o.cacheDir }).then((l) => {
            for (const w of l.warnings) log(`warning: ${w}`);
            return l.renderer;
          });
          renderers.set(model, r);
        }
        return r;
      };
      const samplers = new Map<string, Promise<SamplingClient>>();
      const samplerFor = (t: ResolvedTarget) => {
        let s = samplers.get(t.id);
        if (!s) {
          // each target's requests count into its own meter (its usage and cost in the summary)
          s = service!.createSamplingClient(t.samplerPath ? { modelPath: t.samplerPath } : { baseModel: t.model }, o.signal).then((c) => Object.assign(c, { usage: spend.meter(t.id) }));
          samplers.set(t.id, s);
        }
        return s;
      };
      const prompts = new Map<string, number[]>();
      const paramsOf = (renderer: Renderer, target: ResolvedTarget, problem: Problem, i: number): SamplingParams => ({
        max_tokens: maxTokens,
        temperature: spec.temperature,
        stop: spec.stop ?? stopParam(renderer.stopSequences()),
        ...(spec.top_p !== undefined ? { top_p: spec.top_p } : {}),
        ...(spec.top_k !== undefined ? { top_k: spec.top_k } : {}),
        ...(spec.seed !== undefined ? { seed: sampleSeed(spec.seed, target.id, problem.id, i) } : {}),
      });
      const recorded = (target: ResolvedTarget, recs: readonly SampleRecord[]) => {
        // one write per problem: an episode group's samples are appended together
        fs.appendFileSync(targetSamplesFile(outDir, target.id), recs.map((r) => JSON.stringify(r) + '\n').join(''));
        for (const rec of recs) {
          have.get(target.id)!.set(key(rec.problem_id, rec.traj_idx), rec);
          done++;
        }
        o.onProgress?.({ done, total, target: target.label });
      };
      if (env && grading.kind === 'env') {
        // an episode group per (target, problem): its missing samples, run together, graded together
        const runner = env;
        const limits = { ...episodeLimits(grading.env), maxTokens };
        const byGroup = new Map<string, { target: ResolvedTarget; p: number; samples: number[] }>();
        for (const m of missing) {
          const k = `${m.target.id}\u0000${m.p}`;
          const g = byGroup.get(k) ?? { target: m.target, p: m.p, samples: [] };
          g.samples.push(m.i);
          byGroup.set(k, g);
        }
        const groupTasks = [...byGroup.values()].map(({ target, p, samples }) => async () => {
          const problem = problems[p]!;
          const renderer = await rendererFor(target.model);
          const sampler = await samplerFor(target);
          const [group] = await runEpisodeGroups(runner, [problem], samples.length, sampler, renderer, (_g, j) => paramsOf(renderer, target, problem, samples[j]!), limits, o.signal, () => undefined).catch((e: unknown) => {
            throw e instanceof ContextWindowError ? e.about(`problem ${problem.id} (${target.label})`) : e;
          });
          const recs = episodeRecords(renderer, [group!], [totalRewards(group!)], [samples.map(() => 0)]).map((r, j) => ({ ...r, group_idx: p, traj_idx: samples[j]! }));
          recorded(target, recs);
        });
        const groups = [...byGroup.values()].map((g) => ({ samples: g.samples.length, model: g.target.model, problem: problems[g.p]! }));
        await runPool(spend.gated(groupTasks, groups, maxTokens), Math.max(1, Math.floor(spec.concurrency / spec.n)), o.signal);
      }
      if (bench) await logExpectedTokens(problems, missing, targets, { n: spec.n, maxTokens, rendererFor, samplerFor, log, ...(o.signal ? { signal: o.signal } : {}) });
      const grader = reward;
      const tasks = (grader || bench ? missing : []).map(({ target, p, i }) => async () => {
        const problem = problems[p]!;
        const renderer = await rendererFor(target.model);
        const pk = `${target.model}\u0000${problem.id}`;
        let promptTokens = prompts.get(pk);
        if (!promptTokens) prompts.set(pk, (promptTokens = renderedPrompt(renderer, problem)));
        const params = paramsOf(renderer, target, problem, i);
        const sampler = await samplerFor(target);
        const res = await sampler.sample(textInput(promptTokens), params, { numSamples: 1, ...(o.signal ? { signal: o.signal } : {}) }).catch((e: unknown) => {
          throw e instanceof ContextWindowError ? e.about(`problem ${problem.id} (${target.label})`) : e;
        });
        const seq = res.sequences[0];
        if (!seq) throw new EvalError(`the server returned no sample for ${problem.id} (${target.label})`);
        const response = renderer.parseResponse(seq.tokens);
        const graded = bench?.grade(problem.id, response.message.content);
        const [outcome] = graded ? [graded.outcome] : await grader!.score([{ completion: response.message.content, groundTruth: problem.groundTruth }], o.signal);
        const question = questionOf(problem.messages);
        const rec: SampleRecord = {
          group_idx: p,
          traj_idx: i,
          problem_id: problem.id,
          prompt: renderer.tokenizer.decode(promptTokens),
          ...(question !== undefined ? { question } : {}),
          completion: renderer.tokenizer.decode(seq.tokens),
          content: response.message.content,
          ...parsedMessageFields(response.message),
          ground_truth: problem.groundTruth,
          completion_tokens: seq.tokens,
          logprobs: seq.logprobs ?? [],
          reward: outcome!.reward,
          advantage: 0,
          stop_reason: seq.stop_reason,
          termination: response.termination,
          ...(graded?.extracted !== undefined ? { extracted: graded.extracted } : {}),
        };
        if (!outcome!.ok) rec.reward_error = recordedRewardError(outcome!.error);
        else if (outcome!.format !== undefined) rec.format = outcome!.format;
        recorded(target, [rec]);
      });
      await runPool(spend.gated(tasks, missing.map((m) => ({ samples: 1, model: m.target.model, problem: problems[m.p]! })), maxTokens), spec.concurrency, o.signal);
    } finally {
      await reward?.close().catch(() => undefined);
      await env?.close().catch(() => undefined);
      service?.close();
    }
  }

  const stop = spend.stopMessage();
  if (stop) log(`budget: ${stop}`);
  const summary = withSpend(summarize({
    spec,
    specFile: loaded.file,
    targets,
    baseline,
    problems,
    have,
    resamples: o.resamples ?? DEFAULT_BOOTSTRAP,
    createdAt: readCreatedAt(outDir),
    elapsedS: (Date.now() - started) / 1000,
  }), spend);
  writeFileAtomicSync(path.join(outDir, SUMMARY_FILE), JSON.stringify(summary, null, 2) + '\n');
  if (o.signal?.aborted) throw o.signal.reason ?? new Error('cancelled');
  return summary;
}

/** The first failed sample of a target (in problem order), with the grader's `file:line`. */
function firstError(rows: readonly SampleRecord[][], graderAt: string): Pick<TargetSummary, 'first_error'> {
  for (const recs of rows)
    for (const r of recs)
      if (r.reward_error) {
        const e = r.reward_error;
        return { first_error: { problem_id: r.problem_id, traj_idx: r.traj_idx, kind: e.kind, message: e.message, at: `${graderAt}${e.line ? `:${e.line}` : ''}` } };
      }
  return {};
}

function readCreatedAt(outDir: string): string | undefined {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(outDir, SUMMARY_FILE), 'utf8')) as { created_at?: unknown };
    return typeof raw.created_at === 'string' ? raw.created_at : undefined;
  } catch {
    return undefined;
  }
}

/** The summary of what the results folder holds for these problems and targets (complete problems only). */
export function summarize(a: {
  spec: EvalSpec;
  specFile: string;
  targets: readonly ResolvedTarget[];
  baseline: string;
  problems: readonly Problem[];
  have: ReadonlyMap<string, ReadonlyMap<string, SampleRecord>>;
  resamples: number;
  createdAt?: string;
  elapsedS?: number;
}): EvalSummary {
  const { spec, problems } = a;
  const n = spec.n;
  const thr = evalCorrectThreshold(spec);
  const graderFile = evalGraderFile(spec);
  const graderRel = graderFile === undefined ? `benchmark ${spec.benchmark}` : path.relative(path.dirname(a.specFile), graderFile);
  const graderAt = path.isAbsolute(graderRel) ? graderRel : graderRel.split(path.sep).join('/');
  /** per target: problem index → its n samples (only complete problems) */
  const perTarget = new Map<string, Map<number, SampleRecord[]>>();
  for (const t of a.targets) {
    const m = new Map<number, SampleRecord[]>();
    const got = a.have.get(t.id)!;
    problems.forEach((p, pi) => {
      const recs: SampleRecord[] = [];
      for (let i = 0; i < n; i++) {
        const r = got.get(key(p.id, i));
        if (r) recs.push(r);
      }
      if (recs.length === n) m.set(pi, recs);
    });
    perTarget.set(t.id, m);
  }
  let complete = true;
  const targets: TargetSummary[] = a.targets.map((t) => {
    const m = perTarget.get(t.id)!;
    if (m.size < problems.length) complete = false;
    const rows = [...m.values()];
    const per = (f: (recs: SampleRecord[]) => number) => rows.map(f);
    // every per-problem statistic of the target from one resampling of its problems (reward and pass@1
    // are the same quantity on 0/1 rewards: the same interval); a problem without a `format` is NaN there
    const hasFormat = rows.some((recs) => recs.some((r) => r.format !== undefined));
    const columns: number[][] = [
      per((recs) => mean(recs.map((r) => r.reward))),
      per((recs) => mean(recs.map((r) => (stoppedOnItsOwn(r) ? 1 : 0)))),
      per((recs) => mean(recs.map((r) => r.completion_tokens.length))),
      ...Array.from({ length: n }, (_, k) => per((recs) => passAtK(n, recs.filter((r) => r.reward >= thr).length, k + 1))),
      ...(hasFormat ? [per((recs) => mean(recs.filter((r) => r.format !== undefined).map((r) => r.format!)))] : []),
    ];
    const [reward, stop_rate, completion_tokens, ...rest] = bootstrapMeans(columns, { resamples: a.resamples, seed: EVAL_STATS_SEED });
    const pass_at: Record<string, { value: number; lo?: number; hi?: number }> = {};
    for (let k = 1; k <= n; k++) pass_at[`pass@${k}`] = rest[k - 1]!;
    const format = hasFormat ? rest[n] : undefined;
    return {
      id: t.id,
      label: t.label,
      source: t.source,
      model: t.model,
      problems: m.size,
      samples: m.size * n,
      n,
      metrics: {
        reward: reward!,
        pass_at,
        stop_rate: stop_rate!,
        // the grader's format, where it reports one: per problem, the mean over its samples that have it
        ...(format ? { format } : {}),
        completion_tokens: completion_tokens!,
      },
      reward_errors: rows.reduce((s, recs) => s + recs.filter((r) => r.reward_error).length, 0),
      ...firstError(rows, graderAt),
    };
  });
  const base = perTarget.get(a.baseline)!;
  const comparisons: PairedComparison[] = [];
  for (const t of a.targets) {
    if (t.id === a.baseline) continue;
    const m = perTarget.get(t.id)!;
    const common = [...m.keys()].filter((pi) => base.has(pi)).sort((x, y) => x - y);
    const meanOf = (recs: SampleRecord[]) => mean(recs.map((r) => r.reward));
    const r = pairedComparison(
      common.map((pi) => meanOf(m.get(pi)!)),
      common.map((pi) => meanOf(base.get(pi)!)),
      {
        resamples: a.resamples,
        seed: EVAL_STATS_SEED,
        ...(n === 1 ? { correct: { a: common.map((pi) => m.get(pi)![0]!.reward >= thr), b: common.map((pi) => base.get(pi)![0]!.reward >= thr) } } : {}),
      },
    );
    comparisons.push({ target: t.id, baseline: a.baseline, ...r });
  }
  const problemRows: ProblemRow[] = problems.map((p, pi) => {
    const row: ProblemRow = { problem_id: p.id, question: questionOf(p.messages) ?? '', ground_truth: p.groundTruth, targets: {} };
    for (const t of a.targets) {
      const recs = perTarget.get(t.id)!.get(pi);
      if (recs) row.targets[t.id] = { reward: mean(recs.map((r) => r.reward)), correct: recs.filter((r) => r.reward >= thr).length, samples: recs.length };
    }
    return row;
  });
  const now = new Date().toISOString();
  return {
    kind: 'eval',
    version: 1,
    name: spec.name,
    spec_file: a.specFile,
    created_at: a.createdAt ?? now,
    updated_at: now,
    complete,
    n,
    correct_threshold: thr,
    grading: spec.benchmark ? 'benchmark' : spec.env ? 'environment' : 'grader',
    ...(spec.benchmark ? { benchmark: spec.benchmark } : {}),
    bootstrap: { resamples: a.resamples, seed: EVAL_STATS_SEED },
    baseline: a.baseline,
    targets,
    comparisons,
    problems: problemRows,
    ...(a.elapsedS !== undefined ? { elapsed_s: a.elapsedS } : {}),
  };
}
