// The figures every kind's agent report reads from a run's metrics rows: a finite value, a mean, a
// trend, and their text forms (each kind's report lives in its own folder: grpo/, sft/, dpo/ agentReport.ts).
import type { MetricsRecord } from './runDirectory';

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
