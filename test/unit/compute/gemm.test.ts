// The WASM SIMD GEMM against the pure-TypeScript reference: every layout, accumulate and alpha,
// odd sizes in each dimension, operands inside and outside the kernel's memory, one and two threads.
import assert from 'node:assert/strict';
import { allocF32, computeInfo, freeF32, gemm, GemmKernel, GemmOptions, gemmReference, gemmStrides, initCompute, isKernelArray } from '../../../src/engine/compute';

/** deterministic values in [-1, 1) so failures reproduce */
function filled(arr: Float32Array, seed: number): Float32Array {
  let s = seed >>> 0 || 1;
  for (let i = 0; i < arr.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    arr[i] = ((s >>> 0) / 2 ** 32) * 2 - 1;
  }
  return arr;
}

/**
 * Asserts C matches the reference within the float32 error bound of a length-k dot product with any
 * summation order: |err| ≤ (k+2)·2⁻²³·(|alpha|·Σ|a||b| + |C₀|), scaled ×4 for slack.
 */
function assertClose(got: Float32Array, want: Float32Array, bound: Float32Array, k: number, what: string): void {
  const eps = 4 * (k + 2) * 2 ** -23;
  for (let i = 0; i < want.length; i++) {
    const tol = eps * bound[i]! + 1e-30;
    const err = Math.abs(got[i]! - want[i]!);
    if (!(err <= tol)) assert.fail(`${what}: C[${i}] = ${got[i]}, reference ${want[i]} (|err| ${err} > ${tol})`);
  }
}

type Place = (len: number) => Float32Array;

function check(run: typeof gemm, place: Place, m: number, n: number, k: number, opts: GemmOptions, seed: number): void {
  const st = gemmStrides(m, n, k, opts);
  const a = filled(place(st.spanA), seed);
  const b = filled(place(st.spanB), seed + 1);
  const c = filled(place(st.spanC), seed + 2);
  const want = Float32Array.from(c);
  gemmReference(a, b, want, m, n, k, opts);
  const bound = new Float32Array(c.length);
  gemmReference(a.map(Math.abs), b.map(Math.abs), bound, m, n, k, { ...opts, alpha: Math.abs(opts.alpha ?? 1), accumulate: false });
  if (opts.accumulate) for (let i = 0; i < bound.length; i++) bound[i]! += Math.abs(c[i]!);
  run(a, b, c, m, n, k, opts);
  assertClose(c, want, bound, k, `m=${m} n=${n} k=${k} ${JSON.stringify(opts)}`);
}

const LAYOUTS: Array<{ name: string; opts: GemmOptions }> = [
  { name: 'A·B', opts: {} },
  { name: 'Aᵀ·B', opts: { transA: true } },
  { name: 'A·Bᵀ', opts: { transB: true } },
  { name: 'Aᵀ·Bᵀ', opts: { transA: true, transB: true } },
];
const ODD = [1, 3, 17, 63, 65, 257];
/** each odd size in each dimension, plus k = 1, tiny products, and the few-row paths' boundaries */
const SHAPES: Array<[number, number, number]> = [
  ...ODD.map((d): [number, number, number] => [d, 17, 65]),
  ...ODD.map((d): [number, number, number] => [17, d, 63]),
  ...ODD.map((d): [number, number, number] => [65, 3, d]),
  [257, 65, 1],
  [3, 17, 1],
  [5, 9, 6],
  [32, 63, 17],
  [1, 1, 1],
  [3, 3, 3],
  [63, 257, 17],
];
const SCALINGS: GemmOptions[] = [{}, { accumulate: true }, { alpha: -0.375 }, { accumulate: true, alpha: 2.5 }];

describe('compute: reference gemm', () => {
  it('computes a hand-checked product in every layout', () => {
    // A = [[1,2,3],[4,5,6]] (2×3), B = [[1,2],[3,4],[5,6]] (3×2): A·B = [[22,28],[49,64]]
    const c = new Float32Array(4);
    gemmReference(Float32Array.of(1, 2, 3, 4, 5, 6), Float32Array.of(1, 2, 3, 4, 5, 6), c, 2, 2, 3);
    assert.deepEqual([...c], [22, 28, 49, 64]);
    gemmReference(Float32Array.of(1, 4, 2, 5, 3, 6), Float32Array.of(1, 2, 3, 4, 5, 6), c, 2, 2, 3, { transA: true });
    assert.deepEqual([...c], [22, 28, 49, 64]);
    gemmReference(Float32Array.of(1, 2, 3, 4, 5, 6), Float32Array.of(1, 3, 5, 2, 4, 6), c, 2, 2, 3, { transB: true, accumulate: true, alpha: 0.5 });
    assert.deepEqual([...c], [33, 42, 73.5, 96]);
    // A·B on a 2×2 window (lda = 3) into the even slots of a 2×3 C (ldc = 3); C[·][2] untouched
    const wide = Float32Array.of(9, 9, 9, 9, 9, 9);
    gemmReference(Float32Array.of(1, 2, 0, 3, 4, 0), Float32Array.of(1, 0, 0, 1), wide, 2, 2, 2, { lda: 3, ldc: 3 });
    assert.deepEqual([...wide], [1, 2, 9, 3, 4, 9]);
  });

  it('rejects a row pitch narrower than the matrix', () => {
    assert.throws(() => gemmReference(new Float32Array(6), new Float32Array(6), new Float32Array(4), 2, 2, 3, { lda: 2 }), /lda must be an integer ≥ 3/);
  });

  it('rejects arrays too short for the shapes', () => {
    assert.throws(() => gemmReference(new Float32Array(5), new Float32Array(6), new Float32Array(4), 2, 2, 3), /A has 5 elements, needs 6/);
  });
});

describe('compute: WASM SIMD gemm, one thread', function () {
  let k1: GemmKernel;
  before(async () => {
    k1 = await GemmKernel.create({ memoryMB: 32 });
  });

  for (const { name, opts } of LAYOUTS) {
    it(`${name} matches the reference at odd sizes, operands in the kernel's memory`, () => {
      let seed = 1;
      const copied = k1.copiedCalls;
      const place: Place = (len) => k1.alloc(len) ?? assert.fail('kernel memory full');
      for (const [m, n, k] of SHAPES) for (const s of SCALINGS) check((...x) => k1.gemm(...x), place, m, n, k, { ...opts, ...s }, seed++);
      assert.equal(k1.copiedCalls, copied, 'no call copied an operand');
    });

    it(`${name} matches the reference with ordinary Float32Arrays (copied in and out)`, () => {
      let seed = 100;
      const before = k1.copiedCalls;
      for (const [m, n, k] of SHAPES) for (const s of SCALINGS) check((...x) => k1.gemm(...x), (len) => new Float32Array(len), m, n, k, { ...opts, ...s }, seed++);
      assert.ok(k1.copiedCalls > before);
    });
  }

  it('honours row pitches (lda, ldb, ldc) in every layout and leaves the gaps of C untouched', () => {
    let seed = 300;
    const inMemory: Place = (len) => k1.alloc(len) ?? assert.fail('kernel memory full');
    for (const { opts } of LAYOUTS) {
      for (const [m, n, k] of [[17, 63, 65], [3, 17, 5], [65, 9, 1], [40, 24, 16]] as Array<[number, number, number]>) {
        const pitched: GemmOptions = { ...opts, lda: (opts.transA ? m : k) + 3, ldb: (opts.transB ? k : n) + 5, ldc: n + 7 };
        for (const s of SCALINGS) {
          check((...x) => k1.gemm(...x), inMemory, m, n, k, { ...pitched, ...s }, seed++);
          check((...x) => k1.gemm(...x), (len) => new Float32Array(len), m, n, k, { ...pitched, ...s }, seed++);
        }
      }
    }
  });

  it('spans several packed blocks in every dimension (k > kc, n > nc, m > mc)', () => {
    for (const { opts } of LAYOUTS) check((...x) => k1.gemm(...x), (len) => new Float32Array(len), 131, 517, 300, { ...opts, accumulate: true, alpha: 0.5 }, 7);
  });

  it('leaves C alone for k = 0 with accumulate, zeroes it without', () => {
    const c = Float32Array.of(1, 2, 3, 4);
    k1.gemm(new Float32Array(0), new Float32Array(0), c, 2, 2, 0, { accumulate: true });
    assert.deepEqual([...c], [1, 2, 3, 4]);
    k1.gemm(new Float32Array(0), new Float32Array(0), c, 2, 2, 0);
    assert.deepEqual([...c], [0, 0, 0, 0]);
  });

  it('falls back to the reference, still correct, when its memory cannot hold the operands', async () => {
    const small = await GemmKernel.create({ memoryMB: 8 });
    const hog = small.alloc(1_500_000);
    assert.ok(hog, 'an allocation that fits');
    assert.equal(small.alloc(1_000_000), undefined, 'the memory is full');
    check((...x) => small.gemm(...x), (len) => new Float32Array(len), 600, 300, 200, { transB: true }, 3);
  });

  it('reuses freed bytes, never grows its memory, and keeps earlier views attached', () => {
    const first = k1.alloc(1000) ?? assert.fail('alloc');
    first[999] = 42;
    const used = k1.heapUsedBytes();
    const more: Float32Array[] = [];
    for (let i = 0; i < 50; i++) more.push(k1.alloc(10_000) ?? assert.fail('alloc'));
    for (const x of more) k1.free(x);
    assert.equal(k1.heapUsedBytes(), used);
    assert.equal(first[999], 42);
    assert.equal(first.buffer.byteLength, k1.memory.buffer.byteLength);
    assert.throws(() => k1.free(new Float32Array(4)), /not allocated by allocF32/);
    k1.free(first);
    assert.throws(() => k1.free(first), /freed twice/);
  });
});

describe('compute: WASM SIMD gemm, two threads over shared memory', function () {
  let k2: GemmKernel;
  before(async () => {
    k2 = await GemmKernel.create({ memoryMB: 32, threads: 2, minParallelFlops: 0 });
  });
  after(async () => {
    await k2.dispose();
  });

  for (const { name, opts } of LAYOUTS) {
    it(`${name} matches the reference when split by rows and by columns`, () => {
      let seed = 200;
      const place: Place = (len) => k2.alloc(len) ?? assert.fail('kernel memory full');
      const shapes: Array<[number, number, number]> = [[257, 63, 65], [17, 257, 63], [9, 17, 3], [65, 65, 1], [300, 40, 300]];
      for (const [m, n, k] of shapes) for (const s of SCALINGS) check((...x) => k2.gemm(...x), place, m, n, k, { ...opts, ...s }, seed++);
      for (const [m, n, k] of [[130, 33, 40], [33, 130, 40]] as Array<[number, number, number]>) {
        const pitched: GemmOptions = { ...opts, lda: (opts.transA ? m : k) + 1, ldb: (opts.transB ? k : n) + 2, ldc: n + 3 };
        check((...x) => k2.gemm(...x), place, m, n, k, { ...pitched, accumulate: true }, seed++);
      }
    });
  }

  it('gives the same bits as one thread, whatever the chunks (rows in 2 to 8, columns in 2) and whoever took them', async () => {
    const k1 = await GemmKernel.create({ memoryMB: 8 });
    // 130 rows: 2 chunks; 1000 rows: 8 of 128 rows, the last ragged; 700 columns: 2 chunks
    const shapes: Array<[number, number, number]> = [[130, 70, 300], [1001, 70, 40], [37, 700, 50]];
    let seed = 400;
    for (const [m, n, k] of shapes) {
      for (const { name, opts } of LAYOUTS) {
        const a = filled(new Float32Array(m * k), seed++), b = filled(new Float32Array(k * n), seed++);
        const two = new Float32Array(m * n);
        const single = new Float32Array(m * n);
        k1.gemm(a, b, single, m, n, k, opts);
        k2.gemm(a, b, two, m, n, k, opts);
        assert.deepEqual([...two], [...single], `${name} ${m}×${n}×${k}`);
      }
    }
  });
});

describe('compute: module API', () => {
  it('initCompute switches gemm to the WASM kernel and allocF32 to its memory', async () => {
    const lines: string[] = [];
    const info = await initCompute({ memoryMB: 64, log: (l) => lines.push(l) });
    assert.equal(info.kernel, 'wasm-simd', info.reason);
    assert.equal(computeInfo().kernel, 'wasm-simd');
    const a = allocF32(3 * 5), b = allocF32(5 * 4), c = allocF32(3 * 4);
    assert.ok(isKernelArray(a) && isKernelArray(b) && isKernelArray(c));
    assert.ok(!isKernelArray(new Float32Array(4)));
    filled(a, 9);
    filled(b, 10);
    const want = new Float32Array(12);
    gemmReference(a, b, want, 3, 4, 5, { alpha: 3 });
    gemm(a, b, c, 3, 4, 5, { alpha: 3 });
    for (let i = 0; i < 12; i++) assert.ok(Math.abs(c[i]! - want[i]!) <= 1e-5 * (1 + Math.abs(want[i]!)));
    for (const x of [a, b, c]) freeF32(x);
    freeF32(new Float32Array(3)); // ordinary arrays are ignored
  });
});
