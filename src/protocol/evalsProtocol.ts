// The messages between the evaluation results panel (webview/evals) and its host
// (src/vscode/evals/evalPanel.ts), inside the envelope of panelProtocol.ts. One panel per results
// folder (`evals/<spec name>/`): a table of targets × metrics with 95 % intervals, a bar chart, the
// metrics over the training step when the targets are a run's checkpoints, and the per-problem matrix
// (problems × targets coloured by mean reward), whose orders are pure functions here so that the
// host tests and the webview sort alike.
import * as z from 'zod';
import type { PanelProtocol } from './panelProtocol';

/** A value with its 95 % interval (bootstrap over problems; none with fewer than 2 problems). */
export const Estimate = z.object({ mean: z.number(), lo: z.number().optional(), hi: z.number().optional() });
export type Estimate = z.infer<typeof Estimate>;

export const EvalTargetView = z.object({
  /** the folder name under targets/ */
  id: z.string().min(1),
  /** the model name, tinker:// path or checkpoint name as the spec gave it */
  label: z.string(),
  /** the training step, when the target is a run's checkpoint */
  step: z.number().int().nonnegative().optional(),
  /** a tinker:// sampler path or a base model name the playground can sample */
  source: z.object({ kind: z.enum(['base', 'checkpoint']), value: z.string() }).optional(),
  samples: z.number().int().nonnegative(),
  /** samples the grader or environment failed on (scored 0) */
  failed: z.number().int().nonnegative().optional(),
  /** the target's sampling: estimated dollars and tokens (every billing category), where the summary has them */
  costUsd: z.number().nonnegative().optional(),
  tokens: z.number().nonnegative().optional(),
});
export type EvalTargetView = z.infer<typeof EvalTargetView>;

export const EvalMetricView = z.object({
  key: z.string().min(1),
  label: z.string(),
  /** which way is better (the bold cell of the column) */
  goal: z.enum(['maximize', 'minimize']),
  /** a fraction shown as a percentage */
  percent: z.boolean(),
  /** one per target, in target order; null where the target has no value */
  values: z.array(Estimate.nullable()),
});
export type EvalMetricView = z.infer<typeof EvalMetricView>;

/** A target against the baseline on the problems both have (the paired statistics of summary.json). */
export const ComparisonView = z.object({
  problems: z.number().int().nonnegative(),
  /** mean per-problem reward difference (target − baseline) with its paired bootstrap interval */
  diff: Estimate,
  /** paired permutation test */
  p: z.number().min(0).max(1),
  /** exact McNemar, with n = 1 */
  mcnemar: z.number().min(0).max(1).optional(),
  wins: z.number().int().nonnegative(),
  losses: z.number().int().nonnegative(),
  ties: z.number().int().nonnegative(),
});
export type ComparisonView = z.infer<typeof ComparisonView>;

export const EvalSnapshot = z.object({
  type: z.literal('snapshot'),
  name: z.string(),
  dir: z.string().min(1),
  /** index into targets */
  baseline: z.number().int().nonnegative(),
  targets: z.array(EvalTargetView),
  metrics: z.array(EvalMetricView),
  /** per target, against the baseline (null for the baseline and where not computed) */
  comparisons: z.array(ComparisonView.nullable()),
  /** all requested samples are present (false while an eval runs or after it was cancelled) */
  complete: z.boolean(),
  /** the problems in the results' order */
  problems: z.array(z.string()),
  /** rewards[t][p]: target t's mean reward on problem p; null when not sampled (yet); an NLL eval: its NLL per token on chat p */
  rewards: z.array(z.array(z.number().nullable())),
  /** what `rewards` and the comparisons measure: mean reward (absent), or an NLL eval's NLL per token (lower is better, the items are chats) */
  measure: z.enum(['reward', 'nll']).optional(),
  /** what could not be read (files, lines), for the message line */
  notes: z.array(z.string()),
});
export type EvalSnapshot = z.infer<typeof EvalSnapshot>;

export const ToWebview = z.discriminatedUnion('type', [EvalSnapshot, z.object({ type: z.literal('error'), message: z.string() })]);
export type ToWebview = z.infer<typeof ToWebview>;

const TargetIdx = z.number().int().nonnegative().max(10_000);
const ProblemId = z.string().min(1).max(10_000);

export const FromWebview = z.discriminatedUnion('type', [
  /** that problem's samples of two targets in the diff editor */
  z.object({ type: z.literal('diff'), problemId: ProblemId, left: TargetIdx, right: TargetIdx }),
  /** every problem whose reward changed between two targets, in one multi-diff (improved first) */
  z.object({ type: z.literal('whatChanged'), before: TargetIdx, after: TargetIdx }),
  /** the problem (its question and ground truth) in the sample playground, on the target */
  z.object({ type: z.literal('openInPlayground'), problemId: ProblemId, target: TargetIdx }),
  z.object({ type: z.literal('openSpec') }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const MatrixSort = z.enum(['order', 'regressed', 'disagreement', 'hardest']);
export type MatrixSort = z.infer<typeof MatrixSort>;

export const EvalPanelState = z.object({
  dir: z.string().min(1),
  sort: MatrixSort.optional(),
  /** the two targets of What changed / the diff (indices) */
  pair: z.tuple([TargetIdx, TargetIdx]).optional(),
});
export type EvalPanelState = z.infer<typeof EvalPanelState>;

export const EvalRequests = {};

export const EvalProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: EvalRequests,
  state: EvalPanelState,
} satisfies PanelProtocol;

/**
 * The problems' order under a sort (indices into `problems`):
 * - `regressed`: the largest drop of any target's mean reward below the baseline's first;
 * - `disagreement`: the largest spread (max − min) of the targets' mean rewards first;
 * - `hardest`: the lowest mean reward over the targets first;
 * ties (and `order`) keep the results' order; problems without values sort last.
 */
export function sortProblems(rewards: ReadonlyArray<ReadonlyArray<number | null>>, baseline: number, sort: MatrixSort, count: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  if (sort === 'order') return order;
  const key = new Float64Array(count);
  for (let p = 0; p < count; p++) {
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    let n = 0;
    for (let t = 0; t < rewards.length; t++) {
      const v = rewards[t]![p];
      if (v === null || v === undefined) continue;
      if (v < min) min = v;
      if (v > max) max = v;
      sum += v;
      n++;
    }
    let k: number;
    if (sort === 'regressed') {
      const base = rewards[baseline]?.[p];
      let drop = -Infinity;
      if (base !== null && base !== undefined)
        for (let t = 0; t < rewards.length; t++) {
          const v = rewards[t]![p];
          if (t !== baseline && v !== null && v !== undefined) drop = Math.max(drop, base - v);
        }
      k = drop === -Infinity ? Infinity : -drop;
    } else if (sort === 'disagreement') k = n ? -(max - min) : Infinity;
    else k = n ? sum / n : Infinity;
    key[p] = k;
  }
  return order.sort((a, b) => key[a]! - key[b]! || a - b);
}

/** The index of the best value in a metric's column (undefined when there is none or all tie). */
export function bestOf(metric: Pick<EvalMetricView, 'values' | 'goal'>): number | undefined {
  let best: number | undefined;
  for (let i = 0; i < metric.values.length; i++) {
    const v = metric.values[i];
    if (!v) continue;
    const b = best === undefined ? undefined : metric.values[best];
    if (!b || (metric.goal === 'maximize' ? v.mean > b.mean : v.mean < b.mean)) best = i;
  }
  if (best === undefined) return undefined;
  const top = metric.values[best]!.mean;
  return metric.values.filter((v) => v && v.mean === top).length === metric.values.filter(Boolean).length && metric.values.length > 1 ? undefined : best;
}
