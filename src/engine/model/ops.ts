// The few tensor operations a small GPT needs, forward and backward, over row-major Float32Array (or
// Float64Array, which the gradient checks use). GEMM comes in the three layouts training needs:
// A·B (forward), A·Bᵀ (input gradients) and Aᵀ·B (weight gradients).

import { gemm } from '../compute';
import { geluBackwardTask, geluTask, layerNormBackwardTask, layerNormTask, logSoftmaxTask } from '../compute/tasks';

export type Arr = Float32Array | Float64Array;

/**
 * The kernel under all three layouts: C[m×n] (+)= A[m×k] · B[n×k]ᵀ, i.e. dot products of rows, in
 * 4×4 register tiles (16 accumulators, 8 loads per 16 multiply-adds).
 */
function dotTiles(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate: boolean): void {
  const m4 = m - (m % 4);
  const n4 = n - (n % 4);
  for (let i = 0; i < m4; i += 4) {
    const a0 = i * k;
    const a1 = a0 + k;
    const a2 = a1 + k;
    const a3 = a2 + k;
    for (let j = 0; j < n4; j += 4) {
      const b0 = j * k;
      const b1 = b0 + k;
      const b2 = b1 + k;
      const b3 = b2 + k;
      let c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      let c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
      for (let p = 0; p < k; p++) {
        const x0 = a[a0 + p]!, x1 = a[a1 + p]!, x2 = a[a2 + p]!, x3 = a[a3 + p]!;
        const y0 = b[b0 + p]!, y1 = b[b1 + p]!, y2 = b[b2 + p]!, y3 = b[b3 + p]!;
        c00 += x0 * y0; c01 += x0 * y1; c02 += x0 * y2; c03 += x0 * y3;
        c10 += x1 * y0; c11 += x1 * y1; c12 += x1 * y2; c13 += x1 * y3;
        c20 += x2 * y0; c21 += x2 * y1; c22 += x2 * y2; c23 += x2 * y3;
        c30 += x3 * y0; c31 += x3 * y1; c32 += x3 * y2; c33 += x3 * y3;
      }
      const r0 = i * n + j, r1 = r0 + n, r2 = r1 + n, r3 = r2 + n;
      if (accumulate) {
        c[r0] += c00; c[r0 + 1] += c01; c[r0 + 2] += c02; c[r0 + 3] += c03;
        c[r1] += c10; c[r1 + 1] += c11; c[r1 + 2] += c12; c[r1 + 3] += c13;
        c[r2] += c20; c[r2 + 1] += c21; c[r2 + 2] += c22; c[r2 + 3] += c23;
        c[r3] += c30; c[r3 + 1] += c31; c[r3 + 2] += c32; c[r3 + 3] += c33;
      } else {
        c[r0] = c00; c[r0 + 1] = c01; c[r0 + 2] = c02; c[r0 + 3] = c03;
        c[r1] = c10; c[r1 + 1] = c11; c[r1 + 2] = c12; c[r1 + 3] = c13;
        c[r2] = c20; c[r2 + 1] = c21; c[r2 + 2] = c22; c[r2 + 3] = c23;
        c[r3] = c30; c[r3 + 1] = c31; c[r3 + 2] = c32; c[r3 + 3] = c33;
      }
    }
  }
  // edges: the rows and columns the tiles did not cover
  for (let i = 0; i < m; i++) {
    const jStart = i < m4 ? n4 : 0;
    for (let j = jStart; j < n; j++) {
      let s = 0;
      const ai = i * k;
      const bj = j * k;
      for (let p = 0; p < k; p++) s += a[ai + p]! * b[bj + p]!;
      const idx = i * n + j;
      c[idx] = accumulate ? c[idx]! + s : s;
    }
  }
}

/** Bᵀ of a rows×cols matrix (into scratch). */
function transposed(b: Arr, rows: number, cols: number): Float64Array | Float32Array {
  const t = b instanceof Float64Array ? new Float64Array(rows * cols) : new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    for (let q = 0; q < cols; q++) t[q * rows + r] = b[o + q]!;
  }
  return t;
}

// float32 goes to the WASM SIMD kernel (src/engine/compute); float64 (gradient checks) stays here.
const f32 = (a: Arr): a is Float32Array => a instanceof Float32Array;

/** C[m×n] (+)= A[m×k] · B[k×n] */
export function matmul(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate = false): void {
  if (f32(a) && f32(b) && f32(c)) return gemm(a, b, c, m, n, k, { accumulate });
  dotTiles(a, transposed(b, k, n), c, m, n, k, accumulate);
}

/** C[m×n] (+)= A[m×k] · B[n×k]ᵀ */
export function matmulBT(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate = false): void {
  if (f32(a) && f32(b) && f32(c)) return gemm(a, b, c, m, n, k, { transB: true, accumulate });
  dotTiles(a, b, c, m, n, k, accumulate);
}

/** C[m×n] (+)= A[k×m]ᵀ · B[k×n] */
export function matmulAT(a: Arr, b: Arr, c: Arr, m: number, n: number, k: number, accumulate = false): void {
  if (f32(a) && f32(b) && f32(c)) return gemm(a, b, c, m, n, k, { transA: true, accumulate });
  dotTiles(transposed(a, k, m), transposed(b, k, n), c, m, n, k, accumulate);
}

// The loops below are the compute tasks (src/engine/compute/tasks.ts) run whole on this thread;
// the training forward/backward splits them with the GEMM helper thread (gpt.ts).

/** y = (x − mean) / std · g + b per row; keeps mean and 1/std per row for the backward pass. */
export function layerNorm(x: Arr, g: Arr, b: Arr, y: Arr, mean: Arr, rstd: Arr, rows: number, d: number): void {
  layerNormTask([x, g, b, y, mean, rstd], [d], 0, rows);
}

/** dx += LN backward; dg, db accumulate (over rows, in row order). */
export function layerNormBackward(dy: Arr, x: Arr, g: Arr, mean: Arr, rstd: Arr, dx: Arr, dg: Arr | undefined, db: Arr | undefined, rows: number, d: number): void {
  layerNormBackwardTask([dy, x, g, mean, rstd, dx], [d], 0, rows);
  if (!dg && !db) return;
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    const mu = mean[r]!;
    const rs = rstd[r]!;
    for (let i = 0; i < d; i++) {
      const xhat = (x[o + i]! - mu) * rs;
      if (dg) dg[i] += dy[o + i]! * xhat;
      if (db) db[i] += dy[o + i]!;
    }
  }
}

// GELU, tanh approximation (GPT-2's): 0.5·v·(1 + tanh(u)) = v·(1 − s) with s = 1 / (1 + e^(2u)):
// one Math.exp is much cheaper than Math.tanh, and e^(2u) overflowing to Infinity still gives the
// right limits (s = 0, and s = 1 for very negative u). y may be x.
export function gelu(x: Arr, y: Arr, n: number): void {
  geluTask([x, y], [], 0, n);
}

/** d gelu/dv = 0.5·(1 + t) + 0.5·v·(1 − t²)·u' = (1 − s) + 2·v·s·(1 − s)·u'. */
export function geluBackward(x: Arr, dy: Arr, dx: Arr, n: number): void {
  geluBackwardTask([x, dy, dx], [], 0, n);
}

/** In-place log-softmax of one row; returns nothing, row becomes log-probabilities. */
export function logSoftmaxRow(row: Arr, off: number, n: number): void {
  logSoftmaxTask([row.subarray(off, off + n)], [n], 0, 1);
}
