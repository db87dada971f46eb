// The median stopping rule (Golovin et al., "Google Vizier", KDD 2017), as experiments-reference.md
// defines it: at a check step s ≥ min_iter, run r is stopped if b(r, s), its best value of the metric
// up to s by the goal, is worse than the median of b(q, s) over the OTHER runs q that reached s,
// provided there are at least min_runs of them. A run that completed (not stopped) before s counts with
// its value at s (its best over all its steps); a run stopped early counts only at the steps it reached,
// never with a frozen value past its last step (that would pull the median toward runs already judged bad).
import { better } from './ranking';
import type { SweepMetric } from './sweepManifest';

export interface CurveRun {
  id: string;
  rows: readonly { step: number; [k: string]: unknown }[];
  /** it completed (not stopped early, not cancelled): it counts at every step after its last, with its final best */
  completed?: boolean;
}

/** b(r, s): the best value of the metric over rows with step ≤ s, or undefined. */
export function bestUpTo(rows: CurveRun['rows'], metric: SweepMetric, s: number): number | undefined {
  let best: number | undefined;
  for (const row of rows) {
    if (row.step > s) continue;
    const v = row[metric.name];
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    if (best === undefined || better(v, best, metric.goal)) best = v;
  }
  return best;
}

function lastStep(rows: CurveRun['rows']): number {
  return rows.reduce((m, r) => Math.max(m, r.step), -1);
}

export function median(xs: readonly number[]): number {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

/**
 * Whether `run` is stopped at step `s`: the rule above. `others` are the sweep's other runs; one counts
 * when it has reached s (a row at step ≥ s) or completed before s.
 */
export function medianStops(run: CurveRun, others: readonly CurveRun[], s: number, metric: SweepMetric, rule: { min_iter: number; min_runs: number }): boolean {
  if (s < rule.min_iter) return false;
  const mine = bestUpTo(run.rows, metric, s);
  if (mine === undefined) return false;
  const values: number[] = [];
  for (const q of others) {
    if (q.id === run.id) continue;
    if (lastStep(q.rows) < s && !q.completed) continue;
    const b = bestUpTo(q.rows, metric, s);
    if (b !== undefined) values.push(b);
  }
  if (values.length < rule.min_runs) return false;
  return better(median(values), mine, metric.goal);
}
