// The pure part of the Compare Runs panel, in src/protocol because the host and the webview both
// run it: the config diff (config.json flattened to dot paths), the result columns by kind, metric
// alignment on a common x axis (step, wall time, tokens trained), seed groups (runs that differ only
// by seed, drawn as one line with a min–max band), and the sweep's sensitivity view and parallel coordinates. Everything works on columns (columnCache.ts), never on
// the rows again, so toggling a run or changing the x axis is a pass over arrays.
import { METRIC } from './metricKeys';

/** A run's metrics as columns: `steps[i]` is the i-th step's number; `cols[key][i]` its value (null: not logged). */
export interface RunColumns {
  steps: number[];
  cols: Record<string, (number | null)[]>;
}

// ---------------------------------------------------------------------------------------------------
// Config diff

/** Nested objects flattened to dot paths; arrays and scalars are leaves (arrays compared as JSON). */
export function flattenConfig(value: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix) out[prefix] = {};
    for (const [k, v] of entries) flattenConfig(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = value;
  }
  return out;
}

/** A leaf's value as the table shows it and as the diff compares it. */
export function configValueText(v: unknown): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

export interface ConfigDiff {
  /** paths whose value is not the same in every run (absent in some counts as different), sorted */
  differing: string[];
  /** paths every run has with the same value, sorted */
  identical: string[];
  /** paths that only place or date a run (log_path, created_at, …): they differ between any two runs, so they are shown only with "show all", sorted */
  bookkeeping: string[];
  /** each run's flattened config, in the order given */
  flat: Record<string, unknown>[];
}

/** Config paths a run's writer fills with where and when it ran (ours and the cookbook's), not a setting. */
const RUN_BOOKKEEPING = /^(log_path|created_at|created|started_at)$/;

export function configDiff(configs: readonly unknown[]): ConfigDiff {
  const flat = configs.map((c) => flattenConfig(c ?? {}));
  const paths = new Set<string>();
  for (const f of flat) for (const k of Object.keys(f)) paths.add(k);
  const differing: string[] = [];
  const identical: string[] = [];
  const bookkeeping: string[] = [];
  for (const p of [...paths].sort()) {
    if (RUN_BOOKKEEPING.test(p)) {
      bookkeeping.push(p);
      continue;
    }
    const first = flat[0] && Object.hasOwn(flat[0], p) ? configValueText(flat[0][p]) : undefined;
    const same = flat.every((f) => Object.hasOwn(f, p) && configValueText(f[p]) === first);
    (same && flat.length > 0 ? identical : differing).push(p);
  }
  return { differing, identical, bookkeeping, flat };
}

// ---------------------------------------------------------------------------------------------------
// Result columns

/** A run's kind: the kinds table's id (src/core/kinds/registry.ts), which also says its result columns. */
export type CompareKind = string;

/**
 * A result column a kind declares (its descriptor's compareColumns): the last value of a metric, its
 * best by `goal`, or the step of that best. The steps, wall time and tokens columns are every kind's.
 */
export interface ResultColumn {
  id: string;
  label: string;
  metric: string;
  pick: 'last' | 'best' | 'bestStep';
  goal?: 'maximize' | 'minimize';
}

/** What a run's results row holds: the columns every kind has, and its kind's columns by id. */
export interface RunResults {
  kind: CompareKind;
  /** number of steps with a row */
  steps: number;
  /** the last step's number */
  lastStep?: number;
  /** seconds: the sum of the steps' `time/total` */
  wallTime?: number;
  /** the last `progress/tokens_trained` */
  tokensTrained?: number;
  /** the last `cost/total_usd` (an estimate) and `usage/total_tokens` (every billing category) */
  costUsd?: number;
  tokensTotal?: number;
  /** the kind's columns by id (a column with no value yet is absent) */
  values: Record<string, number>;
}

/** The columns every kind's row has, after its own. */
export const COMMON_RESULT_COLUMNS: readonly { id: 'steps' | 'wallTime' | 'tokensTrained' | 'costUsd' | 'tokensTotal'; label: string }[] = [
  { id: 'steps', label: 'steps' },
  { id: 'wallTime', label: 'wall time (s)' },
  { id: 'tokensTrained', label: 'tokens trained' },
  { id: 'costUsd', label: 'cost $ (estimate)' },
  { id: 'tokensTotal', label: 'tokens (all billed)' },
];

function finite(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** The last finite value of a column. */
export function lastValue(col: readonly (number | null)[] | undefined): number | undefined {
  if (!col) return undefined;
  for (let i = col.length - 1; i >= 0; i--) if (finite(col[i])) return col[i]!;
  return undefined;
}

/** The best finite value of a column by goal, and the step it was reached at (the first such step). */
export function bestOf(columns: RunColumns, key: string, goal: 'maximize' | 'minimize'): { value: number; step: number } | undefined {
  const col = columns.cols[key];
  if (!col) return undefined;
  let best: { value: number; step: number } | undefined;
  for (let i = 0; i < col.length; i++) {
    const v = col[i];
    if (!finite(v)) continue;
    if (!best || (goal === 'maximize' ? v > best.value : v < best.value)) best = { value: v, step: columns.steps[i]! };
  }
  return best;
}

/** A run's results: the common columns, and the values of its kind's columns (`kindColumns`). */
export function runResults(columns: RunColumns, kind: CompareKind, kindColumns: readonly ResultColumn[]): RunResults {
  const time = columns.cols[METRIC.timeTotal];
  let wallTime: number | undefined;
  if (time) {
    wallTime = 0;
    for (const v of time) if (finite(v)) wallTime += v;
  }
  const r: RunResults = {
    kind,
    steps: columns.steps.length,
    lastStep: columns.steps.at(-1),
    wallTime,
    tokensTrained: lastValue(columns.cols[METRIC.tokensTrained]),
    values: {},
  };
  // absent, not undefined, for a run that logs no usage (older runs)
  const costUsd = lastValue(columns.cols[METRIC.costTotal]);
  const tokensTotal = lastValue(columns.cols[METRIC.usageTotal]);
  if (costUsd !== undefined) r.costUsd = costUsd;
  if (tokensTotal !== undefined) r.tokensTotal = tokensTotal;
  for (const c of kindColumns) {
    const best = c.pick === 'last' ? undefined : bestOf(columns, c.metric, c.goal ?? 'maximize');
    const v = c.pick === 'last' ? lastValue(columns.cols[c.metric]) : c.pick === 'best' ? best?.value : best?.step;
    if (v !== undefined) r.values[c.id] = v;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Metric keys and the x axis

/** 'cost': the run's cumulative estimated dollars, so a reward chart reads as reward per dollar spent */
export type XAxis = 'step' | 'wall' | 'tokens' | 'cost';

/** The group of the keys without a prefix (SFT's train_mean_nll …, DPO's dpo_loss, accuracy, margin …); no prefix group is named so (theirs end in "/"). */
export const BARE_KEYS_GROUP = 'bare';

/** The groups the chart list shows, in order; the bare keys form their own group. */
export const METRIC_GROUPS = ['env/', 'test/', 'optim/', 'time/', 'progress/', BARE_KEYS_GROUP] as const;

export function metricGroup(key: string): string {
  for (const g of METRIC_GROUPS) if (g !== BARE_KEYS_GROUP && key.startsWith(g)) return g;
  return key.includes('/') ? `${key.slice(0, key.indexOf('/') + 1)}` : BARE_KEYS_GROUP;
}

/** The union of the runs' metric keys, grouped by prefix (METRIC_GROUPS first, others after), sorted within. */
export function metricKeyGroups(runs: readonly RunColumns[]): { group: string; keys: string[] }[] {
  return metricGroupsOfKeys(runs.map((r) => Object.keys(r.cols)));
}

/** metricKeyGroups from each run's list of metric keys. */
export function metricGroupsOfKeys(runKeys: readonly (readonly string[])[]): { group: string; keys: string[] }[] {
  const keys = new Set<string>();
  for (const r of runKeys) for (const k of r) keys.add(k);
  const byGroup = new Map<string, string[]>();
  for (const k of [...keys].sort()) {
    const g = metricGroup(k);
    const list = byGroup.get(g) ?? [];
    list.push(k);
    byGroup.set(g, list);
  }
  const order = (g: string) => {
    const i = (METRIC_GROUPS as readonly string[]).indexOf(g);
    return i < 0 ? METRIC_GROUPS.length : i;
  };
  return [...byGroup.entries()].sort((a, b) => order(a[0]) - order(b[0]) || a[0].localeCompare(b[0])).map(([group, ks]) => ({ group, keys: ks }));
}

/**
 * A run's x values on an axis: the step; the wall time (seconds since the run's start: the running
 * sum of `time/total`, the end of each step); `progress/tokens_trained`; or `cost/total_usd`. null where the run has
 * no value for that axis at that step (that point is not drawn).
 */
export function xValues(columns: RunColumns, axis: XAxis): (number | null)[] {
  if (axis === 'step') return columns.steps.slice();
  if (axis === 'tokens' || axis === 'cost') return (columns.cols[axis === 'cost' ? METRIC.costTotal : METRIC.tokensTrained] ?? columns.steps.map(() => null)).map((v) => (finite(v) ? v : null));
  const time = columns.cols[METRIC.timeTotal];
  if (!time) return columns.steps.map(() => null);
  let t = 0;
  return time.map((v) => {
    if (!finite(v)) return null;
    t += v;
    return t;
  });
}

/** One chart's data in uPlot's aligned form: a shared sorted x, one y array per series (null: no point). */
export interface AlignedSeries {
  x: number[];
  ys: (number | null)[][];
}

/** Aligns the series of several runs (each its own x and y) on the union of their x values. */
export function alignSeries(series: readonly { x: readonly (number | null)[]; y: readonly (number | null)[] | undefined }[]): AlignedSeries {
  const xs = new Set<number>();
  for (const s of series) {
    if (!s.y) continue;
    for (let i = 0; i < s.x.length; i++) if (s.x[i] !== null && finite(s.y[i])) xs.add(s.x[i]!);
  }
  const x = [...xs].sort((a, b) => a - b);
  const index = new Map<number, number>();
  x.forEach((v, i) => index.set(v, i));
  const ys = series.map((s) => {
    const out: (number | null)[] = new Array<number | null>(x.length).fill(null);
    if (!s.y) return out;
    for (let i = 0; i < s.x.length; i++) {
      const xi = s.x[i];
      const yi = s.y[i];
      if (xi !== null && xi !== undefined && finite(yi)) out[index.get(xi)!] = yi;
    }
    return out;
  });
  return { x, ys };
}

// ---------------------------------------------------------------------------------------------------
// Decimation: a chart draws about one point per pixel column, whatever the runs' lengths

/** One run's line on a chart: its x and y per row (null: no point) and each row's step. */
export interface ChartLine {
  x: readonly (number | null)[];
  y: readonly (number | null)[];
  steps: readonly number[];
}

/** Lines aligned on one shared x (uPlot's form) with, per line and x, the step of the row drawn there. */
export interface DecimatedLines {
  x: number[];
  ys: (number | null)[][];
  steps: (number | null)[][];
}

function alignExact(lines: readonly ChartLine[]): DecimatedLines {
  const { x, ys } = alignSeries(lines);
  const index = new Map<number, number>();
  x.forEach((v, i) => index.set(v, i));
  const steps = lines.map((l) => {
    const out: (number | null)[] = new Array<number | null>(x.length).fill(null);
    for (let i = 0; i < l.x.length; i++) {
      const xi = l.x[i];
      if (xi !== null && xi !== undefined && finite(l.y[i])) out[index.get(xi)!] = l.steps[i] ?? null;
    }
    return out;
  });
  return { x, ys, steps };
}

/**
 * Min–max decimation on a shared grid. The x range is cut into `buckets` equal buckets; in each, a
 * line keeps its lowest and its highest point (in x order: peaks and dips stay), drawn at one of the
 * bucket's two shared x slots (the first slot at the smallest x any line keeps first there, the second
 * at the largest x any line keeps second), so every line sits on one short x array however different
 * the runs' x values are (wall time, tokens). When all lines together have no more points than
 * 2 × buckets the lines are aligned exactly instead (the union of their x values, nothing dropped).
 */
export function decimateLines(lines: readonly ChartLine[], buckets: number): DecimatedLines {
  const B = Math.max(1, Math.floor(buckets));
  let lo = Infinity;
  let hi = -Infinity;
  let total = 0;
  // the loops below run over every row of every run on each request: plain loops, no calls (`v - v !== 0`: NaN or ±Infinity)
  for (const l of lines) {
    const xs = l.x;
    const ys = l.y;
    const n = xs.length;
    for (let i = 0; i < n; i++) {
      const xi = xs[i];
      const yi = ys[i];
      if (xi === null || xi === undefined || yi === null || yi === undefined || yi - yi !== 0) continue;
      total++;
      if (xi < lo) lo = xi;
      if (xi > hi) hi = xi;
    }
  }
  if (total <= 2 * B || !(hi > lo)) return alignExact(lines);
  const perX = B / (hi - lo);
  const first = lines.map(() => new Int32Array(B).fill(-1));
  const second = lines.map(() => new Int32Array(B).fill(-1));
  const slot1 = new Float64Array(B).fill(Infinity);
  const slot2 = new Float64Array(B).fill(-Infinity);
  const minI = new Int32Array(B);
  const maxI = new Int32Array(B);
  lines.forEach((l, r) => {
    minI.fill(-1);
    maxI.fill(-1);
    const y = l.y as (number | null)[];
    const xs = l.x;
    const n = xs.length;
    // the current bucket's extremes in locals (x mostly increases: a bucket's rows come together)
    let cur = -1;
    let lowI = -1;
    let highI = -1;
    let low = 0;
    let high = 0;
    for (let i = 0; i < n; i++) {
      const xi = xs[i];
      const yi = y[i];
      if (xi === null || xi === undefined || yi === null || yi === undefined || yi - yi !== 0) continue;
      let b = ((xi - lo) * perX) | 0;
      if (b >= B) b = B - 1;
      if (b !== cur) {
        if (cur >= 0) {
          minI[cur] = lowI;
          maxI[cur] = highI;
        }
        cur = b;
        lowI = minI[b]!;
        highI = maxI[b]!;
        if (lowI < 0) {
          lowI = highI = i;
          low = high = yi;
          continue;
        }
        low = y[lowI]!;
        high = y[highI]!;
      }
      if (yi < low) {
        low = yi;
        lowI = i;
      }
      if (yi > high) {
        high = yi;
        highI = i;
      }
    }
    if (cur >= 0) {
      minI[cur] = lowI;
      maxI[cur] = highI;
    }
    const f = first[r]!;
    const s = second[r]!;
    for (let b = 0; b < B; b++) {
      const a = minI[b]!;
      if (a < 0) continue;
      const c = maxI[b]!;
      if (a === c) {
        f[b] = a;
      } else {
        const xa = l.x[a]!;
        const xc = l.x[c]!;
        const [p, q] = xa < xc || (xa === xc && a < c) ? [a, c] : [c, a];
        f[b] = p;
        s[b] = q;
        if (l.x[q]! > slot2[b]!) slot2[b] = l.x[q]!;
      }
      if (l.x[f[b]!]! < slot1[b]!) slot1[b] = l.x[f[b]!]!;
    }
  });
  const x: number[] = [];
  const at1 = new Int32Array(B).fill(-1);
  const at2 = new Int32Array(B).fill(-1);
  for (let b = 0; b < B; b++) {
    if (slot1[b]! !== Infinity) {
      at1[b] = x.length;
      x.push(slot1[b]!);
    }
    if (slot2[b]! !== -Infinity) {
      at2[b] = x.length;
      x.push(slot2[b]!);
    }
  }
  const ys: (number | null)[][] = [];
  const steps: (number | null)[][] = [];
  lines.forEach((l, r) => {
    const yo: (number | null)[] = new Array<number | null>(x.length).fill(null);
    const so: (number | null)[] = new Array<number | null>(x.length).fill(null);
    const f = first[r]!;
    const s = second[r]!;
    for (let b = 0; b < B; b++) {
      if (f[b]! >= 0) {
        yo[at1[b]!] = l.y[f[b]!]!;
        so[at1[b]!] = l.steps[f[b]!] ?? null;
      }
      if (s[b]! >= 0) {
        yo[at2[b]!] = l.y[s[b]!]!;
        so[at2[b]!] = l.steps[s[b]!] ?? null;
      }
    }
    ys.push(yo);
    steps.push(so);
  });
  return { x, ys, steps };
}

// ---------------------------------------------------------------------------------------------------
// Seed groups

/** The config paths that name or place a run rather than set a hyperparameter (W&B's `wandb.*`: the run's id, URL, name); ignored when grouping by seed. */
const NOT_HYPERPARAMETERS = /^(log_path|run_name|wandb_name|spec_file|created|started_at|sweep\.name|wandb\..*)$/;

/** A path that is a seed: any path whose last segment is `seed` (the run's, the sweep's). */
export function isSeedPath(p: string): boolean {
  return p === 'seed' || p.endsWith('.seed');
}

/**
 * Runs whose configs differ only by seed (and by the fields that only name a run) → groups, in the
 * order of their first run. A run alone is a group of one.
 */
export function seedGroups(runs: readonly { id: string; config: unknown }[]): { key: string; ids: string[] }[] {
  const groups = new Map<string, string[]>();
  for (const r of runs) {
    const flat = flattenConfig(r.config ?? {});
    const key = Object.keys(flat)
      .filter((p) => !isSeedPath(p) && !NOT_HYPERPARAMETERS.test(p))
      .sort()
      .map((p) => `${p}=${configValueText(flat[p])}`)
      .join('\n');
    const list = groups.get(key) ?? [];
    list.push(r.id);
    groups.set(key, list);
  }
  return [...groups.entries()].map(([key, ids]) => ({ key, ids }));
}

/** A group's band on aligned data: at each x the min, max and mean over the members that have a value. */
export function seedBand(ys: readonly (readonly (number | null)[])[]): { min: (number | null)[]; max: (number | null)[]; mean: (number | null)[] } {
  const n = ys[0]?.length ?? 0;
  const min: (number | null)[] = new Array(n).fill(null);
  const max: (number | null)[] = new Array(n).fill(null);
  const mean: (number | null)[] = new Array(n).fill(null);
  for (let i = 0; i < n; i++) {
    let lo = Infinity;
    let hi = -Infinity;
    let sum = 0;
    let count = 0;
    for (const y of ys) {
      const v = y[i];
      if (!finite(v)) continue;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
      sum += v;
      count++;
    }
    if (count > 0) {
      min[i] = lo;
      max[i] = hi;
      mean[i] = sum / count;
    }
  }
  return { min, max, mean };
}

// ---------------------------------------------------------------------------------------------------
// Sweeps: sensitivity and parallel coordinates

export type SweepValue = string | number | boolean | null;

export interface SensitivityRun {
  id: string;
  /** the sweep point: dot path → value */
  point: Record<string, unknown>;
  seed?: number;
  /** the run's summary of the sweep's metric (its best by the goal); undefined: the run has none yet */
  value?: number;
}

export interface SensitivityField {
  field: string;
  /** numeric: x is the value; categorical: x is the index into `categories` */
  numeric: boolean;
  categories?: string[];
  /** a log scale reads better: every value positive and max/min ≥ 10 */
  log: boolean;
  points: { id: string; x: number; y: number; seed?: number }[];
  /** the mean over the runs (all seeds, and every other field's values) at each distinct x, in x order */
  mean: { x: number; y: number; n: number }[];
}

/** The metric against each swept field: one point per run (per seed), and the mean line. */
export function sensitivity(runs: readonly SensitivityRun[], swept: readonly string[]): SensitivityField[] {
  return swept.map((field) => {
    const withValue = runs.filter((r) => Object.hasOwn(r.point, field));
    const numeric = withValue.every((r) => typeof r.point[field] === 'number');
    const categories = numeric ? undefined : [...new Set(withValue.map((r) => configValueText(r.point[field])))].sort();
    const xOf = (v: unknown) => (numeric ? (v as number) : categories!.indexOf(configValueText(v)));
    const points = withValue.filter((r) => finite(r.value)).map((r) => ({ id: r.id, x: xOf(r.point[field]), y: r.value!, ...(r.seed !== undefined ? { seed: r.seed } : {}) }));
    const byX = new Map<number, { sum: number; n: number }>();
    for (const p of points) {
      const m = byX.get(p.x) ?? { sum: 0, n: 0 };
      m.sum += p.y;
      m.n++;
      byX.set(p.x, m);
    }
    const mean = [...byX.entries()].sort((a, b) => a[0] - b[0]).map(([x, m]) => ({ x, y: m.sum / m.n, n: m.n }));
    const xs = withValue.map((r) => xOf(r.point[field]));
    const log = numeric && xs.length > 0 && xs.every((x) => x > 0) && Math.max(...xs) / Math.min(...xs) >= 10;
    return { field, numeric, ...(categories ? { categories } : {}), log, points, mean };
  });
}

export interface ParallelAxis {
  /** a swept field's dot path, or the metric's name (the last axis) */
  name: string;
  numeric: boolean;
  log: boolean;
  min: number;
  max: number;
  categories?: string[];
}

/**
 * Parallel coordinates (two or more swept fields): one axis per field and a last one for the metric;
 * each run a polyline of positions in [0, 1] along every axis (null where it has no value).
 */
export function parallelCoordinates(runs: readonly SensitivityRun[], swept: readonly string[], metric: string): { axes: ParallelAxis[]; lines: { id: string; pos: (number | null)[]; value?: number }[] } {
  const axes: ParallelAxis[] = [];
  const scale: ((v: unknown) => number | null)[] = [];
  for (const field of swept) {
    const vals = runs.map((r) => r.point[field]).filter((v) => v !== undefined);
    const numeric = vals.length > 0 && vals.every((v) => typeof v === 'number' && Number.isFinite(v));
    if (numeric) {
      const nums = vals as number[];
      const min = Math.min(...nums);
      const max = Math.max(...nums);
      const log = min > 0 && max / min >= 10;
      axes.push({ name: field, numeric, log, min, max });
      const t = (v: number) => (log ? Math.log(v) : v);
      scale.push((v) => (typeof v === 'number' ? (max === min ? 0.5 : (t(v) - t(min)) / (t(max) - t(min))) : null));
    } else {
      const categories = [...new Set(vals.map(configValueText))].sort();
      axes.push({ name: field, numeric, log: false, min: 0, max: Math.max(0, categories.length - 1), categories });
      scale.push((v) => (v === undefined ? null : categories.length <= 1 ? 0.5 : categories.indexOf(configValueText(v)) / (categories.length - 1)));
    }
  }
  const values = runs.map((r) => r.value).filter(finite);
  const mMin = values.length ? Math.min(...values) : 0;
  const mMax = values.length ? Math.max(...values) : 0;
  axes.push({ name: metric, numeric: true, log: false, min: mMin, max: mMax });
  const lines = runs.map((r) => ({
    id: r.id,
    pos: [...swept.map((f, i) => scale[i]!(r.point[f])), finite(r.value) ? (mMax === mMin ? 0.5 : (r.value - mMin) / (mMax - mMin)) : null],
    ...(finite(r.value) ? { value: r.value } : {}),
  }));
  return { axes, lines };
}

// ---------------------------------------------------------------------------------------------------
// CSV

function csvField(v: unknown): string {
  const s = v === undefined || v === null ? '' : typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : configValueText(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A table as CSV (RFC 4180 quoting), header first. */
export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}
