// The messages between the Compare Runs panel (webview/compare) and its host
// (src/vscode/experiments/comparePanel.ts), inside the envelope of panelProtocol.ts. The host sends a
// snapshot when the webview is ready (every run's config, results and metric keys, the config diff,
// the sweep's ranking and views), then one `run` message per run whose metrics grew. The points
// travel only on request (`charts`): the charts in view, each line decimated to about the chart's
// pixel width, so the first paint never waits for 4 M points.
import * as z from 'zod';
import type { PanelProtocol } from './panelProtocol';
import { RUN_STATUSES } from './runProgress';

const Num = z.number().nullable();

export const XAxisId = z.enum(['step', 'wall', 'tokens', 'cost']);

export const CompareResults = z.object({
  /** the kinds table's id of the run's kind */
  kind: z.string(),
  steps: z.number().int(),
  lastStep: z.number().int().optional(),
  wallTime: z.number().optional(),
  tokensTrained: z.number().optional(),
  costUsd: z.number().optional(),
  tokensTotal: z.number().optional(),
  /** the kind's result columns (resultColumns) by id */
  values: z.record(z.string(), z.number()),
});
export type CompareResults = z.infer<typeof CompareResults>;

export const CompareRun = z.object({
  /** the run directory (absolute): the run's identity */
  id: z.string(),
  name: z.string(),
  /** the run's colour: an index into the palette, stable for the panel's life */
  color: z.number().int().nonnegative(),
  status: z.enum(RUN_STATUSES),
  /** config.json flattened to dot paths, values as text */
  config: z.record(z.string(), z.string()),
  results: CompareResults,
  /** the run's kind's result columns, in table order (the steps, wall time and tokens columns follow for every kind) */
  resultColumns: z.array(z.object({ id: z.string(), label: z.string() })),
  /** runs with the same key differ only by seed */
  seedGroup: z.string(),
  /** the sweep's rank (1 = best) and the run's best value of the sweep's metric */
  rank: z.number().int().optional(),
  best: z.number().optional(),
  /** the run's metric keys (one chart each; the points come with the `charts` request) */
  keys: z.array(z.string()),
});
export type CompareRun = z.infer<typeof CompareRun>;

const SensitivityField = z.object({
  field: z.string(),
  numeric: z.boolean(),
  categories: z.array(z.string()).optional(),
  log: z.boolean(),
  points: z.array(z.object({ id: z.string(), x: z.number(), y: z.number(), seed: z.number().optional() })),
  mean: z.array(z.object({ x: z.number(), y: z.number(), n: z.number() })),
});

export const SweepView = z.object({
  name: z.string(),
  metric: z.object({ name: z.string(), goal: z.enum(['maximize', 'minimize']) }),
  swept: z.array(z.string()),
  sensitivity: z.array(SensitivityField),
  parallel: z
    .object({
      axes: z.array(z.object({ name: z.string(), numeric: z.boolean(), log: z.boolean(), min: z.number(), max: z.number(), categories: z.array(z.string()).optional() })),
      lines: z.array(z.object({ id: z.string(), pos: z.array(Num), value: z.number().optional() })),
    })
    .optional(),
});
export type SweepView = z.infer<typeof SweepView>;

export const ToWebview = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('snapshot'),
    title: z.string(),
    runs: z.array(CompareRun),
    differing: z.array(z.string()),
    identical: z.array(z.string()),
    sweep: SweepView.optional(),
    problems: z.array(z.string()),
  }),
  /** one run changed (new rows, a new status): replaces that run */
  z.object({ type: z.literal('run'), run: CompareRun, sweep: SweepView.optional() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

export const FromWebview = z.discriminatedUnion('type', [
  /** drop a run from the comparison */
  z.object({ type: z.literal('removeRun'), id: z.string() }),
  /** open two runs' config.json in the diff editor */
  z.object({ type: z.literal('diffConfigs'), a: z.string(), b: z.string() }),
  /** the sample comparison (tinker.compareRuns) of two runs */
  z.object({ type: z.literal('compareSamples'), a: z.string(), b: z.string() }),
  /** open a run's W&B page (its config.json's wandb.url) */
  z.object({ type: z.literal('openWandb'), id: z.string() }),
  z.object({ type: z.literal('webviewError'), message: z.string().max(4000) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

/** What the webview keeps with setState, and the serializer receives after a window reload. */
export const ComparePanelState = z.object({
  runDirs: z.array(z.string().min(1)),
  sweepDir: z.string().min(1).optional(),
  xAxis: XAxisId.optional(),
  smoothing: z.number().min(0).max(0.99).optional(),
  hidden: z.array(z.string()).optional(),
  groupSeeds: z.boolean().optional(),
  /** the sweep's sensitivity and parallel coordinates folded away */
  sweepCollapsed: z.boolean().optional(),
});
export type ComparePanelState = z.infer<typeof ComparePanelState>;

// the browser's and Node's (≥ 16) global; src/protocol compiles without the DOM's or Node's types
declare const atob: (data: string) => string;

/** base64 of little-endian Float64 (8 bytes each) or Float32 (4) values → the values, NaN as null (uPlot draws null as a gap); undefined when it is not that. */
export function decodeFloats(b64: string, bytesPer: 4 | 8): (number | null)[] | undefined {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    return undefined;
  }
  if (bin.length % bytesPer !== 0) return undefined;
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const f = bytesPer === 8 ? new Float64Array(bytes.buffer, 0, bytes.length / 8) : new Float32Array(bytes.buffer, 0, bytes.length / 4);
  const out = new Array<number | null>(f.length);
  for (let i = 0; i < f.length; i++) {
    const v = f[i]!;
    out[i] = v === v ? v : null;
  }
  return out;
}

/** Float values as base64 on the wire (no number-to-text and back), the values once parsed. */
function floats(bytesPer: 4 | 8) {
  return z
    .string()
    .max(200_000_000)
    .transform((b64, ctx) => {
      const values = decodeFloats(b64, bytesPer);
      if (values) return values;
      ctx.addIssue({ code: 'custom', message: `not base64 of Float${bytesPer * 8} values` });
      return z.NEVER;
    });
}

/**
 * One chart's lines, decimated (compareData.ts decimateLines): `n` shared x values and, per run, its
 * y and the step drawn at each x (null: none). On the wire each is base64 of n values (NaN: none):
 * x as Float64 (token counts and wall times keep every digit), y and steps as Float32 (half the
 * bytes of the reply: a chart shows four significant digits, and steps are whole numbers far below
 * 2^24); parsing decodes them and checks their lengths (a wrong one is named by its path).
 */
export const ChartLines = z
  .object({
    key: z.string(),
    n: z.number().int().nonnegative(),
    x: floats(8),
    runs: z.array(z.object({ id: z.string(), y: floats(4), steps: floats(4) })),
  })
  .superRefine((c, ctx) => {
    const check = (v: unknown[], p: (string | number)[]) => {
      if (v.length !== c.n) ctx.addIssue({ code: 'custom', path: p, message: `${v.length} values where the chart has ${c.n}` });
    };
    check(c.x, ['x']);
    c.runs.forEach((r, i) => {
      check(r.y, ['runs', i, 'y']);
      check(r.steps, ['runs', i, 'steps']);
    });
  });
/** A chart's lines as the host sends them (base64). */
export type ChartLinesWire = z.input<typeof ChartLines>;
/** A chart's lines as numbers (parsed). */
export type DecodedChartLines = z.output<typeof ChartLines>;

export const ChartsParams = z.object({
  keys: z.array(z.string()).max(500),
  xAxis: XAxisId,
  smoothing: z.number().min(0).max(0.99),
  /** the charts' plot width in CSS pixels: about one point per pixel column is kept */
  width: z.number().int().min(16).max(16_384),
});
export type ChartsParams = z.infer<typeof ChartsParams>;

export const CompareRequests = {
  /** the points of these charts on this x axis, smoothed, decimated to the width (every run that has the key; hiding a run is the webview's) */
  charts: { params: ChartsParams, result: z.object({ charts: z.array(ChartLines) }) },
  /** a chart point was clicked: open that run's group breakdown at that iteration */
  openIteration: { params: z.object({ runDir: z.string(), step: z.number().int().nonnegative() }), result: z.object({ opened: z.boolean() }) },
  /** "Export CSV": the host asks where and writes the file */
  exportCsv: { params: z.object({ csv: z.string().max(50_000_000) }), result: z.object({ file: z.string().optional() }) },
};

export const CompareProtocol = {
  toWebview: ToWebview,
  fromWebview: FromWebview,
  requests: CompareRequests,
  state: ComparePanelState,
} satisfies PanelProtocol;
