// The few tensor operations a small GPT needs, forward and backward, over row-major Float32Array (or
// Float64Array, which the gradient checks use). GEMM comes in the three layouts training needs:
// A·B (forward), A·Bᵀ (input gradients) and Aᵀ·B (weight gradients).

export type Arr = Float32Array | Float64Array;

/** C[m×n] (+)= A[m×k] · B[k×n] */
export function matmul(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate = false): void {
  if (!accumulate) c.fill(0, 0, m * n);
  for (let i = 0; i < m; i++) {
    const ci = i * n;
    const ai = i * k;
    for (let p = 0; p < k; p++) {
      const av = a[ai + p]!;
      if (av === 0) continue;
      const bp = p * n;
      for (let j = 0; j < n; j++) c[ci + j] += av * b[bp + j]!;
    }
  }
}

/** C[m×n] (+)= A[m×k] · B[n×k]ᵀ */
export function matmulBT(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate = false): void {
  for (let i = 0; i < m; i++) {
    const ai = i * k;
    const ci = i * n;
    for (let j = 0; j < n; j++) {
      const bj = j * k;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let p = 0;
      for (; p + 3 < k; p += 4) {
        s0 += a[ai + p]! * b[bj + p]!;
        s1 += a[ai + p + 1]! * b[bj + p + 1]!;
        s2 += a[ai + p + 2]! * b[bj + p + 2]!;
        s3 += a[ai + p + 3]! * b[bj + p + 3]!;
      }
      for (; p < k; p++) s0 += a[ai + p]! * b[bj + p]!;
      const s = s0 + s1 + s2 + s3;
      c[ci + j] = accumulate ? c[ci + j]! + s : s;
    }
  }
}

/** C[m×n] (+)= A[k×m]ᵀ · B[k×n] */
export function matmulAT(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate = false): void {
  if (!accumulate) c.fill(0, 0, m * n);
  for (let p = 0; p < k; p++) {
    const ap = p * m;
    const bp = p * n;
    for (let i = 0; i < m; i++) {
      const av = a[ap + i]!;
      if (av === 0) continue;
      const ci = i * n;
      for (let j = 0; j < n; j++) c[ci + j] += av * b[bp + j]!;
    }
  }
}

const LN_EPS = 1e-5;

/** y = (x − mean) / std · g + b per row; keeps mean and 1/std per row for the backward pass. */
export function layerNorm(x: Arr, g: Arr, b: Arr, y: Arr, mean: Arr, rstd: Arr, rows: number, d: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let mu = 0;
    for (let i = 0; i < d; i++) mu += x[o + i]!;
    mu /= d;
    let v = 0;
    for (let i = 0; i < d; i++) {
      const t = x[o + i]! - mu;
      v += t * t;
    }
    const rs = 1 / Math.sqrt(v / d + LN_EPS);
    mean[r] = mu;
    rstd[r] = rs;
    for (let i = 0; i < d; i++) y[o + i] = (x[o + i]! - mu) * rs * g[i]! + b[i]!;
  }
}

/** dx += LN backward; dg, db accumulate. */
export function layerNormBackward(dy: Arr, x: Arr, g: Arr, mean: Arr, rstd: Arr, dx: Arr, dg: Arr | undefined, db: Arr | undefined, rows: number, d: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    const mu = mean[r]!;
    const rs = rstd[r]!;
    let sumDyG = 0;
    let sumDyGXhat = 0;
    for (let i = 0; i < d; i++) {
      const xhat = (x[o + i]! - mu) * rs;
      const dyg = dy[o + i]! * g[i]!;
      sumDyG += dyg;
      sumDyGXhat += dyg * xhat;
      if (dg) dg[i] += dy[o + i]! * xhat;
      if (db) db[i] += dy[o + i]!;
    }
    const mDyG = sumDyG / d;
    const mDyGX = sumDyGXhat / d;
    for (let i = 0; i < d; i++) {
      const xhat = (x[o + i]! - mu) * rs;
      dx[o + i] += rs * (dy[o + i]! * g[i]! - mDyG - xhat * mDyGX);
    }
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation (GPT-2's). */
export function gelu(x: Arr, y: Arr, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    y[i] = 0.5 * v * (1 + Math.tanh(GELU_C * (v + 0.044715 * v * v * v)));
  }
}

export function geluBackward(x: Arr, dy: Arr, dx: Arr, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    const inner = GELU_C * (v + 0.044715 * v * v * v);
    const t = Math.tanh(inner);
    const dInner = GELU_C * (1 + 3 * 0.044715 * v * v);
    dx[i] = dy[i]! * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * dInner);
  }
}

/** In-place log-softmax of one row; returns nothing, row becomes log-probabilities. */
export function logSoftmaxRow(row: Arr, off: number, n: number): void {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (row[off + i]! > max) max = row[off + i]!;
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.exp(row[off + i]! - max);
  const lse = max + Math.log(s);
  for (let i = 0; i < n; i++) row[off + i] = row[off + i]! - lse;
}
