// Exponential moving average as TensorBoard smooths curves: weight w in [0, 1), debiased so the
// first points are not pulled towards zero. Gaps (null) stay gaps and do not reset the average.
// A plain loop with the debiasing power carried along (w^n by one multiplication per point, not
// Math.pow): the Compare Runs host smooths 50 runs × 2,000 rows × every chart in view at once.

export function emaSmooth(values: ReadonlyArray<number | null>, weight: number): Array<number | null> {
  const w = Math.min(Math.max(weight, 0), 0.999);
  const n = values.length;
  const out = new Array<number | null>(n);
  let last = 0;
  let wn = 1; // w to the power of the points seen so far
  for (let i = 0; i < n; i++) {
    const v = values[i];
    // `v - v !== 0`: NaN or ±Infinity
    if (v === null || v === undefined || v - v !== 0) {
      out[i] = null;
      continue;
    }
    last = last * w + (1 - w) * v;
    wn *= w;
    out[i] = w === 0 ? last : last / (1 - wn);
  }
  return out;
}
