// The results folder of an evaluation (`evals/<spec name>/` next to the spec, or `--out DIR`):
//   summary.json                   EvalSummary (below)
//   eval.json                      the resolved spec (EvalManifest)
//   targets/<target id>/samples.jsonl   per-sample records in the runs' sample-record schema
//   targets/<target id>/nll.jsonl       an NLL eval's per-chat records (NllRecord), instead of samples
// Every byte read here is parsed with zod; errors name the file, line and field.
import * as fs from 'fs';
import * as path from 'path';
import * as z from 'zod';
import { SampleRecord } from '../../protocol/sampleSchema';

export const SUMMARY_FILE = 'summary.json';
export const MANIFEST_FILE = 'eval.json';
export const TARGETS_DIR = 'targets';
export const SAMPLES_FILE = 'samples.jsonl';
export const NLL_FILE = 'nll.jsonl';

/** A point estimate with its 95 % interval (bootstrap over problems; `lo`/`hi` absent with fewer than 2 problems). */
export const Estimate = z.object({
  value: z.number(),
  lo: z.number().optional(),
  hi: z.number().optional(),
});
export type Estimate = z.infer<typeof Estimate>;

/** What a target is: a base model, a sampler path, or a run's checkpoint. */
export const TargetSource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('base'), model: z.string() }),
  z.object({ kind: z.literal('path'), path: z.string() }),
  z.object({
    kind: z.literal('checkpoint'),
    path: z.string(),
    run_dir: z.string(),
    checkpoint: z.string(),
    /** the training step the checkpoint was saved at (the panel's metric-over-step curve) */
    step: z.number().int().nonnegative().optional(),
  }),
]);
export type TargetSource = z.infer<typeof TargetSource>;

export const TargetSummary = z.object({
  /** folder name under targets/ (filesystem-safe, unique in the eval) */
  id: z.string(),
  /** what the user reads: the model name, `<run>/<checkpoint>` or the path */
  label: z.string(),
  source: TargetSource,
  /** the base model the sampler runs on */
  model: z.string(),
  problems: z.number().int().nonnegative(),
  samples: z.number().int().nonnegative(),
  /** samples per problem */
  n: z.number().int().positive(),
  /** a sampling eval has reward, pass_at, stop_rate and completion_tokens; an NLL eval has nll and tokens */
  metrics: z.object({
    reward: Estimate.optional(),
    /** pass@k for k = 1..n, keyed "pass@<k>" */
    pass_at: z.record(z.string(), Estimate).optional(),
    stop_rate: Estimate.optional(),
    /** the grader's `format` metric, where it reports one */
    format: Estimate.optional(),
    completion_tokens: Estimate.optional(),
    /** NLL eval: the mean over chats of each chat's mean NLL per scored token (the SFT validation's reduction: each chat counts once) */
    nll: Estimate.optional(),
    /** NLL eval: scored tokens per chat */
    tokens: Estimate.optional(),
  }),
  /** samples whose grader (or environment) failed; they score 0 */
  reward_errors: z.number().int().nonnegative(),
  /** the first failed sample's error, its place as `file:line` (the grader or environment file, relative to the spec) */
  first_error: z
    .object({ problem_id: z.string(), traj_idx: z.number().int().nonnegative(), kind: z.string(), message: z.string(), at: z.string() })
    .optional(),
});
export type TargetSummary = z.infer<typeof TargetSummary>;

/** A target against the baseline on the problems both have. */
export const PairedComparison = z.object({
  target: z.string(),
  baseline: z.string(),
  problems: z.number().int().nonnegative(),
  /** mean over problems of (target's mean reward − baseline's) with the paired bootstrap interval; an NLL eval: of (target's NLL per token − baseline's) over chats */
  diff: Estimate,
  /** paired sign-flip permutation test of mean difference = 0 */
  p_value: z.number().min(0).max(1),
  /** permutations drawn (or 2^N when enumerated exactly) */
  permutations: z.number().int().positive(),
  exact: z.boolean(),
  /** with n = 1: exact McNemar on correctness */
  mcnemar_p: z.number().min(0).max(1).optional(),
  /** problems the target did better on than the baseline (higher reward; an NLL eval: lower NLL), worse on, the same */
  wins: z.number().int().nonnegative(),
  losses: z.number().int().nonnegative(),
  ties: z.number().int().nonnegative(),
});
export type PairedComparison = z.infer<typeof PairedComparison>;

/** One problem's row of the problems × targets matrix (an NLL eval: one chat's, its problem_id the chat's id). */
export const ProblemRow = z.object({
  problem_id: z.string(),
  /** the question as the data gave it (an NLL eval: the chat's first user message) */
  question: z.string(),
  /** an NLL eval: the chat's last assistant message */
  ground_truth: z.string(),
  /** per target id: mean reward and correct samples out of the samples drawn; an NLL eval: the chat's mean NLL per scored token and its scored tokens */
  targets: z.record(
    z.string(),
    z.object({
      reward: z.number().optional(),
      correct: z.number().int().nonnegative().optional(),
      samples: z.number().int().nonnegative().optional(),
      nll: z.number().optional(),
      tokens: z.number().int().nonnegative().optional(),
    }),
  ),
});
export type ProblemRow = z.infer<typeof ProblemRow>;

export const EvalSummary = z.object({
  kind: z.literal('eval'),
  version: z.literal(1),
  /** the spec's name (its file name without .eval.json) */
  name: z.string(),
  spec_file: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** all requested samples are present */
  complete: z.boolean(),
  n: z.number().int().positive(),
  /** absent in an NLL eval (nothing is graded) */
  correct_threshold: z.number().optional(),
  /** what scored the samples: a reward file, or an environment's episodes; "nll": the chats' NLL, nothing sampled */
  grading: z.enum(['grader', 'environment', 'nll', 'benchmark']).optional(),
  /** the public benchmark an eval ran ("benchmark" grading) */
  benchmark: z.string().optional(),
  /** bootstrap resamples behind every interval, and the seed of every draw (each target's one resampling of its problems, the paired bootstrap, the sign-flip draws) */
  bootstrap: z.object({ resamples: z.number().int().positive(), seed: z.number().int() }),
  /** the baseline target's id */
  baseline: z.string(),
  /** in the spec's order */
  targets: z.array(TargetSummary),
  /** one per non-baseline target */
  comparisons: z.array(PairedComparison),
  problems: z.array(ProblemRow),
  /** seconds of sampling + grading in this run of the eval (not counting resumed samples) */
  elapsed_s: z.number().nonnegative().optional(),
});
export type EvalSummary = z.infer<typeof EvalSummary>;

/** eval.json: the resolved spec as it ran (targets resolved to sampler paths). */
export const EvalManifest = z.object({
  kind: z.literal('eval'),
  name: z.string(),
  spec_file: z.string(),
  /** the spec as written, after defaults */
  spec: z.record(z.string(), z.unknown()),
  targets: z.array(z.object({ id: z.string(), label: z.string(), source: TargetSource, model: z.string() })),
  baseline: z.string(),
});
export type EvalManifest = z.infer<typeof EvalManifest>;

export interface EvalResults {
  dir: string;
  summary: EvalSummary;
  manifest?: EvalManifest;
  /** the folder of each target's samples (samples are read on demand: readTargetSamples) */
  targetDirs: Record<string, string>;
}

export class EvalResultsError extends Error {}

/** One chat scored under one target (targets/<id>/nll.jsonl). */
export const NllRecord = z.object({
  chat_id: z.string(),
  /** sha256 (16 hex) of the scored tokens and weights: a record of other tokens (the chat, renderer or train_on_what changed) is stale */
  fingerprint: z.string(),
  /** the chat's mean NLL per scored token */
  nll: z.number(),
  /** scored tokens (weighted by the renderer's train-on-what rule) */
  tokens: z.number().int().nonnegative(),
});
export type NllRecord = z.infer<typeof NllRecord>;

function zodIssue(file: string, err: z.ZodError, line?: number): EvalResultsError {
  const i = err.issues[0];
  const where = i && i.path.length ? ` field ${i.path.join('.')}` : '';
  return new EvalResultsError(`${file}${line !== undefined ? `:${line}` : ''}:${where} ${i?.message ?? 'invalid'}`);
}

function readJsonFile<T>(file: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new EvalResultsError(`${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw zodIssue(file, r.error);
  return r.data;
}

export function isEvalResultsDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, SUMMARY_FILE)) && fs.existsSync(path.join(dir, TARGETS_DIR));
}

export function targetSamplesFile(dir: string, targetId: string): string {
  return path.join(dir, TARGETS_DIR, targetId, SAMPLES_FILE);
}

/** Reads an eval's results folder: summary.json (required), eval.json (when present). */
export function readEvalResults(dir: string): EvalResults {
  const summary = readJsonFile(path.join(dir, SUMMARY_FILE), EvalSummary);
  const manifestFile = path.join(dir, MANIFEST_FILE);
  const manifest = fs.existsSync(manifestFile) ? readJsonFile(manifestFile, EvalManifest) : undefined;
  const targetDirs: Record<string, string> = {};
  for (const t of summary.targets) targetDirs[t.id] = path.join(dir, TARGETS_DIR, t.id);
  return { dir, summary, ...(manifest ? { manifest } : {}), targetDirs };
}

export function targetNllFile(dir: string, targetId: string): string {
  return path.join(dir, TARGETS_DIR, targetId, NLL_FILE);
}

/** A target's per-chat NLL records (an NLL eval's), read as readTargetSamples reads samples. */
export function readTargetNll(dir: string, targetId: string): NllRecord[] {
  return readJsonl(targetNllFile(dir, targetId), NllRecord);
}

/**
 * A target's per-sample records. A torn last line (a crash mid-write) is dropped; any other bad
 * line is an error naming file, line and field.
 */
export function readTargetSamples(dir: string, targetId: string): SampleRecord[] {
  return readJsonl(targetSamplesFile(dir, targetId), SampleRecord);
}

function readJsonl<T>(file: string, schema: z.ZodType<T>): T[] {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const out: T[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      const last = i === lines.length - 1 || lines.slice(i + 1).every(l => !l.trim());
      if (last && !text.endsWith('\n')) break; // torn tail
      throw new EvalResultsError(`${file}:${i + 1}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const r = schema.safeParse(raw);
    if (!r.success) throw zodIssue(file, r.error, i + 1);
    out.push(r.data);
  }
  return out;
}
