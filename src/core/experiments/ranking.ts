// Runs ranked by a metric's best value over the run (experiments-reference.md: "ranks runs by the metric's
// best value over the run"; for a test/… metric, over the steps that have an evaluation).
import type { SweepMetric } from './sweepManifest';

export interface RankInput {
  id: string;
  rows: readonly { step: number; [k: string]: unknown }[];
}

export interface RankedRun {
  id: string;
  best?: number;
  bestStep?: number;
  last?: number;
  rank?: number;
}

/** true when `a` is better than `b` by the goal */
export function better(a: number, b: number, goal: SweepMetric['goal']): boolean {
  return goal === 'maximize' ? a > b : a < b;
}

/** Best value (first step reaching it) and last value of one metric over rows; non-finite values are skipped. */
export function bestOf(rows: RankInput['rows'], metric: SweepMetric): { best?: number; bestStep?: number; last?: number } {
  let best: number | undefined;
  let bestStep: number | undefined;
  let last: number | undefined;
  for (const row of rows) {
    const v = row[metric.name];
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    last = v;
    if (best === undefined || better(v, best, metric.goal)) {
      best = v;
      bestStep = row.step;
    }
  }
  return { best, bestStep, last };
}

/** Sorted best first; runs without the metric have no rank and come last (in input order). Ties share a rank. */
export function rankRuns(runs: readonly RankInput[], metric: SweepMetric): RankedRun[] {
  const scored = runs.map((r) => ({ id: r.id, ...bestOf(r.rows, metric) }));
  const withMetric = scored.filter((r) => r.best !== undefined);
  const without = scored.filter((r) => r.best === undefined);
  withMetric.sort((a, b) => (a.best === b.best ? 0 : better(a.best!, b.best!, metric.goal) ? -1 : 1));
  const out: RankedRun[] = [];
  withMetric.forEach((r, i) => {
    const prev = out[i - 1];
    const rank = prev && prev.best === r.best ? prev.rank! : i + 1;
    out.push(strip({ ...r, rank }));
  });
  for (const r of without) out.push(strip(r));
  return out;
}

function strip(r: RankedRun): RankedRun {
  const o: RankedRun = { id: r.id };
  if (r.best !== undefined) o.best = r.best;
  if (r.bestStep !== undefined) o.bestStep = r.bestStep;
  if (r.last !== undefined) o.last = r.last;
  if (r.rank !== undefined) o.rank = r.rank;
  return o;
}
