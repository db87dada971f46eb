// What the evaluation results panel shows, prepared from a results folder (`evals/<spec name>/`):
// each target's per-sample records (targets/<id>/samples.jsonl, the runs' sample-record schema) are
// reduced to per-problem means (the matrix) and per-target metrics with 95 % intervals (a seeded
// percentile bootstrap over problems, experiments-reference.md). Pure but for reading the folder;
// no `vscode`, so the bench and the tests prepare the same snapshot as the panel.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Estimate, EvalMetricView, EvalSnapshot, EvalTargetView } from '../../protocol/evalsProtocol';
import type { SampleRecord } from '../../protocol/sampleSchema';
import { parseSamples } from '../runs/sampleRecord';
import { errorMessage } from '../errors';

export const TARGETS_DIR = 'targets';
export const TARGET_SAMPLES = 'samples.jsonl';
export const RESOLVED_SPEC = 'eval.json';
/** bootstrap resamples of an interval */
export const BOOTSTRAP_RESAMPLES = 1000;
const DEFAULT_THRESHOLD = 0.5;

/** The parts of the resolved spec (eval.json) the panel uses; the rest is evalcore's. */
const ResolvedSpecView = z
  .object({
    name: z.string().optional(),
    baseline: z.string().optional(),
    grader: z.object({ correct_threshold: z.number().optional() }).passthrough().optional(),
  })
  .passthrough();

/** One target's samples, grouped by problem in first-seen order. */
export interface TargetSamples {
  id: string;
  records: readonly SampleRecord[];
}

/** The samples file of a target. */
export function targetSamplesFile(dir: string, targetId: string): string {
  return path.join(dir, TARGETS_DIR, targetId, TARGET_SAMPLES);
}

/** A checkpoint's step from its name (`000080`, `…/weights/000080`, `step_80`), if it has one. */
export function stepOfTarget(id: string): number | undefined {
  const m = /(?:^|[/_\-:.])(?:step[_-]?)?(\d{1,9})$/i.exec(id);
  return m ? Number(m[1]) : undefined;
}

/** A small fast seeded generator (mulberry32), so intervals are the same on every paint. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The mean of per-problem values with a 95 % percentile bootstrap interval over problems. */
export function bootstrapMean(values: ArrayLike<number>, seed = 0, resamples = BOOTSTRAP_RESAMPLES): Estimate | null {
  return bootstrapMeans([values], seed, resamples)[0]!;
}

/**
 * Several per-problem columns of the same problems, each with its 95 % percentile bootstrap interval;
 * one resampling of the problems serves every column (as a paired bootstrap does), so four metrics
 * cost one set of draws.
 */
export function bootstrapMeans(columns: ReadonlyArray<ArrayLike<number>>, seed = 0, resamples = BOOTSTRAP_RESAMPLES): Array<Estimate | null> {
  const n = columns[0]?.length ?? 0;
  if (n === 0) return columns.map(() => null);
  const C = columns.length;
  const rand = seededRandom(seed);
  const means = columns.map(() => new Float64Array(resamples));
  const sums = new Float64Array(C);
  for (let b = 0; b < resamples; b++) {
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const k = (rand() * n) | 0;
      for (let c = 0; c < C; c++) sums[c]! += columns[c]![k]!;
    }
    for (let c = 0; c < C; c++) means[c]![b] = sums[c]! / n;
  }
  return columns.map((col, c) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += col[i]!;
    const mean = sum / n;
    const m = means[c]!.sort();
    const at = (q: number) => m[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
    return { mean, lo: Math.min(at(0.025), mean), hi: Math.max(at(0.975), mean) };
  });
}

interface MetricDef {
  key: string;
  label: string;
  goal: 'maximize' | 'minimize';
  percent: boolean;
  /** a sample's value (undefined: the sample does not count) */
  of(s: SampleRecord, threshold: number): number | undefined;
}

const METRICS: MetricDef[] = [
  { key: 'reward', label: 'mean reward', goal: 'maximize', percent: false, of: (s) => s.reward },
  { key: 'pass@1', label: 'pass@1', goal: 'maximize', percent: true, of: (s, th) => (s.reward >= th ? 1 : 0) },
  { key: 'stop_rate', label: 'stop rate', goal: 'maximize', percent: true, of: (s) => (s.stop_reason === 'length' ? 0 : 1) },
  { key: 'tokens', label: 'mean tokens', goal: 'minimize', percent: false, of: (s) => s.completion_tokens.length },
];

/**
 * The panel's snapshot from the targets' samples: the problems in first-seen order over the targets,
 * each target's mean reward per problem, and the metrics per target (per-problem means, then the
 * bootstrap over problems, seeded by the metric and target so the figures are stable).
 */
export function buildEvalSnapshot(input: {
  name: string;
  dir: string;
  targets: readonly TargetSamples[];
  baseline?: string;
  threshold?: number;
  notes?: string[];
  resamples?: number;
}): EvalSnapshot {
  const threshold = input.threshold ?? DEFAULT_THRESHOLD;
  const problemIndex = new Map<string, number>();
  const problems: string[] = [];
  for (const t of input.targets)
    for (const r of t.records)
      if (!problemIndex.has(r.problem_id)) {
        problemIndex.set(r.problem_id, problems.length);
        problems.push(r.problem_id);
      }
  const P = problems.length;
  const rewards: Array<Array<number | null>> = [];
  const metricValues: Array<Array<Estimate | null>> = METRICS.map(() => []);
  const targets: EvalTargetView[] = [];
  input.targets.forEach((t, ti) => {
    const counts = new Uint32Array(P);
    const sums = METRICS.map(() => new Float64Array(P));
    for (const r of t.records) {
      const p = problemIndex.get(r.problem_id)!;
      counts[p]!++;
      METRICS.forEach((m, mi) => (sums[mi]![p]! += m.of(r, threshold) ?? 0));
    }
    const row: Array<number | null> = new Array<number | null>(P);
    const sampled: number[] = [];
    for (let p = 0; p < P; p++) {
      row[p] = counts[p] ? sums[0]![p]! / counts[p]! : null;
      if (counts[p]) sampled.push(p);
    }
    rewards.push(row);
    const columns = METRICS.map((_, mi) => Float64Array.from(sampled, (p) => sums[mi]![p]! / counts[p]!));
    bootstrapMeans(columns, ti + 1, input.resamples).forEach((e, mi) => metricValues[mi]!.push(e));
    const step = stepOfTarget(t.id);
    const source = t.id.startsWith('tinker:') ? { kind: 'checkpoint' as const, value: t.id } : undefined;
    targets.push({ id: t.id, label: t.id, ...(step !== undefined ? { step } : {}), ...(source ? { source } : {}), samples: t.records.length });
  });
  const metrics: EvalMetricView[] = METRICS.map((m, mi) => ({ key: m.key, label: m.label, goal: m.goal, percent: m.percent, values: metricValues[mi]! }));
  const baseline = Math.max(0, input.baseline === undefined ? 0 : input.targets.findIndex((t) => t.id === input.baseline));
  return { type: 'snapshot', name: input.name, dir: input.dir, baseline, targets, metrics, problems, rewards, notes: input.notes ?? [] };
}

/** The targets of a results folder: the folders under targets/ (the spec's order when eval.json lists them, else by name). */
export async function listTargets(dir: string): Promise<string[]> {
  const entries = await fs.readdir(path.join(dir, TARGETS_DIR), { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

/** Reads a results folder into the panel's snapshot; unreadable lines and files become notes. */
export async function readEvalSnapshot(dir: string): Promise<{ snapshot: EvalSnapshot; targets: TargetSamples[] }> {
  const notes: string[] = [];
  let spec: z.infer<typeof ResolvedSpecView> | undefined;
  const specFile = path.join(dir, RESOLVED_SPEC);
  try {
    const parsed = ResolvedSpecView.safeParse(JSON.parse(await fs.readFile(specFile, 'utf8')));
    if (parsed.success) spec = parsed.data;
    else notes.push(`${specFile}: ${parsed.error.issues[0]?.path.join('.') || 'spec'}: ${parsed.error.issues[0]?.message}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') notes.push(`${specFile}: ${errorMessage(err)}`);
  }
  const ids = await listTargets(dir);
  const targets: TargetSamples[] = [];
  for (const id of ids) {
    const file = targetSamplesFile(dir, id);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') notes.push(`${file}: ${errorMessage(err)}`);
      targets.push({ id, records: [] });
      continue;
    }
    const read = parseSamples(text, file);
    for (const p of read.problems.slice(0, 5)) notes.push(`${path.relative(dir, p.file)}:${p.line}: ${p.message}`);
    if (read.problems.length > 5) notes.push(`${path.relative(dir, file)}: ${read.problems.length - 5} more unreadable lines`);
    targets.push({ id, records: read.records });
  }
  const name = spec?.name ?? path.basename(dir);
  const baseline = spec?.baseline !== undefined && ids.includes(spec.baseline) ? spec.baseline : undefined;
  const snapshot = buildEvalSnapshot({ name, dir, targets, baseline, threshold: spec?.grader?.correct_threshold, notes });
  return { snapshot, targets };
}
