// Evaluation statistics, exactly as docs/experiments-reference.md defines them: the unbiased pass@k
// (Chen et al. 2021), 95 % bootstrap intervals over problems, the paired difference with its paired
// bootstrap interval, the paired sign-flip permutation test, exact McNemar, wins/losses/ties.
// Every random draw is seeded (mulberry32), so the same results give the same intervals.
import { mulberry32 } from '../data/prng';

export const DEFAULT_BOOTSTRAP = 2000;
export const DEFAULT_PERMUTATIONS = 10000;
/**
 * The seed of every random draw of an eval's statistics, recorded in summary.json as bootstrap.seed:
 * each target's one resampling of its problems (all its per-problem statistics), the paired bootstrap
 * of each comparison and its sign-flip draws. With it and B the intervals are reproducible.
 */
export const EVAL_STATS_SEED = 1;
/**
 * The relative slack of every comparison of floating-point values in the eval statistics: two sums of
 * the same numbers in another order differ in the last bits, and must compare equal. The sign-flip test
 * (a flipped sum against the observed one), wins/losses/ties and the regressed problems all use it.
 */
export const FLOAT_TOLERANCE = 1e-12;

/** x against y within FLOAT_TOLERANCE (relative to the larger magnitude): −1 below, 0 equal, 1 above. */
export function compareWithTolerance(x: number, y: number): -1 | 0 | 1 {
  const slack = FLOAT_TOLERANCE * (1 + Math.max(Math.abs(x), Math.abs(y)));
  const d = x - y;
  return d > slack ? 1 : d < -slack ? -1 : 0;
}

/** Unbiased pass@k for a problem with n samples, c correct: 1 − C(n−c, k)/C(n, k) = 1 − ∏_{i=n−c+1}^{n} (1 − k/i). */
export function passAtK(n: number, c: number, k: number): number {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) || k < 1 || k > n || c < 0 || c > n) {
    throw new RangeError(`pass@k needs integers 1 ≤ k ≤ n and 0 ≤ c ≤ n (n=${n}, c=${c}, k=${k})`);
  }
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** The q-quantile (0..1) of sorted values, linear interpolation between order statistics (numpy's default). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

export interface Interval {
  value: number;
  lo?: number;
  hi?: number;
}

/**
 * The mean of per-problem values with its 95 % bootstrap interval: resample the problems with
 * replacement B times (seeded) and take the 2.5th and 97.5th percentiles of the resampled means.
 * With fewer than 2 problems there is no interval.
 */
export function bootstrapMean(values: readonly number[], opts: { resamples?: number; seed?: number } = {}): Interval {
  const value = mean(values);
  const n = values.length;
  if (n < 2) return { value };
  const B = opts.resamples ?? DEFAULT_BOOTSTRAP;
  const rand = mulberry32(opts.seed ?? 0);
  const means = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[Math.floor(rand() * n)]!;
    means[b] = s / n;
  }
  means.sort();
  const sorted = Array.from(means);
  return { value, lo: quantileSorted(sorted, 0.025), hi: quantileSorted(sorted, 0.975) };
}

/**
 * Several per-problem statistics of one target with their 95 % bootstrap intervals from ONE resampling
 * of the problems: `columns[j][i]` is statistic j on problem i (NaN where problem i has no value, e.g.
 * a grader's `format` it did not report). Each of the B draws picks the same problems for every
 * statistic, so statistics that are the same quantity (reward and pass@1 on 0/1 rewards) get the same
 * interval. A statistic's resampled mean is over the drawn problems that have a value (a draw with none
 * is left out). With one problem draw sequence, `bootstrapMeans([xs])` equals `bootstrapMean(xs)`.
 */
export function bootstrapMeans(columns: ReadonlyArray<readonly number[]>, opts: { resamples?: number; seed?: number } = {}): Interval[] {
  const n = columns[0]?.length ?? 0;
  for (const c of columns) if (c.length !== n) throw new RangeError(`bootstrap columns need the same problems (${c.length} vs ${n})`);
  const present = columns.map((c) => c.filter((x) => !Number.isNaN(x)));
  const values = present.map((xs) => mean(xs));
  if (n < 2) return values.map((value) => ({ value }));
  const B = opts.resamples ?? DEFAULT_BOOTSTRAP;
  const rand = mulberry32(opts.seed ?? 0);
  const draws = columns.map(() => new Float64Array(B));
  const kept = columns.map(() => 0);
  const sums = new Float64Array(columns.length);
  const counts = new Uint32Array(columns.length);
  for (let b = 0; b < B; b++) {
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const pick = Math.floor(rand() * n);
      for (let j = 0; j < columns.length; j++) {
        const x = columns[j]![pick]!;
        if (Number.isNaN(x)) continue;
        sums[j]! += x;
        counts[j]!++;
      }
    }
    for (let j = 0; j < columns.length; j++) if (counts[j]) draws[j]![kept[j]!++] = sums[j]! / counts[j]!;
  }
  return columns.map((_, j) => {
    if (present[j]!.length < 2) return { value: values[j]! };
    const sorted = Array.from(draws[j]!.subarray(0, kept[j]!)).sort((x, y) => x - y);
    return { value: values[j]!, lo: quantileSorted(sorted, 0.025), hi: quantileSorted(sorted, 0.975) };
  });
}

export interface PermutationResult {
  p: number;
  /** permutations drawn, or 2^N when enumerated */
  permutations: number;
  exact: boolean;
}

/**
 * Paired sign-flip permutation test of mean(d) = 0. Exact enumeration of all 2^N sign vectors
 * when 2^N ≤ M (p = share of them, the identity included, with |mean| ≥ |observed|); otherwise M
 * seeded random flips and p = (1 + #{|mean flipped| ≥ |mean(d)|}) / (1 + M).
 */
export function signFlipTest(d: readonly number[], opts: { permutations?: number; seed?: number } = {}): PermutationResult {
  const M = opts.permutations ?? DEFAULT_PERMUTATIONS;
  const N = d.length;
  if (N === 0) return { p: 1, permutations: 1, exact: true };
  let total = 0;
  for (const x of d) total += x;
  const observed = Math.abs(total);
  const atLeastObserved = (sum: number) => compareWithTolerance(Math.abs(sum), observed) >= 0;
  if (N <= 30 && 2 ** N <= M) {
    const count = 2 ** N;
    let hits = 0;
    for (let mask = 0; mask < count; mask++) {
      let s = 0;
      for (let i = 0; i < N; i++) s += mask & (1 << i) ? -d[i]! : d[i]!;
      if (atLeastObserved(s)) hits++;
    }
    return { p: hits / count, permutations: count, exact: true };
  }
  const rand = mulberry32(opts.seed ?? 0);
  let hits = 0;
  for (let m = 0; m < M; m++) {
    let s = 0;
    for (let i = 0; i < N; i++) s += rand() < 0.5 ? -d[i]! : d[i]!;
    if (atLeastObserved(s)) hits++;
  }
  return { p: (1 + hits) / (1 + M), permutations: M, exact: false };
}

/** P[X ≤ x] for X ~ Binomial(n, 1/2), summed in log space (n in the thousands stays exact enough). */
export function binomHalfCdf(x: number, n: number): number {
  if (x < 0) return 0;
  if (x >= n) return 1;
  let logC = 0; // log C(n, 0)
  let s = 0;
  const logHalfN = -n * Math.LN2;
  for (let k = 0; k <= x; k++) {
    if (k > 0) logC += Math.log(n - k + 1) - Math.log(k);
    s += Math.exp(logC + logHalfN);
  }
  return Math.min(1, s);
}

/** Exact McNemar: b = #(A right, B wrong), c = #(A wrong, B right); p = min(1, 2·P[X ≤ min(b, c)]), X ~ Bin(b+c, 1/2). */
export function mcnemarExact(b: number, c: number): number {
  if (b + c === 0) return 1;
  return Math.min(1, 2 * binomHalfCdf(Math.min(b, c), b + c));
}

/** Problems A won, lost and tied against B (A's value above, below or equal to B's within FLOAT_TOLERANCE). */
export function winsLossesTies(a: readonly number[], b: readonly number[]): { wins: number; losses: number; ties: number } {
  let wins = 0;
  let losses = 0;
  let ties = 0;
  a.forEach((x, i) => {
    const c = compareWithTolerance(x, b[i]!);
    if (c > 0) wins++;
    else if (c < 0) losses++;
    else ties++;
  });
  return { wins, losses, ties };
}

export interface PairedResult {
  problems: number;
  diff: Interval;
  p_value: number;
  permutations: number;
  exact: boolean;
  mcnemar_p?: number;
  wins: number;
  losses: number;
  ties: number;
}

/**
 * A against B on the same problems: `a[i]`, `b[i]` are problem i's mean rewards. d_i = a_i − b_i;
 * mean(d) with the paired bootstrap interval, the sign-flip p-value and wins/losses/ties. With
 * `correct` (n = 1: problem i's 0/1 correctness of A and B) also the exact McNemar p-value.
 */
export function pairedComparison(
  a: readonly number[],
  b: readonly number[],
  opts: { resamples?: number; permutations?: number; seed?: number; correct?: { a: readonly boolean[]; b: readonly boolean[] } } = {},
): PairedResult {
  if (a.length !== b.length) throw new RangeError(`paired comparison needs the same problems (${a.length} vs ${b.length})`);
  const d = a.map((x, i) => x - b[i]!);
  const perm = signFlipTest(d, { permutations: opts.permutations, seed: opts.seed });
  const out: PairedResult = {
    problems: d.length,
    diff: bootstrapMean(d, { resamples: opts.resamples, seed: opts.seed }),
    p_value: perm.p,
    permutations: perm.permutations,
    exact: perm.exact,
    ...winsLossesTies(a, b),
  };
  if (opts.correct) {
    let bc = 0;
    let cb = 0;
    opts.correct.a.forEach((ra, i) => {
      const rb = opts.correct!.b[i]!;
      if (ra && !rb) bc++;
      else if (!ra && rb) cb++;
    });
    out.mcnemar_p = mcnemarExact(bc, cb);
  }
  return out;
}
