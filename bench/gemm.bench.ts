// GEMM throughput of the engine's WASM SIMD kernel (1 and 2 threads) in the three layouts training
// uses, at the engine's shapes, next to onnxruntime-node's single-thread MatMul/Gemm measured in the
// same run when that package loads. Prints GFLOP/s and the ratio ours/onnxruntime per row.
//   BENCH=gemm node scripts/bench.mjs        (REPS=<n> timed repetitions, default 5)
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { GemmKernel, GemmOptions } from '../src/engine/compute';
import { errorMessage } from '../src/core/errors';

interface Shape {
  label: string;
  m: number;
  n: number;
  k: number;
}

const SHAPES: Shape[] = [
  { label: 'attn/proj 4096×256·256×256', m: 4096, n: 256, k: 256 },
  { label: 'ffn up 4096×256·256×1024', m: 4096, n: 1024, k: 256 },
  { label: 'ffn down 4096×1024·1024×256', m: 4096, n: 256, k: 1024 },
  { label: 'weight grad 256×4096·4096×256', m: 256, n: 256, k: 4096 },
  { label: 'square 512', m: 512, n: 512, k: 512 },
];
const LAYOUTS: Array<{ name: string; opts: GemmOptions }> = [
  { name: 'A·B', opts: {} },
  { name: 'Aᵀ·B', opts: { transA: true } },
  { name: 'A·Bᵀ', opts: { transB: true } },
];
const REPS = Number(process.env.REPS ?? 5);

/** median wall time in ms of `reps` runs after two warm-up runs */
async function time(run: () => unknown, reps = REPS): Promise<number> {
  for (let i = 0; i < 2; i++) await run();
  const t: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await run();
    t.push(performance.now() - t0);
  }
  t.sort((x, y) => x - y);
  return t[Math.floor(t.length / 2)]!;
}

// ---- onnxruntime-node, loaded only if scripts/bench.mjs could install it; the graph is written here as raw protobuf ----

interface OrtTensor {
  readonly data: unknown;
}
interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
interface Ort {
  InferenceSession: { create(model: Uint8Array, opts: Record<string, unknown>): Promise<OrtSession> };
  Tensor: new (type: 'float32', data: Float32Array, dims: number[]) => OrtTensor;
}

function isOrt(x: unknown): x is Ort {
  if (typeof x !== 'object' || x === null || !('InferenceSession' in x) || !('Tensor' in x)) return false;
  const s = x.InferenceSession;
  return (typeof s === 'function' || (typeof s === 'object' && s !== null)) && 'create' in s && typeof s.create === 'function' && typeof x.Tensor === 'function';
}

/** onnxruntime-node from the folder scripts/bench.mjs installed it into (TINKER_BENCH_BASELINE_DIR). */
function loadOrt(): Ort | string {
  const dir = process.env.TINKER_BENCH_BASELINE_DIR;
  if (!dir) return 'TINKER_BENCH_BASELINE_DIR is not set (run through npm run bench)';
  try {
    const mod: unknown = createRequire(path.join(dir, 'package.json'))('onnxruntime-node');
    return isOrt(mod) ? mod : 'onnxruntime-node loaded but does not look like its API';
  } catch (err) {
    return errorMessage(err).split('\n')[0]!;
  }
}

// minimal protobuf writer for the ONNX ModelProto fields a one-node graph needs
const varint = (v: number): number[] => {
  const out: number[] = [];
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
};
const fieldVarint = (no: number, v: number): number[] => [...varint(no * 8), ...varint(v)];
const fieldBytes = (no: number, bytes: number[]): number[] => [...varint(no * 8 + 2), ...varint(bytes.length), ...bytes];
const fieldString = (no: number, s: string): number[] => fieldBytes(no, [...Buffer.from(s, 'utf8')]);

function valueInfo(name: string, dims: number[]): number[] {
  const shape = dims.flatMap((d) => fieldBytes(1, fieldVarint(1, d)));
  const tensorType = [...fieldVarint(1, 1 /* FLOAT */), ...fieldBytes(2, shape)];
  return [...fieldString(1, name), ...fieldBytes(2, fieldBytes(1, tensorType))];
}

/** Y = op(A)·op(B): MatMul for the plain layout, Gemm(transA/transB) for the transposed ones. */
function onnxModel(s: Shape, opts: GemmOptions): Uint8Array {
  const aDims = opts.transA ? [s.k, s.m] : [s.m, s.k];
  const bDims = opts.transB ? [s.n, s.k] : [s.k, s.n];
  const attr = (name: string): number[] => fieldBytes(5, [...fieldString(1, name), ...fieldVarint(3, 1), ...fieldVarint(20, 2 /* INT */)]);
  const plain = !opts.transA && !opts.transB;
  const node = [
    ...fieldString(1, 'A'),
    ...fieldString(1, 'B'),
    ...fieldString(2, 'Y'),
    ...fieldString(4, plain ? 'MatMul' : 'Gemm'),
    ...(opts.transA ? attr('transA') : []),
    ...(opts.transB ? attr('transB') : []),
  ];
  const graph = [
    ...fieldBytes(1, node),
    ...fieldString(2, 'gemm'),
    ...fieldBytes(11, valueInfo('A', aDims)),
    ...fieldBytes(11, valueInfo('B', bDims)),
    ...fieldBytes(12, valueInfo('Y', [s.m, s.n])),
  ];
  const model = [...fieldVarint(1, 8), ...fieldBytes(8, [...fieldString(1, ''), ...fieldVarint(2, 13)]), ...fieldBytes(7, graph)];
  return Uint8Array.from(model);
}

function fill(arr: Float32Array, seed: number): Float32Array {
  for (let i = 0; i < arr.length; i++) arr[i] = Math.sin(i * 0.37 + seed) * 0.5;
  return arr;
}

const pad = (s: string, w: number): string => s.padEnd(w);
const num = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(1)).padStart(8);

async function main(): Promise<void> {
  const ort = loadOrt();
  console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(typeof ort === 'string' ? `onnxruntime-node: NOT LOADED (${ort}); printing our figures only` : 'onnxruntime-node: loaded, intraOpNumThreads = 1');
  console.log(`median of ${REPS} runs after 2 warm-ups; GFLOP/s = 2·m·n·k / time\n`);
  const maxLen = Math.max(...SHAPES.flatMap((s) => [s.m * s.k, s.k * s.n, s.m * s.n]));
  const memoryMB = Math.ceil((maxLen * 3 * 4) / 2 ** 20) + 16;
  const k1 = await GemmKernel.create({ memoryMB });
  const k2 = await GemmKernel.create({ memoryMB, threads: 2 });
  const arrays = (k: GemmKernel): Float32Array[] => [0, 1, 2].map((i) => fill(k.alloc(maxLen) ?? new Float32Array(maxLen), i));
  const [a1, b1, c1] = arrays(k1);
  const [a2, b2, c2] = arrays(k2);
  console.log(`${pad('shape', 32)}${pad('layout', 8)}${'ours 1T'.padStart(8)}${'ours 2T'.padStart(8)}${'ort 1T'.padStart(8)}${'1T/ort'.padStart(8)}${'2T/ort'.padStart(8)}`);
  const worst: number[] = [];
  for (const s of SHAPES) {
    const gflop = (2 * s.m * s.n * s.k) / 1e9;
    for (const { name, opts } of LAYOUTS) {
      const t1 = await time(() => k1.gemm(a1!, b1!, c1!, s.m, s.n, s.k, opts));
      const t2 = await time(() => k2.gemm(a2!, b2!, c2!, s.m, s.n, s.k, opts));
      let tOrt: number | undefined;
      if (typeof ort !== 'string') {
        const session = await ort.InferenceSession.create(onnxModel(s, opts), {
          intraOpNumThreads: 1,
          interOpNumThreads: 1,
          executionMode: 'sequential',
          graphOptimizationLevel: 'all',
        });
        const A = new ort.Tensor('float32', fill(new Float32Array(s.m * s.k), 0), opts.transA ? [s.k, s.m] : [s.m, s.k]);
        const B = new ort.Tensor('float32', fill(new Float32Array(s.k * s.n), 1), opts.transB ? [s.n, s.k] : [s.k, s.n]);
        tOrt = await time(() => session.run({ A, B }));
        await session.release();
      }
      const g1 = gflop / (t1 / 1e3);
      const g2 = gflop / (t2 / 1e3);
      const gO = tOrt === undefined ? undefined : gflop / (tOrt / 1e3);
      if (gO !== undefined) worst.push(g1 / gO);
      const ratio = (g: number): string => (gO === undefined ? '-' : `${((100 * g) / gO).toFixed(0)}%`).padStart(8);
      console.log(`${pad(s.label, 32)}${pad(name, 8)}${num(g1)}${num(g2)}${num(gO)}${ratio(g1)}${ratio(g2)}`);
    }
  }
  if (worst.length > 0) console.log(`\nlowest single-thread ratio ours/onnxruntime: ${(100 * Math.min(...worst)).toFixed(0)}% (goal ≥ 25%)`);
  await k2.dispose();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
