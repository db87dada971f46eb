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
  /** row pitch of A as stored, in elements (default: its width, k, or m when transA) — e.g. one head's columns of a wider matrix */
  lda?: number;
  /** row pitch of B as stored (default n, or k when transB) */
  ldb?: number;
  /** row pitch of C (default n); elements between rows are left untouched */
  ldc?: number;
}

/** Element strides of op(A), op(B) and C: op(A)[i][p] = a[i*sai + p*sap], op(B)[p][j] = b[p*sbp + j*sbj], C[i][j] = c[i*ldc + j]. */
export interface GemmStrides {
  sai: number;
  sap: number;
  sbp: number;
  sbj: number;
  ldc: number;
  /** elements each operand spans from its first to its last element (0 when empty) */
  spanA: number;
  spanB: number;
  spanC: number;
}

function pitch(name: string, given: number | undefined, width: number): number {
  const ld = given ?? width;
  if (!Number.isInteger(ld) || ld < width) throw new Error(`gemm: ${name} must be an integer ≥ ${width}, got ${given}`);
  return ld;
}

const span = (rows: number, cols: number, ld: number): number => (rows === 0 || cols === 0 ? 0 : (rows - 1) * ld + cols);

export function gemmStrides(m: number, n: number, k: number, opts: GemmOptions): GemmStrides {
  const [aRows, aCols] = opts.transA ? [k, m] : [m, k];
  const [bRows, bCols] = opts.transB ? [n, k] : [k, n];
  const lda = pitch('lda', opts.lda, aCols);
  const ldb = pitch('ldb', opts.ldb, bCols);
  const ldc = pitch('ldc', opts.ldc, n);
  return {
    sai: opts.transA ? 1 : lda,
    sap: opts.transA ? lda : 1,
    sbp: opts.transB ? 1 : ldb,
    sbj: opts.transB ? ldb : 1,
    ldc,
    spanA: span(aRows, aCols, lda),
    spanB: span(bRows, bCols, ldb),
    spanC: span(m, n, ldc),
  };
}

/** Checks shapes and pitches against the arrays' lengths; shared by every implementation. */
export function checkGemmArgs(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  c: ArrayLike<number>,
  m: number,
  n: number,
  k: number,
  opts: GemmOptions = {},
): GemmStrides {
  for (const [name, v] of [['m', m], ['n', n], ['k', k]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`gemm: ${name} must be a non-negative integer, got ${v}`);
  }
  const st = gemmStrides(m, n, k, opts);
  if (a.length < st.spanA) throw new Error(`gemm: A has ${a.length} elements, needs ${st.spanA} (m=${m}, k=${k}, lda=${opts.lda ?? 'default'})`);
  if (b.length < st.spanB) throw new Error(`gemm: B has ${b.length} elements, needs ${st.spanB} (k=${k}, n=${n}, ldb=${opts.ldb ?? 'default'})`);
  if (c.length < st.spanC) throw new Error(`gemm: C has ${c.length} elements, needs ${st.spanC} (m=${m}, n=${n}, ldc=${opts.ldc ?? 'default'})`);
  return st;
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
  const { sai, sap, sbp, sbj, ldc } = checkGemmArgs(a, b, c, m, n, k, opts);
  const alpha = opts.alpha ?? 1;
  const row = new Float64Array(n);
  for (let i = 0; i < m; i++) {
    row.fill(0);
    for (let p = 0; p < k; p++) {
      const av = a[i * sai + p * sap]!;
      const bp = p * sbp;
      for (let j = 0; j < n; j++) row[j]! += av * b[bp + j * sbj]!;
    }
    const ci = i * ldc;
    if (opts.accumulate) for (let j = 0; j < n; j++) c[ci + j] = c[ci + j]! + alpha * row[j]!;
    else for (let j = 0; j < n; j++) c[ci + j] = alpha * row[j]!;
  }
}
