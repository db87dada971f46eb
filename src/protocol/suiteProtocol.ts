// The messages between the suite results panel (webview/suite) and its host
// (src/vscode/evals/suitePanel.ts), inside the envelope of panelProtocol.ts. One panel per suite file and
// one checkpoint (its result: one table grouped by layer, each entry's metric with its 95 % interval and
// n) or two (Compare Suites: both side by side, each entry's paired difference, its interval and the
// gate's verdict with its reasons, the second checkpoint playing production).
import * as z from 'zod';
import { Estimate } from './evalsProtocol';
import type { PanelProtocol } from './panelProtocol';

/** The layers in the order the table shows them. */
export const SUITE_LAYERS = ['training', 'benchmark', 'product'] as const;
export const SuiteLayerView = z.enum(SUITE_LAYERS);
export type SuiteLayerView = z.infer<typeof SuiteLayerView>;

export const SuiteColumnView = z.object({
  label: z.string(),
  /** a base model name or a tinker:// sampler path */
  path: z.string(),
  /** a result exists for the suite's current version */
  hasResult: z.boolean(),
  /** every entry finished */
  complete: z.boolean(),
  /** why the result no longer stands for the suite and checkpoint (store.ts resultStaleness) */
  stale: z.array(z.string()),
  updated_at: z.string().optional(),
});
export type SuiteColumnView = z.infer<typeof SuiteColumnView>;

export const SuiteCheckView = z.object({ rule: z.string(), passed: z.boolean(), reason: z.string() });

export const SuiteRowView = z.object({
  entry: z.string().min(1),
  layer: SuiteLayerView,
  metric: z.string(),
  goal: z.enum(['maximize', 'minimize']),
  /** the gate in words ("non-inferiority δ 0.02", "≥ 0.6") */
  gate: z.string(),
  /** one per column: the metric with its interval and the items behind it; null where there is no result */
  values: z.array(z.object({ estimate: Estimate, n: z.number().int().nonnegative() }).nullable()),
  /** Compare Suites: the first column against the second on the items both have (better positive) and the gate's verdict */
  comparison: z
    .object({
      diff: Estimate.optional(),
      items: z.number().int().nonnegative().optional(),
      passed: z.boolean(),
      checks: z.array(SuiteCheckView),
    })
    .optional(),
});
export type SuiteRowView = z.infer<typeof SuiteRowView>;

export const SuiteSnapshot = z.object({
  type: z.literal('snapshot'),
  suite: z.object({ name: z.string(), version: z.string(), file: z.string() }),
  columns: z.array(SuiteColumnView).min(1).max(2),
  rows: z.array(SuiteRowView),
  /** Compare Suites: every entry's gate passes */
  passed: z.boolean().optional(),
  /** what could not be read, for the message line */
  notes: z.array(z.string()),
});
export type SuiteSnapshot = z.infer<typeof SuiteSnapshot>;

export const ToWebview = z.discriminatedUnion('type', [SuiteSnapshot, z.object({ type: z.literal('error'), message: z.string() })]);
export type ToWebview = z.infer<typeof ToWebview>;

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('openSuite') }),
  /** an entry's eval results (its folder under the result) of one column */
  z.object({ type: z.literal('openEntry'), entry: z.string().min(1).max(500), column: z.number().int().min(0).max(1) }),
  /** run the suite on a column's checkpoint (resumes what is missing) */
  z.object({ type: z.literal('run'), column: z.number().int().min(0).max(1) }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const SuitePanelState = z.object({
  suiteFile: z.string().min(1),
  /** one checkpoint (its result) or two (candidate, then the one it is compared with) */
  checkpoints: z.array(z.string().min(1)).min(1).max(2),
});
export type SuitePanelState = z.infer<typeof SuitePanelState>;

export const SuiteRequests = {};

export const SuiteProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: SuiteRequests,
  state: SuitePanelState,
} satisfies PanelProtocol;

/** The rows of each layer, layers in table order, entries in the suite's order; empty layers left out. */
export function rowsByLayer(rows: readonly SuiteRowView[]): Array<{ layer: SuiteLayerView; rows: SuiteRowView[] }> {
  return SUITE_LAYERS.map((layer) => ({ layer, rows: rows.filter((r) => r.layer === layer) })).filter((g) => g.rows.length > 0);
}

/** Whether a metric is a fraction shown as a percentage (pass@k). */
export function isPercentMetric(metric: string): boolean {
  return /^pass@\d+$/.test(metric);
}
