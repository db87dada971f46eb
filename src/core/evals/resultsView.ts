// What the evaluation results panel shows, prepared from a results folder (`evals/<spec name>/`,
// read through results.ts): from summary.json, the targets in the spec's order with their metrics
// and 95 % intervals, the paired comparisons against the baseline and the per-problem rewards; before
// an eval has written its summary, the same from the targets' samples (stats.ts's seeded bootstrap).
// No `vscode`, so the bench and the tests prepare the same snapshot as the panel.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ComparisonView, Estimate, EvalMetricView, EvalSnapshot, EvalTargetView } from '../../protocol/evalsProtocol';
import { stoppedOnItsOwn, type SampleRecord } from '../../protocol/sampleSchema';
import { EvalSummary, readEvalResults, readTargetSamples, SUMMARY_FILE, TARGETS_DIR, TargetSummary } from './results';
import { bootstrapMeans, EVAL_STATS_SEED, Interval } from './stats';
import { failureLine, isNllSummary } from './table';

const DEFAULT_THRESHOLD = 0.5;

/** One target's samples. */
export interface TargetSamples {
  id: string;
  records: readonly SampleRecord[];
}

const estimate = (i: Interval | undefined): Estimate | null => (i ? { mean: i.value, ...(i.lo !== undefined ? { lo: i.lo } : {}), ...(i.hi !== undefined ? { hi: i.hi } : {}) } : null);

function targetView(t: Pick<TargetSummary, 'id' | 'label' | 'source' | 'samples' | 'reward_errors' | 'usage' | 'cost_usd'>): EvalTargetView {
  const src = t.source;
  const step = src.kind === 'checkpoint' ? src.step : undefined;
  return {
    id: t.id,
    label: t.label,
    ...(step !== undefined ? { step } : {}),
    source: src.kind === 'base' ? { kind: 'base', value: src.model } : { kind: 'checkpoint', value: src.path },
    samples: t.samples,
    ...(t.reward_errors > 0 ? { failed: t.reward_errors } : {}),
    ...(t.cost_usd !== undefined ? { costUsd: t.cost_usd } : {}),
    ...(t.usage ? { tokens: t.usage.train + t.usage.prefill + t.usage.cached_prefill + t.usage.sampled } : {}),
  };
}

/** The panel's snapshot from an eval's summary.json. */
export function snapshotFromSummary(dir: string, s: EvalSummary): EvalSnapshot {
  const T = s.targets;
  const passKeys = [...new Set(T.flatMap((t) => Object.keys(t.metrics.pass_at ?? {})))].sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  const metric = (key: string, label: string, goal: 'maximize' | 'minimize', percent: boolean, of: (t: TargetSummary) => Interval | undefined): EvalMetricView => ({
    key,
    label,
    goal,
    percent,
    values: T.map((t) => estimate(of(t))),
  });
  const nll = isNllSummary(s);
  const metrics = nll
    ? [metric('nll', 'NLL per token', 'minimize', false, (t) => t.metrics.nll), metric('tokens', 'scored tokens per chat', 'minimize', false, (t) => t.metrics.tokens)]
    : [
        metric('reward', 'mean reward', 'maximize', false, (t) => t.metrics.reward),
        ...passKeys.map((k) => metric(k, k, 'maximize', true, (t) => t.metrics.pass_at?.[k])),
        metric('stop_rate', 'stop rate', 'maximize', true, (t) => t.metrics.stop_rate),
        ...(T.some((t) => t.metrics.format) ? [metric('format', 'format', 'maximize', true, (t) => t.metrics.format)] : []),
        metric('completion_tokens', 'mean tokens', 'minimize', false, (t) => t.metrics.completion_tokens),
      ];
  const comparisons = T.map((t): ComparisonView | null => {
    const c = s.comparisons.find((x) => x.target === t.id);
    return c
      ? { problems: c.problems, diff: estimate(c.diff)!, p: c.p_value, ...(c.mcnemar_p !== undefined ? { mcnemar: c.mcnemar_p } : {}), wins: c.wins, losses: c.losses, ties: c.ties }
      : null;
  });
  // an NLL eval's matrix holds each chat's NLL per token
  const rewards = T.map((t) => s.problems.map((p) => (nll ? p.targets[t.id]?.nll : p.targets[t.id]?.reward) ?? null));
  return {
    type: 'snapshot',
    name: s.name,
    dir,
    baseline: Math.max(0, T.findIndex((t) => t.id === s.baseline)),
    targets: T.map(targetView),
    metrics,
    comparisons,
    complete: s.complete,
    problems: s.problems.map((p) => p.problem_id),
    rewards,
    ...(nll ? { measure: 'nll' as const } : {}),
    notes: [
      ...(nll ? ["NLL eval: each chat's mean NLL per scored token, lower is better; the comparisons are NLL differences (negative: lower than the baseline) and the matrix shows each chat's NLL."] : []),
      ...T.flatMap((t) => {
        const f = failureLine(s, t);
        return f ? [`${t.label}: ${f}.`] : [];
      }),
    ],
  };
}

/**
 * The snapshot from the targets' samples alone (an eval still running, before its first summary):
 * problems in first-seen order, each target's mean reward per problem, and mean reward, pass@1, stop
 * rate and tokens with bootstrap intervals over problems; no paired comparisons yet.
 */
export function snapshotFromSamples(input: { name: string; dir: string; targets: readonly TargetSamples[]; threshold?: number }): EvalSnapshot {
  const threshold = input.threshold ?? DEFAULT_THRESHOLD;
  const defs: Array<{ key: string; label: string; goal: 'maximize' | 'minimize'; percent: boolean; of(s: SampleRecord): number }> = [
    { key: 'reward', label: 'mean reward', goal: 'maximize', percent: false, of: (s) => s.reward },
    { key: 'pass@1', label: 'pass@1', goal: 'maximize', percent: true, of: (s) => (s.reward >= threshold ? 1 : 0) },
    { key: 'stop_rate', label: 'stop rate', goal: 'maximize', percent: true, of: (s) => (stoppedOnItsOwn(s) ? 1 : 0) },
    { key: 'completion_tokens', label: 'mean tokens', goal: 'minimize', percent: false, of: (s) => s.completion_tokens.length },
  ];
  const index = new Map<string, number>();
  const problems: string[] = [];
  for (const t of input.targets)
    for (const r of t.records)
      if (!index.has(r.problem_id)) {
        index.set(r.problem_id, problems.length);
        problems.push(r.problem_id);
      }
  const values: Array<Array<Estimate | null>> = defs.map(() => []);
  const rewards = input.targets.map((t) => {
    const counts = new Uint32Array(problems.length);
    const sums = defs.map(() => new Float64Array(problems.length));
    for (const r of t.records) {
      const p = index.get(r.problem_id)!;
      counts[p]!++;
      defs.forEach((d, di) => (sums[di]![p]! += d.of(r)));
    }
    const sampled = problems.flatMap((_, p) => (counts[p] ? [p] : []));
    // one resampling of the target's problems for every statistic, as summary.json does
    const intervals = sampled.length ? bootstrapMeans(defs.map((_, di) => sampled.map((p) => sums[di]![p]! / counts[p]!)), { seed: EVAL_STATS_SEED }) : [];
    defs.forEach((_, di) => values[di]!.push(sampled.length ? estimate(intervals[di]) : null));
    return problems.map((_, p) => (counts[p] ? sums[0]![p]! / counts[p]! : null));
  });
  return {
    type: 'snapshot',
    name: input.name,
    dir: input.dir,
    baseline: 0,
    targets: input.targets.map((t) => {
      const failed = t.records.filter((r) => r.reward_error).length;
      return { id: t.id, label: t.id, samples: t.records.length, ...(failed > 0 ? { failed } : {}) };
    }),
    metrics: defs.map((d, di) => ({ key: d.key, label: d.label, goal: d.goal, percent: d.percent, values: values[di]! })),
    comparisons: input.targets.map(() => null),
    complete: false,
    problems,
    rewards,
    notes: ['No summary.json yet: the figures are from the samples written so far, without the paired comparisons.'],
  };
}

/** The folders under targets/, by name. */
export async function listTargets(dir: string): Promise<string[]> {
  const entries = await fs.readdir(path.join(dir, TARGETS_DIR), { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

/** Reads a results folder into the panel's snapshot (summary.json, else the samples so far). */
export async function readEvalSnapshot(dir: string): Promise<EvalSnapshot> {
  const hasSummary = await fs.stat(path.join(dir, SUMMARY_FILE)).then(() => true, () => false);
  if (hasSummary) return snapshotFromSummary(dir, readEvalResults(dir).summary);
  const ids = await listTargets(dir);
  return snapshotFromSamples({ name: path.basename(dir), dir, targets: ids.map((id) => ({ id, records: readTargetSamples(dir, id) })) });
}

/** Every target's samples (the diffs and the playground read them). */
export function readAllTargetSamples(dir: string, ids: readonly string[]): TargetSamples[] {
  return ids.map((id) => ({ id, records: readTargetSamples(dir, id) }));
}
