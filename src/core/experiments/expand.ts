// A sweep file expanded into points (grid, or random from a seeded generator), each repeated per seed,
// and every point's run spec validated through the base kind's schema before anything runs.
import * as path from 'path';
import { runKindIdOfFile, specFileMatches } from '../spec/kinds';
import { runKind } from '../kinds/registry';
import { logsMetric, metricsText } from '../training/runKind';
import { mergeSpec } from '../spec/overrides';
import { formatIssue } from '../spec/issues';
import { parseJsonWithPosition, readSpecText, RunSpecError } from '../spec/text';
import { sweepName, type SweepFile, type SweepParameter } from './sweepFile';
import type { SweepPoint } from './sweepManifest';
import { mulberry32 } from '../data/prng';

export interface ExpandedPoint {
  /** folder name: the swept values and the seed, e.g. `learning_rate_0.004.seed_1` */
  name: string;
  /** every parameter's value by dot path (constants too) */
  point: SweepPoint;
  seed?: number;
}

/** One draw of a parameter (W&B's meanings, experiments-reference.md). */
export function drawParameter(p: SweepParameter, rand: () => number): unknown {
  if ('value' in p) return p.value;
  if (!('distribution' in p)) return p.values[Math.floor(rand() * p.values.length)];
  switch (p.distribution) {
    case 'categorical':
      return p.values[Math.floor(rand() * p.values.length)];
    case 'uniform':
      return p.min + rand() * (p.max - p.min);
    case 'int_uniform':
      return p.min + Math.floor(rand() * (p.max - p.min + 1));
    case 'q_uniform': {
      const v = Math.round((p.min + rand() * (p.max - p.min)) / p.q) * p.q;
      // keep the decimal form of q (0.1 · 3 is 0.30000000000000004)
      return Number(v.toFixed(decimals(p.q)));
    }
    case 'log_uniform_values':
      return Math.exp(Math.log(p.min) + rand() * (Math.log(p.max) - Math.log(p.min)));
  }
}

function decimals(q: number): number {
  const s = String(q);
  const i = s.indexOf('.');
  return i < 0 ? 0 : Math.min(20, s.length - i - 1);
}

/** Dot paths of the parameters that take more than one value. */
export function sweptPaths(s: Pick<SweepFile, 'parameters'>): string[] {
  return Object.entries(s.parameters)
    .filter(([, p]) => !('value' in p) && !('values' in p && !('distribution' in p) && p.values.length === 1))
    .map(([k]) => k);
}

/** The points of a sweep, in order, each repeated for `seeds`. */
export function expandPoints(s: SweepFile): ExpandedPoint[] {
  const keys = Object.keys(s.parameters);
  let points: SweepPoint[];
  if (s.method === 'grid') {
    points = [{}];
    for (const k of keys) {
      const p = s.parameters[k];
      const vals = 'value' in p ? [p.value] : 'values' in p ? p.values : [];
      points = points.flatMap((pt) => vals.map((v) => ({ ...pt, [k]: v })));
    }
    if (s.run_cap !== undefined) points = points.slice(0, s.run_cap);
  } else {
    const rand = mulberry32(s.seed);
    points = [];
    for (let i = 0; i < s.run_cap!; i++) points.push(Object.fromEntries(keys.map((k) => [k, drawParameter(s.parameters[k], rand)])));
  }
  const swept = sweptPaths(s);
  const named = points.map((point, i) => ({ point, base: pointName(point, swept, s.method === 'random' ? i : undefined) }));
  const out: ExpandedPoint[] = [];
  for (const { point, base } of named) {
    if (!s.seeds) out.push({ name: base, point });
    else for (const seed of s.seeds) out.push({ name: `${base}.seed_${seed}`, point, seed });
  }
  // two points that print alike (e.g. random draws rounded alike) get a suffix
  const seen = new Map<string, number>();
  for (const p of out) {
    const n = seen.get(p.name) ?? 0;
    seen.set(p.name, n + 1);
    if (n > 0) p.name = `${p.name}-${n + 1}`;
  }
  return out;
}

/** `learning_rate_0.004.lora_rank_8`: the swept fields and their values, with the characters run names allow. */
export function pointName(point: SweepPoint, swept: readonly string[], index?: number): string {
  const parts = swept.map((k) => `${k}_${formatValue(point[k])}`);
  if (index !== undefined) parts.unshift(`r${String(index + 1).padStart(3, '0')}`);
  const name = parts.join('.').replace(/[^A-Za-z0-9._-]/g, '_');
  return name || 'base';
}

function formatValue(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** `{"a.b": 1}` → `{a: {b: 1}}`, the overrides mergeSpec takes. */
export function overridesOf(point: SweepPoint): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [dotted, v] of Object.entries(point)) {
    const keys = dotted.split('.');
    let o = out;
    for (const k of keys.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
    o[keys[keys.length - 1]] = v;
  }
  return out;
}

export interface PreparedPoint<R = unknown> extends ExpandedPoint {
  /** the point's run spec, validated (paths absolute) */
  spec: R;
}

export interface ExpandedSweep {
  /** the base spec's kind: the kinds table's id */
  kind: string;
  baseFile: string;
  points: PreparedPoint[];
}

/** A point whose run spec is not valid: the field (in the run spec) when the schema names one, and the message. */
export interface PointProblem {
  point: ExpandedPoint;
  /** the field of the run spec, e.g. ['group_size'] (absent: a problem of no one field, e.g. a missing file) */
  path?: PropertyKey[];
  /** `arith.grpo.json: group_size: must be at least 1 (…)` */
  message: string;
  /** `path` is a field of the sweep file (its metric), not of the run spec */
  inSweepFile?: true;
}

export interface CheckedSweep extends ExpandedSweep {
  /** the run spec field a sweep's seeds set (the kind's) */
  seedField: string;
  problems: PointProblem[];
  /** the base spec as written */
  baseSpec: unknown;
}

/**
 * Expands the sweep and validates every point's run spec as the base file with the point on top
 * (plus the seed as `sampling_seed` for GRPO, `seed` for SFT); returns the valid points and every
 * problem. A base file that is not a run spec or cannot be read throws a RunSpecError.
 */
export async function checkSweep(sweepFile: string, s: SweepFile): Promise<CheckedSweep> {
  const group = sweepName(sweepFile, s);
  const abs = path.resolve(sweepFile);
  const baseFile = path.resolve(path.dirname(abs), s.base);
  const kind = runKindIdOfFile(baseFile);
  if (!kind) throw new RunSpecError([`${abs}: base: "${s.base}" is not a run spec file (${specFileMatches()})`]);
  const text = await readSpecText(baseFile);
  const base = parseJsonWithPosition(text, baseFile);
  const runs = await runKind(kind);
  const def = await runs.spec();
  const label = path.basename(baseFile);
  const seedField = runs.seedField;
  const problems: PointProblem[] = [];
  const points: PreparedPoint[] = [];
  for (const p of expandPoints(s)) {
    // W&B: one group per sweep, each run named by its point (a point or the base may set its own)
    const own = (base !== null && typeof base === 'object' ? base : {}) as { wandb_group?: unknown; wandb_name?: unknown };
    const tracking = { wandb_group: own.wandb_group ?? group, wandb_name: own.wandb_name ?? p.name };
    const overrides = overridesOf({ ...tracking, ...(p.seed === undefined ? p.point : { ...p.point, [seedField]: p.seed }) });
    const merged = mergeSpec(base, overrides);
    const checked = def.schema.safeParse(merged, { reportInput: true });
    if (!checked.success) {
      for (const i of checked.error.issues) problems.push({ point: p, path: i.code === 'unrecognized_keys' ? [...i.path, i.keys[0]!] : [...i.path], message: `${label}: ${formatIssue(i, def.schema)}` });
      continue;
    }
    try {
      const loaded = await def.parseValue(merged, baseFile);
      points.push({ ...p, spec: loaded.spec });
    } catch (err) {
      const lines = err instanceof RunSpecError ? err.problems : [(err as Error).message];
      for (const line of lines) problems.push({ point: p, message: line });
    }
  }
  // the metric the sweep ranks by must be one the kind logs, for every valid point (an inline evaluator's keys depend on the point)
  for (const p of points) {
    const m = runs.metrics(p.spec);
    if (logsMetric(m, s.metric.name)) continue;
    problems.push({ point: p, path: ['metric', 'name'], inSweepFile: true, message: `metric.name: ${runs.row.aRun} does not log "${s.metric.name}"; it logs ${metricsText(m)}` });
  }
  return { kind, seedField, baseFile, points, problems, baseSpec: base };
}

/** `<sweep file>: point <name> (<point>): <message>`: a point problem as a run reports it (one of the sweep file's own fields: `<sweep file>: <message>`). */
export function pointProblemLine(sweepFile: string, p: PointProblem): string {
  if (p.inSweepFile) return `${path.resolve(sweepFile)}: ${p.message}`;
  return `${path.resolve(sweepFile)}: point ${p.point.name} (${JSON.stringify(p.point.point)}): ${p.message}`;
}

/**
 * Expands the sweep and validates every point's run spec (checkSweep). One bad point throws a
 * RunSpecError naming the sweep file, the point, the field and the value; nothing has started by then.
 */
export async function expandSweep(sweepFile: string, s: SweepFile): Promise<ExpandedSweep> {
  const { problems, baseSpec: _base, seedField: _seed, ...expanded } = await checkSweep(sweepFile, s);
  if (problems.length) throw new RunSpecError([...new Set(problems.map((p) => pointProblemLine(sweepFile, p)))]);
  return expanded;
}
