// Ticks of an integer axis (steps, iterations, tokens trained): uPlot's default increments include
// 0.5, 0.25 … and label a short run's iteration axis 0, 0.5, 1, 1.5. Every chart whose x is a count
// gives its axis these increments and splits, so its ticks are whole numbers.

/** The increments an integer axis may step by: 1, 2, 5 × 10^k up to 5·10^15. */
export const INTEGER_INCRS: readonly number[] = Array.from({ length: 16 }, (_, k) => [1, 2, 5].map((m) => m * 10 ** k)).flat();

/**
 * The ticks of an integer axis over [min, max] for the increment the chart found (`incr`, possibly
 * fractional): the increment raised to a whole 1-2-5 step, the ticks its whole multiples inside the range.
 */
export function integerAxisTicks(min: number, max: number, incr: number): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max) || max < min) return [];
  const step = INTEGER_INCRS.find((x) => x >= incr) ?? INTEGER_INCRS[INTEGER_INCRS.length - 1]!;
  const ticks: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max && ticks.length < 1000; v += step) ticks.push(v === 0 ? 0 : v); // no -0
  return ticks;
}

/** The uPlot axis options (structurally) that give an axis integer ticks. */
export const integerAxis = {
  incrs: INTEGER_INCRS as number[],
  splits: (_u: unknown, _axis: number, min: number, max: number, incr: number): number[] => integerAxisTicks(min, max, incr),
};
