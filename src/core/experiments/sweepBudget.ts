// A sweep's money: the budget its runs share (cost/sharedBudget.ts), started from what each run spent
// in earlier sessions (its metrics), and the dollars the median rule saved — the steps a stopped run
// did not take, at that run's own mean cost per step.
import { METRIC } from '../../protocol/metricKeys';
import type { Budget } from '../cost/budget';
import { SharedBudget } from '../cost/sharedBudget';
import { spentBefore } from '../runs/runCost';

export interface SweepBudget {
  gate: SharedBudget;
  /** a run ended: its final spending (its metrics) replaces what the gate last heard */
  ended(run: string, runDir: string): void;
}

/** The shared budget of a sweep's runs, or undefined when the sweep sets none. */
export function sweepBudget(budget: Budget, runs: ReadonlyArray<{ run: string; dir: string }>): SweepBudget | undefined {
  if (budget.max_cost_usd === undefined && budget.max_tokens_total === undefined) return undefined;
  const spentOf = (dir: string) => {
    const s = spentBefore(dir, Number.MAX_SAFE_INTEGER);
    return { usd: s.usd, tokens: s.tokens };
  };
  const gate = new SharedBudget(budget, new Map(runs.map((r) => [r.run, spentOf(r.dir)])));
  return { gate, ended: (run, dir) => gate.release(run, spentOf(dir)) };
}

/** The predicted cost of `steps` more steps of a run: its mean cost/step_usd so far × steps (0 when it logged no cost). */
export function usdSavedOf(rows: ReadonlyArray<Record<string, unknown>>, steps: number): number {
  const costs = rows.map((r) => r[METRIC.costStep]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return costs.length ? (costs.reduce((a, b) => a + b, 0) / costs.length) * steps : 0;
}
