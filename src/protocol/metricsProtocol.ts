// The messages between the metrics panel (webview/metrics) and its host (src/vscode/metrics/metricsPanel.ts),
// inside the envelope of panelProtocol.ts. Both sides import this file; each parses what it receives
// with these schemas. The host sends a full snapshot whenever the webview says it is ready (first
// load, re-shown, reloaded), then appends.
// Metric values are numbers or null: NaN and ±Infinity (the cookbook writes them) do not survive
// the JSON transport, and a chart shows null as a gap.
import * as z from 'zod';
import type { PanelProtocol } from './panelProtocol';
import { INLINE_EVAL_KEY, inlineEvalsIn, METRIC, TEACHER_KL_OF } from './metricKeys';
import { RUN_STATUSES } from './runProgress';

export const MetricRow = z.object({
  step: z.number().int(),
  values: z.record(z.string(), z.number().nullable()),
});
export type MetricRow = z.infer<typeof MetricRow>;

export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

export const RunInfo = z.object({
  name: z.string(),
  dir: z.string(),
  model: z.string().optional(),
  /** the W&B run's URL (config.json's wandb.url) when the run logs to W&B */
  wandbUrl: z.string().regex(/^https?:\/\//).optional(),
  status: RunStatus,
  /** the iteration the run is in and how many it will run, while it runs */
  progress: z.object({ step: z.number().int(), endStep: z.number().int(), phase: z.string().optional() }).optional(),
});
export type RunInfo = z.infer<typeof RunInfo>;

export const ToWebview = z.discriminatedUnion('type', [
  /** everything known about the run; replaces whatever the webview shows */
  z.object({ type: z.literal('snapshot'), run: RunInfo, rows: z.array(MetricRow), problems: z.array(z.string()) }),
  /** rows logged since the last snapshot or append (a step seen before is merged into its row) */
  z.object({ type: z.literal('append'), rows: z.array(MetricRow) }),
  z.object({ type: z.literal('run'), run: RunInfo }),
  /** the run directory could not be read; the message says what to do */
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('revealRunDir') }),
  z.object({ type: z.literal('openWandb') }),
  z.object({ type: z.literal('showLog') }),
  /** something failed inside the webview (logged by the host) */
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

/** What the webview keeps with vscode.setState, and the serializer receives after a window reload. */
export const MetricsPanelState = z.object({
  runDir: z.string().min(1),
  smoothing: z.number().min(0).max(0.99).optional(),
});
export type MetricsPanelState = z.infer<typeof MetricsPanelState>;

export const MetricsRequests = {
  /** a chart point was clicked: open that iteration's group breakdown */
  openIteration: { params: z.object({ step: z.number().int().nonnegative() }), result: z.object({ opened: z.boolean() }) },
};

export const MetricsProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: MetricsRequests,
  state: MetricsPanelState,
} satisfies PanelProtocol;

/** A metrics.jsonl record as a row: numeric values only, non-finite ones as null. */
export function toMetricRow(record: { step: number } & Record<string, unknown>): MetricRow {
  const values: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(record)) {
    if (k === 'step' || typeof v !== 'number') continue;
    values[k] = Number.isFinite(v) ? v : null;
  }
  return { step: record.step, values };
}

/** The charts of the panel: which metrics each plots (in the cookbook's names). */
/** VS Code's chart colours (theme variables --vscode-charts-<name>). */
export type ChartColor = 'blue' | 'orange' | 'green' | 'red' | 'purple' | 'yellow';

export interface ChartSpec {
  id: string;
  title: string;
  series: Array<{ key: string; label: string; color: ChartColor }>;
  /** 'fraction': y range fixed to [0, 1]; 'usd': dollars, drawn as logged (a running total is not smoothed) */
  unit?: 'fraction' | 'usd';
}

export const CHARTS: ChartSpec[] = [
  {
    id: 'reward',
    title: 'Reward',
    series: [
      { key: METRIC.reward, label: 'train', color: 'blue' },
      { key: METRIC.testReward, label: 'holdout (test)', color: 'purple' },
    ],
  },
  // next to reward: what the run has cost so far, from its price table (an estimate, never a bill)
  { id: 'cost', title: 'Cost so far (USD, estimate)', unit: 'usd', series: [{ key: METRIC.costTotal, label: 'estimate', color: 'green' }] },
  {
    id: 'groups',
    title: 'Groups by signal',
    unit: 'fraction',
    series: [
      { key: METRIC.fracMixed, label: 'mixed', color: 'blue' },
      { key: METRIC.fracAllGood, label: 'all good', color: 'green' },
      { key: METRIC.fracAllBad, label: 'all bad', color: 'red' },
    ],
  },
  {
    id: 'kl',
    title: 'KL sample ↔ train',
    series: [
      { key: METRIC.klV1, label: 'v1', color: 'blue' },
      { key: METRIC.klV2, label: 'v2', color: 'orange' },
    ],
  },
  { id: 'entropy', title: 'Entropy', series: [{ key: METRIC.entropy, label: 'entropy', color: 'blue' }] },
  {
    id: 'tokens',
    title: 'Tokens per turn',
    series: [
      { key: METRIC.acTokensPerTurn, label: 'sampled', color: 'blue' },
      { key: METRIC.obTokensPerTurn, label: 'prompt', color: 'orange' },
    ],
  },
  { id: 'truncated', title: 'Cut off by max_tokens', unit: 'fraction', series: [{ key: METRIC.fracTruncated, label: 'fraction truncated', color: 'orange' }] },
  { id: 'time', title: 'Time per iteration (s)', series: [{ key: METRIC.timeTotal, label: 'total', color: 'blue' }] },
  // SFT runs (grpo-reference §3.4): train vs validation NLL shows overfitting as the curves part
  {
    id: 'nll',
    title: 'NLL (SFT)',
    series: [
      { key: METRIC.trainNll, label: 'train', color: 'blue' },
      { key: METRIC.testNll, label: 'validation', color: 'purple' },
    ],
  },
  { id: 'lr', title: 'Learning rate', series: [{ key: METRIC.lr, label: 'lr', color: 'orange' }] },
];

/**
 * The chart of the KL to a second model, when the run logs one: a distillation run's `teacher_kl`
 * (and, with several teachers, each dataset's `teacher_kl/dataset_<i>`), a run with the KL penalty's
 * `kl_policy_base`. Lower teacher KL: the student samples what the teacher would.
 */
export function teacherKlCharts(keys: Iterable<string>): ChartSpec[] {
  const all = [...keys];
  const datasets = all.flatMap((k) => {
    const m = TEACHER_KL_OF.exec(k);
    return m ? [Number(m[1])] : [];
  });
  const colors: ChartColor[] = ['orange', 'green', 'purple', 'yellow', 'red'];
  const series: ChartSpec['series'] = [];
  if (all.includes(METRIC.teacherKl)) series.push({ key: METRIC.teacherKl, label: 'teacher KL', color: 'blue' });
  if (datasets.length > 1)
    for (const [j, i] of [...new Set(datasets)].sort((a, b) => a - b).entries()) series.push({ key: `teacher_kl/dataset_${i}`, label: `dataset ${i}`, color: colors[j % colors.length]! });
  if (all.includes(METRIC.klPolicyBase)) series.push({ key: METRIC.klPolicyBase, label: 'KL to reference', color: 'red' });
  return series.length ? [{ id: 'teacher-kl', title: all.includes(METRIC.teacherKl) ? 'KL to the teacher' : 'KL to the reference model', series }] : [];
}

/**
 * The charts of a run's inline evaluators (the spec's `evals`), one per evaluator, found from the
 * metric keys the run logged: a sampling evaluator's reward, pass@1 and pass@n (its largest k), an
 * NLL evaluator's NLL. Their names are letters, digits, '_', '.' and '-' (safe in an element id).
 */
export function inlineEvalCharts(keys: Iterable<string>): ChartSpec[] {
  return inlineEvalsIn(keys).map((e): ChartSpec => {
    if (e.kind === 'nll') return { id: `eval-${e.name}`, title: `Evaluator ${e.name}: NLL`, series: [{ key: INLINE_EVAL_KEY.nll(e.name), label: 'nll', color: 'purple' }] };
    const top = e.passAt.at(-1);
    return {
      id: `eval-${e.name}`,
      title: `Evaluator ${e.name}`,
      series: [
        { key: INLINE_EVAL_KEY.reward(e.name), label: 'reward', color: 'purple' },
        ...(e.passAt.includes(1) ? [{ key: INLINE_EVAL_KEY.passAt(e.name, 1), label: 'pass@1', color: 'green' as const }] : []),
        ...(top !== undefined && top > 1 ? [{ key: INLINE_EVAL_KEY.passAt(e.name, top), label: `pass@${top}`, color: 'blue' as const }] : []),
      ],
    };
  });
}

/**
 * The charts of a DPO run, when it logs `dpo_loss`: the cookbook's DPO metrics on the training batch
 * and (as test/…) on the validation pairs. Accuracy is the share of pairs whose chosen completion
 * gained more log-probability against the reference than the rejected one; the margin is
 * β·(ρ_chosen − ρ_rejected); the rewards are β·ρ of each side (both falling is DPO making both
 * completions less likely, which the chosen NLL shows).
 */
export function dpoCharts(keys: Iterable<string>): ChartSpec[] {
  const all = new Set(keys);
  if (!all.has('dpo_loss')) return [];
  return [
    { id: 'dpo-loss', title: 'DPO loss', series: [{ key: 'dpo_loss', label: 'train', color: 'blue' }, { key: 'test/dpo_loss', label: 'validation', color: 'purple' }] },
    { id: 'dpo-accuracy', title: 'Pair accuracy', unit: 'fraction', series: [{ key: 'accuracy', label: 'train', color: 'blue' }, { key: 'test/accuracy', label: 'validation', color: 'purple' }] },
    { id: 'dpo-margin', title: 'Implicit reward margin β·(ρ chosen − ρ rejected)', series: [{ key: 'margin', label: 'train', color: 'blue' }, { key: 'test/margin', label: 'validation', color: 'purple' }] },
    {
      id: 'dpo-rewards',
      title: 'Implicit rewards β·ρ',
      series: [
        { key: 'chosen_reward', label: 'chosen', color: 'green' },
        { key: 'rejected_reward', label: 'rejected', color: 'red' },
        { key: 'test/chosen_reward', label: 'chosen (validation)', color: 'blue' },
        { key: 'test/rejected_reward', label: 'rejected (validation)', color: 'orange' },
      ],
    },
    ...(all.has('chosen_nll') ? [{ id: 'dpo-chosen-nll', title: 'Chosen NLL per token', series: [{ key: 'chosen_nll', label: 'train', color: 'blue' as const }, { key: METRIC.testNll, label: 'validation', color: 'purple' as const }] }] : []),
  ];
}
