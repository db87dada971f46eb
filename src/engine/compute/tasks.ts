// The model's non-GEMM loops as tasks that the GEMM helper thread can run too (parallelFor): each
// task computes the outputs of an index range [lo, hi) — heads, rows or elements — and every output
// is computed by exactly one thread with the same operations in the same order whatever the split,
// so results are bit-identical at 1 and 2 threads (and to the loops these replace in gpt.ts/ops.ts).
//
// The helper thread gets these functions as source text (Function.prototype.toString), so each must
// be self-contained: no imports, no module-level names, no nested closures; only its arguments and
// globals such as Math. `a` holds the arrays (Float32Array or Int32Array views; Float64Array on the
// calling thread in float64 gradient checks), `s` the numbers.

type A = Float32Array | Float64Array | Int32Array;

/**
 * The WASM GEMM of the thread running a task, on byte addresses in the kernel's memory (given only
 * when every array of the task lives there): C[i][j] = alpha·Σ_p A[i·sai + p·sap]·B[p·sbp + j·sbj]
 * (+ C when acc is 1), C[i][j] at c + 4·(i·ldc + j); k ≥ 1. Same bits on either thread.
 */
export type TaskGemm = (a: number, b: number, c: number, m: number, n: number, k: number, sai: number, sap: number, sbp: number, sbj: number, ldc: number, alpha: number, acc: number) => void;

/**
 * Causal attention forward over the (head, sequence) pairs [lo, hi) of nHead·nSeq (pair i: head
 * ⌊i / nSeq⌋, sequence i mod nSeq; each writes only its own rows of that head and its own
 * probabilities). a: q, k, v, meta, out (zeroed), probs; s: d, hd, nSeq, 1/√hd. meta per sequence:
 * start, length, offset (its parent's length), parent start, first probs index of its head-0 block
 * (head h's L×W block follows at h·L·W).
 * A sequence attending to more than 64 positions, when `g` is given, computes its scores and its
 * output as GEMMs (float32 sums, SIMD); a shorter one (every arith-gpt sequence: its context is 64),
 * or any without `g`, as float64 dot products. The choice depends on the shapes only, never on the
 * thread count.
 */
export function attnForwardTask(a: A[], s: number[], lo: number, hi: number, g?: TaskGemm): void {
  const q = a[0]!, k = a[1]!, v = a[2]!, meta = a[3]!, out = a[4]!, P = a[5]!;
  const d = s[0]!, hd = s[1]!, nSeq = s[2]!, invSqrt = s[3]!;
  for (let pair = lo; pair < hi; pair++) {
    const h = Math.floor(pair / nSeq);
    {
      const si = pair - h * nSeq;
      const st = meta[si * 5]!, L = meta[si * 5 + 1]!, off = meta[si * 5 + 2]!, ps = meta[si * 5 + 3]!;
      const W = off + L;
      const pb = meta[si * 5 + 4]! + h * L * W;
      if (g !== undefined && W > 64) {
        const own = 4 * (st * d + h * hd);
        const par = 4 * (ps * d + h * hd);
        const pAt = P.byteOffset + 4 * pb;
        // scores: S = Q_h·K_hᵀ/√hd, the parent's keys in columns [0, off), its own in [off, W)
        g(q.byteOffset + own, k.byteOffset + own, pAt + 4 * off, L, L, hd, d, 1, 1, d, W, invSqrt, 0);
        if (off > 0) g(q.byteOffset + own, k.byteOffset + par, pAt, L, off, hd, d, 1, 1, d, W, invSqrt, 0);
        for (let i = 0; i < L; i++) {
          const pr = pb + i * W;
          const last = off + i;
          let max = -Infinity;
          for (let j = 0; j <= last; j++) if (P[pr + j]! > max) max = P[pr + j]!;
          let sum = 0;
          for (let j = 0; j <= last; j++) {
            const ev = Math.exp(P[pr + j]! - max);
            P[pr + j] = ev;
            sum += ev;
          }
          for (let j = 0; j <= last; j++) P[pr + j] = P[pr + j]! / sum;
          for (let j = last + 1; j < W; j++) P[pr + j] = 0;
        }
        // out_h = P·V_h
        g(pAt + 4 * off, v.byteOffset + own, out.byteOffset + own, L, hd, L, W, 1, d, 1, d, 1, 1);
        if (off > 0) g(pAt, v.byteOffset + par, out.byteOffset + own, L, hd, off, W, 1, d, 1, d, 1, 1);
        continue;
      }
      for (let i = 0; i < L; i++) {
        const qi = (st + i) * d + h * hd;
        const last = off + i;
        const pr = pb + i * W;
        let max = -Infinity;
        for (let j = 0; j <= last; j++) {
          const kj = (j < off ? ps + j : st + j - off) * d + h * hd;
          let dot = 0;
          for (let e = 0; e < hd; e++) dot += q[qi + e]! * k[kj + e]!;
          const sc = dot * invSqrt;
          P[pr + j] = sc;
          if (sc > max) max = sc;
        }
        let sum = 0;
        for (let j = 0; j <= last; j++) {
          const ev = Math.exp(P[pr + j]! - max);
          P[pr + j] = ev;
          sum += ev;
        }
        for (let j = 0; j <= last; j++) {
          const pij = P[pr + j]! / sum;
          P[pr + j] = pij;
          const vj = (j < off ? ps + j : st + j - off) * d + h * hd;
          for (let e = 0; e < hd; e++) out[qi + e] += pij * v[vj + e]!;
        }
      }
    }
  }
}

/**
 * Attention backward over the (head, family) pairs [lo, hi) of nHead·nFam (pair i: head ⌊i / nFam⌋,
 * family i mod nFam). A family is a root sequence and the sequences continuing it, which alone write
 * its rows' gradients: a shared prefix's rows gather every continuation's contributions, in sequence
 * order. a: dOut, q, k, v, probs, meta, families, dq, dk, dv (zeroed) [, the GEMM path's scratch];
 * s: d, hd, nSeq, 1/√hd, longest attended width, nFam. families: nFam + 1 starts into the list of
 * sequence indices that follows them (each family's in ascending order).
 */
export function attnBackwardTask(a: A[], s: number[], lo: number, hi: number, g?: TaskGemm): void {
  const dOut = a[0]!, q = a[1]!, k = a[2]!, v = a[3]!, P = a[4]!, meta = a[5]!, fam = a[6]!, dq = a[7]!, dk = a[8]!, dv = a[9]!;
  const d = s[0]!, hd = s[1]!, invSqrt = s[3]!, nFam = s[5]!;
  const dP = new Float64Array(s[4]!);
  // the GEMM path's dP and dS blocks (laid out as the probabilities), when given
  const G = a.length > 10 ? a[10]! : undefined;
  for (let pair = lo; pair < hi; pair++) {
    const h = Math.floor(pair / nFam);
    const f = pair - h * nFam;
    for (let e = fam[f]!; e < fam[f + 1]!; e++) {
      const si = fam[nFam + 1 + e]!;
      const st = meta[si * 5]!, L = meta[si * 5 + 1]!, off = meta[si * 5 + 2]!, ps = meta[si * 5 + 3]!;
      const W = off + L;
      const pb = meta[si * 5 + 4]! + h * L * W;
      if (g !== undefined && G !== undefined && W > 64) {
        // as attnForwardTask: GEMMs for sequences attending to more than 64 positions
        const own = 4 * (st * d + h * hd);
        const par = 4 * (ps * d + h * hd);
        const pAt = P.byteOffset + 4 * pb;
        const gAt = G.byteOffset + 4 * pb;
        // dP = dO_h·V_hᵀ
        g(dOut.byteOffset + own, v.byteOffset + own, gAt + 4 * off, L, L, hd, d, 1, 1, d, W, 1, 0);
        if (off > 0) g(dOut.byteOffset + own, v.byteOffset + par, gAt, L, off, hd, d, 1, 1, d, W, 1, 0);
        // dV_h += Pᵀ·dO_h (the parent's rows gather every continuation's share, in sequence order)
        g(pAt + 4 * off, dOut.byteOffset + own, dv.byteOffset + own, L, hd, L, 1, W, d, 1, d, 1, 1);
        if (off > 0) g(pAt, dOut.byteOffset + own, dv.byteOffset + par, off, hd, L, 1, W, d, 1, d, 1, 1);
        // dS = P∘(dP − rowsum(P∘dP))/√hd, in place of dP
        for (let i = 0; i < L; i++) {
          const pr = pb + i * W;
          const last = off + i;
          let rowDot = 0;
          for (let j = 0; j <= last; j++) rowDot += P[pr + j]! * G[pr + j]!;
          for (let j = 0; j <= last; j++) G[pr + j] = P[pr + j]! * (G[pr + j]! - rowDot) * invSqrt;
          for (let j = last + 1; j < W; j++) G[pr + j] = 0;
        }
        // dQ_h += dS·K_h; dK_h += dSᵀ·Q_h
        g(gAt + 4 * off, k.byteOffset + own, dq.byteOffset + own, L, hd, L, W, 1, d, 1, d, 1, 1);
        if (off > 0) g(gAt, k.byteOffset + par, dq.byteOffset + own, L, hd, off, W, 1, d, 1, d, 1, 1);
        g(gAt + 4 * off, q.byteOffset + own, dk.byteOffset + own, L, hd, L, 1, W, d, 1, d, 1, 1);
        if (off > 0) g(gAt, q.byteOffset + own, dk.byteOffset + par, off, hd, L, 1, W, d, 1, d, 1, 1);
        continue;
      }
      for (let i = 0; i < L; i++) {
        const oi = (st + i) * d + h * hd;
        const last = off + i;
        const pr = pb + i * W;
        let rowDot = 0;
        for (let j = 0; j <= last; j++) {
          const vj = (j < off ? ps + j : st + j - off) * d + h * hd;
          const pij = P[pr + j]!;
          let dot = 0;
          for (let e = 0; e < hd; e++) {
            dot += dOut[oi + e]! * v[vj + e]!;
            dv[vj + e] += pij * dOut[oi + e]!;
          }
          dP[j] = dot;
          rowDot += dot * pij;
        }
        for (let j = 0; j <= last; j++) {
          const dS = P[pr + j]! * (dP[j]! - rowDot) * invSqrt;
          if (dS === 0) continue;
          const kj = (j < off ? ps + j : st + j - off) * d + h * hd;
          for (let e = 0; e < hd; e++) {
            dq[oi + e] += dS * k[kj + e]!;
            dk[kj + e] += dS * q[oi + e]!;
          }
        }
      }
    }
  }
}

/** GELU (tanh form, one exp) of elements [lo, hi). a: x, y. */
export function geluTask(a: A[], _s: number[], lo: number, hi: number): void {
  const x = a[0]!, y = a[1]!;
  const c = Math.sqrt(2 / Math.PI);
  for (let i = lo; i < hi; i++) {
    const v = x[i]!;
    y[i] = v - v / (1 + Math.exp(2 * c * (v + 0.044715 * v * v * v)));
  }
}

/** GELU backward of elements [lo, hi). a: x, dy, dx. */
export function geluBackwardTask(a: A[], _s: number[], lo: number, hi: number): void {
  const x = a[0]!, dy = a[1]!, dx = a[2]!;
  const c = Math.sqrt(2 / Math.PI);
  for (let i = lo; i < hi; i++) {
    const v = x[i]!;
    const sg = 1 / (1 + Math.exp(2 * c * (v + 0.044715 * v * v * v)));
    const dInner = c * (1 + 3 * 0.044715 * v * v);
    dx[i] = dy[i]! * (1 - sg + 2 * v * sg * (1 - sg) * dInner);
  }
}

/** Layer norm of rows [lo, hi). a: x, g, b, y, mean, rstd; s: d. */
export function layerNormTask(a: A[], s: number[], lo: number, hi: number): void {
  const x = a[0]!, g = a[1]!, b = a[2]!, y = a[3]!, mean = a[4]!, rstd = a[5]!;
  const d = s[0]!;
  for (let r = lo; r < hi; r++) {
    const o = r * d;
    let mu = 0;
    for (let i = 0; i < d; i++) mu += x[o + i]!;
    mu /= d;
    let va = 0;
    for (let i = 0; i < d; i++) {
      const t = x[o + i]! - mu;
      va += t * t;
    }
    const rs = 1 / Math.sqrt(va / d + 1e-5);
    mean[r] = mu;
    rstd[r] = rs;
    for (let i = 0; i < d; i++) y[o + i] = (x[o + i]! - mu) * rs * g[i]! + b[i]!;
  }
}

/** dx += layer-norm backward of rows [lo, hi), without the g and b gradients. a: dy, x, g, mean, rstd, dx; s: d. */
export function layerNormBackwardTask(a: A[], s: number[], lo: number, hi: number): void {
  const dy = a[0]!, x = a[1]!, g = a[2]!, mean = a[3]!, rstd = a[4]!, dx = a[5]!;
  const d = s[0]!;
  for (let r = lo; r < hi; r++) {
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
    }
    const mDyG = sumDyG / d;
    const mDyGX = sumDyGXhat / d;
    for (let i = 0; i < d; i++) {
      const xhat = (x[o + i]! - mu) * rs;
      dx[o + i] += rs * (dy[o + i]! * g[i]! - mDyG - xhat * mDyGX);
    }
  }
}

/** In-place log-softmax of rows [lo, hi). a: x; s: row length. */
export function logSoftmaxTask(a: A[], s: number[], lo: number, hi: number): void {
  const x = a[0]!;
  const n = s[0]!;
  for (let r = lo; r < hi; r++) {
    const off = r * n;
    let max = -Infinity;
    for (let i = 0; i < n; i++) if (x[off + i]! > max) max = x[off + i]!;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += Math.exp(x[off + i]! - max);
    const lse = max + Math.log(sum);
    for (let i = 0; i < n; i++) x[off + i] = x[off + i]! - lse;
  }
}

/**
 * dlogits of rows [lo, hi): Σ over contributions e at row rows[e] of g_e·(onehot(target_e) −
 * softmax), in contribution order. a: logprobs, targets, dLogprob, rows, dlogits (zeroed); s: V, count.
 */
export function dlogitsTask(a: A[], s: number[], lo: number, hi: number): void {
  const lp = a[0]!, targets = a[1]!, dLogprob = a[2]!, rows = a[3]!, dl = a[4]!;
  const V = s[0]!, count = s[1]!;
  for (let e = 0; e < count; e++) {
    const t = rows[e]!;
    if (t < lo || t >= hi) continue;
    const g = dLogprob[e]!;
    if (g === 0) continue;
    const o = t * V;
    for (let i = 0; i < V; i++) dl[o + i] -= g * Math.exp(lp[o + i]!);
    dl[o + targets[e]!] += g;
  }
}

/**
 * Elementwise over [lo, hi), the output c last in `a`: op 0 (a: x, y, c): c = x + α·y; op 1 (a: y,
 * z, c): c = c + (y + z); op 2 (a: c): c = c·α. s: op, α.
 */
export function elementwiseTask(a: A[], s: number[], lo: number, hi: number): void {
  const c = a[a.length - 1]!;
  const op = s[0]!, alpha = s[1]!;
  if (op === 0) {
    const x = a[0]!, y = a[1]!;
    for (let i = lo; i < hi; i++) c[i] = x[i]! + alpha * y[i]!;
  } else if (op === 1) {
    const y = a[0]!, z = a[1]!;
    for (let i = lo; i < hi; i++) c[i] = c[i]! + (y[i]! + z[i]!);
  } else {
    for (let i = lo; i < hi; i++) c[i] = c[i]! * alpha;
  }
}

/** Every task, by the index parallelFor sends to the helper thread. */
export const TASKS = [attnForwardTask, attnBackwardTask, geluTask, geluBackwardTask, layerNormTask, layerNormBackwardTask, logSoftmaxTask, dlogitsTask, elementwiseTask] as const;

export type Task = (typeof TASKS)[number];
