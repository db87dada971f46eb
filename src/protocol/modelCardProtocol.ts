// The messages between the model card panel (webview/modelcard) and its host
// (src/vscode/models/modelCardPanel.ts), inside the envelope of panelProtocol.ts. One panel per model
// version of the workspace's registry: its MODELS.md entry (recipe, data, status history, expiry) and
// each suite metric across the versions of the model, with the 95 % intervals drawn.
import * as z from 'zod';
import type { PanelProtocol } from './panelProtocol';

export const ModelStatus = z.enum(['candidate', 'staging', 'production', 'retired']);
export type ModelStatus = z.infer<typeof ModelStatus>;

/** A metric value with its 95 % interval (none with fewer than 2 items). */
export const CardEstimate = z.object({ value: z.number(), lo: z.number().optional(), hi: z.number().optional() });
export type CardEstimate = z.infer<typeof CardEstimate>;

/** One line of a card's key/value list (paths, base model, renderer …). */
const Field = z.object({ label: z.string(), value: z.string() });

export const RecipeStepView = z.object({
  /** the run's kind (sft, grpo, dpo …) */
  kind: z.string(),
  run: z.string(),
  learning_rate: z.number().optional(),
  steps: z.number().optional(),
  /** anything else the step says (LoRA rank, batch …) */
  detail: z.string().optional(),
});

export const DataFileView = z.object({ file: z.string(), lines: z.number().int().nonnegative().optional(), sha256: z.string().optional() });

export const HistoryView = z.object({ at: z.string(), status: ModelStatus, by: z.string().optional(), reason: z.string().optional(), anyway: z.boolean().optional() });

/** One suite entry's metric on each version of the model that has a result. */
export const MetricSeriesView = z.object({
  entry: z.string(),
  metric: z.string(),
  layer: z.string(),
  goal: z.enum(['maximize', 'minimize']),
  points: z.array(z.object({ id: z.string(), status: ModelStatus, estimate: CardEstimate, n: z.number().int().nonnegative(), current: z.boolean() })),
});
export type MetricSeriesView = z.infer<typeof MetricSeriesView>;

/** The promotion gate's verdict of this version against production, paired on the same items. */
export const GateView = z.object({
  against: z.string(),
  passed: z.boolean(),
  /** every reason with its numbers, one per line (failed ones first) */
  reasons: z.array(z.object({ passed: z.boolean(), text: z.string() })),
});
export type GateView = z.infer<typeof GateView>;

export const ModelCardSnapshot = z.object({
  type: z.literal('snapshot'),
  /** `<name>@v<N>` */
  id: z.string().min(1),
  registryFile: z.string().min(1),
  status: ModelStatus,
  fields: z.array(Field),
  recipe: z.array(RecipeStepView),
  data: z.array(DataFileView),
  history: z.array(HistoryView),
  /** the checkpoint's expiry, when it has a TTL; `flagged` when a production model's checkpoint expires */
  expiry: z.object({ at: z.string(), flagged: z.boolean() }).optional(),
  suite: z.object({ name: z.string(), version: z.string() }).optional(),
  metrics: z.array(MetricSeriesView),
  gate: GateView.optional(),
  /** the version's MODELS.md entry as written */
  markdown: z.string(),
  /** what the card's buttons may offer */
  can: z.object({ promote: z.boolean(), retire: z.boolean(), playground: z.boolean(), clearTtl: z.boolean(), compare: z.boolean() }),
});
export type ModelCardSnapshot = z.infer<typeof ModelCardSnapshot>;

export const ToWebview = z.discriminatedUnion('type', [ModelCardSnapshot, z.object({ type: z.literal('error'), message: z.string() })]);
export type ToWebview = z.infer<typeof ToWebview>;

export const CardAction = z.enum(['promote', 'retire', 'runSuite', 'openInPlayground', 'compare', 'copyPath', 'clearTtl', 'openModelsMd']);
export type CardAction = z.infer<typeof CardAction>;

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('action'), action: CardAction }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export const ModelCardPanelState = z.object({ id: z.string().min(1).max(300), registryFile: z.string().min(1).max(4000) });
export type ModelCardPanelState = z.infer<typeof ModelCardPanelState>;

export const ModelCardRequests = {};

export const ModelCardProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: ModelCardRequests,
  state: ModelCardPanelState,
} satisfies PanelProtocol;

/** The y range of a series' chart: every point's interval, padded, never empty. */
export function seriesRange(points: ReadonlyArray<{ estimate: CardEstimate }>): { lo: number; hi: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of points) {
    lo = Math.min(lo, p.estimate.lo ?? p.estimate.value);
    hi = Math.max(hi, p.estimate.hi ?? p.estimate.value);
  }
  if (!Number.isFinite(lo)) return { lo: 0, hi: 1 };
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 0.05;
  return { lo: lo - pad, hi: hi + pad };
}
