// What the Compare Runs host sends, from the runs it holds (no vscode: the panel and the bench share
// it): the runs as the table shows them (config, results, seed group, the sweep's rank, metric keys;
// no points), the sweep's views, and the `charts` reply, the charts in view with each line smoothed
// on its full rows and then decimated to about the chart's pixel width (decimateLines), from the
// columns already in memory: changing the x axis is a pass over arrays, never a read.
import * as path from 'node:path';
import { configValueText, decimateLines, flattenConfig, parallelCoordinates, runResults, seedGroups, sensitivity, xValues, type ChartLine, type CompareKind, type ResultColumn, type RunColumns, type XAxis } from '../../protocol/compareData';
import type { ChartLinesWire, ChartsParams, CompareRun, SweepView } from '../../protocol/compareProtocol';
import type { RunStatus } from '../../protocol/runProgress';
import { emaSmooth } from '../../protocol/smoothing';
import { rankRuns, type RankedRun } from './ranking';
import { runKind } from '../kinds/registry';
import { runKindOfConfig } from '../spec/kinds';
import type { SweepManifest } from './sweepManifest';

/** A run as the panel holds it. */
export interface HeldRun {
  id: string;
  color: number;
  config: Record<string, unknown>;
  /** the run's kind (config.json's run_kind) and its kind's result columns (the kinds table's); unknown: the common columns only */
  kind?: { id: CompareKind; columns: readonly ResultColumn[] };
  columns: RunColumns;
  status: RunStatus;
}

/** A run's kind as the panel holds it, from its config.json (run_kind; none: a GRPO run from before SFT); undefined for a kind this build does not have. */
export async function heldKindOf(config: unknown): Promise<HeldRun['kind']> {
  const id = runKindOfConfig(config);
  return id === undefined ? undefined : { id, columns: (await runKind(id)).compareColumns };
}

/** One metric's column as the ranking's rows. */
function rowsOf(c: RunColumns, metric: string): { step: number; [k: string]: unknown }[] {
  const col = c.cols[metric];
  if (!col) return [];
  return c.steps.map((step, i) => ({ step, [metric]: col[i] ?? undefined }));
}

export function ranking(runs: readonly HeldRun[], manifest: SweepManifest | undefined): Map<string, RankedRun> | undefined {
  if (!manifest) return undefined;
  const ranks = rankRuns(
    runs.map((r) => ({ id: r.id, rows: rowsOf(r.columns, manifest.metric.name) })),
    manifest.metric,
  );
  return new Map(ranks.map((r) => [r.id, r]));
}

/** The runs as the webview's table and chart list take them, in the given order. */
export function wireRuns(runs: readonly HeldRun[], manifest: SweepManifest | undefined): CompareRun[] {
  const ranks = ranking(runs, manifest);
  const groups = seedGroups(runs.map((r) => ({ id: r.id, config: r.config })));
  const groupOf = new Map<string, string>();
  groups.forEach((g, i) => g.ids.forEach((id) => groupOf.set(id, String(i))));
  return runs.map((r) => {
    const flat = flattenConfig(r.config);
    const config: Record<string, string> = {};
    for (const [k, v] of Object.entries(flat)) config[k] = configValueText(v);
    const rank = ranks?.get(r.id);
    return {
      id: r.id,
      name: path.basename(r.id),
      color: r.color,
      status: r.status,
      config,
      results: runResults(r.columns, r.kind?.id ?? 'unknown', r.kind?.columns ?? []),
      resultColumns: (r.kind?.columns ?? []).map((c) => ({ id: c.id, label: c.label })),
      seedGroup: groupOf.get(r.id) ?? r.id,
      ...(rank?.rank !== undefined ? { rank: rank.rank } : {}),
      ...(rank?.best !== undefined ? { best: rank.best } : {}),
      keys: Object.keys(r.columns.cols),
    };
  });
}

export function sweepView(runs: readonly HeldRun[], manifest: SweepManifest | undefined): SweepView | undefined {
  if (!manifest) return undefined;
  const ranks = ranking(runs, manifest);
  const byName = new Map(manifest.runs.map((r) => [r.name, r]));
  const points = runs.map((r) => {
    const entry = byName.get(path.basename(r.id));
    return { id: r.id, point: entry?.point ?? {}, ...(entry?.seed !== undefined ? { seed: entry.seed } : {}), ...(ranks?.get(r.id)?.best !== undefined ? { value: ranks.get(r.id)!.best } : {}) };
  });
  return {
    name: manifest.name,
    metric: manifest.metric,
    swept: manifest.swept,
    sensitivity: sensitivity(points, manifest.swept),
    ...(manifest.swept.length >= 2 ? { parallel: parallelCoordinates(points, manifest.swept, manifest.metric.name) } : {}),
  };
}

/**
 * Smoothed columns kept between requests (changing the x axis does not smooth again): per run and
 * key, the last smoothing asked for. A run whose columns object changed (new rows) is smoothed again.
 */
export class SmoothedCache {
  private readonly byRun = new WeakMap<RunColumns, Map<string, { weight: number; y: (number | null)[] }>>();

  get(run: HeldRun, key: string, weight: number): (number | null)[] {
    let m = this.byRun.get(run.columns);
    if (!m) {
      m = new Map();
      this.byRun.set(run.columns, m);
    }
    const hit = m.get(key);
    if (hit && hit.weight === weight) return hit.y;
    const y = emaSmooth(run.columns.cols[key] ?? [], weight);
    m.set(key, { weight, y });
    return y;
  }
}

/** Values as ChartLines' Float64s (x) or Float32s (y, steps): null → NaN, base64. */
export function encodeFloats(values: readonly (number | null)[], bytesPer: 4 | 8): string {
  const f = bytesPer === 8 ? new Float64Array(values.length) : new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    f[i] = v === null || v === undefined ? NaN : v;
  }
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/** Above this many lines in one chart, its lines keep a min and a max per three pixel columns, not two. */
export const DENSE_LINES = 16;

/** The charts' points: per key, every run that has it, smoothed on its full rows, then decimated to about `width` points. */
export function chartLines(runs: readonly HeldRun[], p: ChartsParams, smoothed?: SmoothedCache): ChartLinesWire[] {
  const xs = new Map<string, (number | null)[]>();
  const xOf = (r: HeldRun) => {
    let x = xs.get(r.id);
    if (!x) {
      x = xValues(r.columns, p.xAxis as XAxis);
      xs.set(r.id, x);
    }
    return x;
  };
  return p.keys.map((key) => {
    const shown = runs.filter((r) => r.columns.cols[key]);
    // two points (a bucket's min and max) per two pixel columns; per three when more than 16 lines
    // overlap (drawing time grows with lines × points, and so many lines hide the third column's detail)
    const buckets = Math.max(8, Math.ceil(p.width / (shown.length > DENSE_LINES ? 3 : 2)));
    const lines: ChartLine[] = shown.map((r) => {
      const col = r.columns.cols[key]!;
      return { x: xOf(r), y: p.smoothing > 0 ? (smoothed ? smoothed.get(r, key, p.smoothing) : emaSmooth(col, p.smoothing)) : col, steps: r.columns.steps };
    });
    const d = decimateLines(lines, buckets);
    return { key, n: d.x.length, x: encodeFloats(d.x, 8), runs: shown.map((r, i) => ({ id: r.id, y: encodeFloats(d.ys[i]!, 4), steps: encodeFloats(d.steps[i]!, 4) })) };
  });
}
