// Exponential moving average as TensorBoard smooths curves: weight w in [0, 1), debiased so the
// first points are not pulled towards zero. Gaps (null) stay gaps and do not reset the average.

export function emaSmooth(values: ReadonlyArray<number | null>, weight: number): Array<number | null> {
  const w = Math.min(Math.max(weight, 0), 0.999);
  let last = 0;
  let seen = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) return null;
    last = last * w + (1 - w) * v;
    seen += 1;
    const debias = w === 0 ? 1 : 1 - Math.pow(w, seen);
    return last / debias;
  });
}
