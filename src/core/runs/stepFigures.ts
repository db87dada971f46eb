// The figures every kind's agent report reads from a run's metrics rows: a finite value, a mean, a
// trend, and their text forms (each kind's report lives in its own folder: grpo/, sft/, dpo/ agentReport.ts).
import { readMetricsRowsSync, type MetricsRecord } from './runDirectory';
import { METRIC } from '../../protocol/metricKeys';

/** The row's value of `key` when it is a finite number. */
export const num = (r: MetricsRecord | undefined, key: string): number | null => {
  const v = r?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

export const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/** The mean of the last (up to) 5 values minus that of the 5 before; with fewer, last minus first; null under 2. */
export function trendOf(xs: readonly number[]): number | null {
  const recent = xs.slice(-5);
  const before = xs.slice(-10, -5);
  if (recent.length > 0 && before.length > 0) return mean(recent)! - mean(before)!;
  return xs.length >= 2 ? xs[xs.length - 1]! - xs[0]! : null;
}

export const f3 = (v: number | null) => (v === null ? '–' : v.toFixed(3));
export const signed = (v: number | null) => (v === null ? '–' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`);

/** The last finite value of `key` in the rows, or null. */
export function lastValue(rows: readonly MetricsRecord[], key: string): number | null {
  for (let i = rows.length - 1; i >= 0; i--) {
    const v = num(rows[i], key);
    if (v !== null) return v;
  }
  return null;
}

/** The steps [firstStep, lastStep] an agent's call ran, as the run's metrics rows say. */
export interface Stretch {
  /** every row of the run so far */
  all: MetricsRecord[];
  /** the stretch's rows, and the last of them */
  ran: MetricsRecord[];
  last: MetricsRecord | undefined;
  /** a report's first fields: the run directory, the stretch, the steps done so far */
  head: { run_dir: string; first_step: number; last_step: number; steps_done: number };
  /** the stretch's time: its rows' time/total summed */
  seconds: number;
}

/** Reads the stretch [firstStep, lastStep] from the run directory's metrics.jsonl. */
export function readStretch(o: { runDir: string; firstStep: number; lastStep: number }): Stretch {
  const all = readMetricsRowsSync(o.runDir);
  const ran = all.filter((r) => r.step >= o.firstStep && r.step <= o.lastStep);
  return {
    all,
    ran,
    last: ran[ran.length - 1],
    head: { run_dir: o.runDir, first_step: o.firstStep, last_step: o.lastStep, steps_done: all.length === 0 ? 0 : all[all.length - 1]!.step + 1 },
    seconds: ran.reduce((s, r) => s + (num(r, METRIC.timeTotal) ?? 0), 0),
  };
}
