// Pure-TypeScript GEMM in the three layouts training needs. It is the oracle of the kernel's tests
// and the fallback when the WASM kernel cannot be instantiated, so it favours obvious correctness
// (with a cache-friendly loop order) over speed.

export interface GemmOptions {
  /** op(A) = Aᵀ: A is stored k×m */
  transA?: boolean;
  /** op(B) = Bᵀ: B is stored n×k */
  transB?: boolean;
  /** C += alpha·op(A)·op(B) instead of C = alpha·op(A)·op(B) */
  accumulate?: boolean;
  /** scale of the product (default 1) */
  alpha?: number;
}

/** Throws if the arrays are too short for the shapes; shared by every implementation. */
export function checkGemmArgs(a: ArrayLike<number>, b: ArrayLike<number>, c: ArrayLike<number>, m: number, n: number, k: number): void {
  for (const [name, v] of [['m', m], ['n', n], ['k', k]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`gemm: ${name} must be a non-negative integer, got ${v}`);
  }
  if (a.length < m * k) throw new Error(`gemm: A has ${a.length} elements, needs ${m * k} (m=${m}, k=${k})`);
  if (b.length < k * n) throw new Error(`gemm: B has ${b.length} elements, needs ${k * n} (k=${k}, n=${n})`);
  if (c.length < m * n) throw new Error(`gemm: C has ${c.length} elements, needs ${m * n} (m=${m}, n=${n})`);
}

/** C[m×n] = alpha·op(A)·op(B) (+ C if accumulate); row-major; op(A) is m×k, op(B) is k×n. */
export function gemmReference(
  a: Float32Array,
  b: Float32Array,
  c: Float32Array,
  m: number,
  n: number,
  k: number,
  opts: GemmOptions = {},
): void {
  checkGemmArgs(a, b, c, m, n, k);
  const alpha = opts.alpha ?? 1;
  // op(A)[i][p] = a[i*sai + p*sap]; op(B)[p][j] = b[p*sbp + j*sbj]
  const sai = opts.transA ? 1 : k;
  const sap = opts.transA ? m : 1;
  const sbp = opts.transB ? 1 : n;
  const sbj = opts.transB ? k : 1;
  const row = new Float64Array(n);
  for (let i = 0; i < m; i++) {
    row.fill(0);
    for (let p = 0; p < k; p++) {
      const av = a[i * sai + p * sap]!;
      const bp = p * sbp;
      for (let j = 0; j < n; j++) row[j]! += av * b[bp + j * sbj]!;
    }
    const ci = i * n;
    if (opts.accumulate) for (let j = 0; j < n; j++) c[ci + j] = c[ci + j]! + alpha * row[j]!;
    else for (let j = 0; j < n; j++) c[ci + j] = alpha * row[j]!;
  }
}
