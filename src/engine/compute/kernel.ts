// One instance of the WASM SIMD GEMM: its fixed-size memory (never grown, so views never detach),
// the heap of Float32Arrays that live in that memory, and optionally a helper thread sharing the
// memory that shares each large product (and each compute task) with the calling thread: the job is
// cut into chunks at fixed boundaries, and both threads claim chunks from a shared counter until
// none are left, so a thread whose core is briefly taken by something else does fewer chunks instead
// of holding the other up. Which thread computes a chunk never changes its result. gemm() is
// synchronous on the calling thread: it blocks in Atomics.wait until the helper is done.
import { Worker } from 'node:worker_threads';
import { buildGemmModule, DEFAULT_SHAPE, workspaceBytes } from './gemmKernel';
import { Heap } from './heap';
import { checkGemmArgs, GemmOptions, gemmReference, GemmStrides } from './reference';
import { TASKS, TaskGemm } from './tasks';

export interface ComputeOptions {
  /** size of the kernel's memory in MiB, fixed for its lifetime (default 256) */
  memoryMB?: number;
  /** 1 (default) or 2: with 2, large products are split with a helper thread over shared memory */
  threads?: 1 | 2;
  /** products below this many flops (2·m·n·k) stay on the calling thread (default 2^22) */
  minParallelFlops?: number;
}

type GemmExport = (
  a: number, b: number, c: number, m: number, n: number, k: number,
  sai: number, sap: number, sbp: number, sbj: number, ldc: number, alpha: number, accumulate: number, ws: number,
) => void;

type DotBTExport = (
  a: number, b: number, c: number, m: number, n: number, k: number, lda: number, ldb: number, ldc: number, alpha: number, accumulate: number,
) => void;

// control block at byte 0 (CTRL_BYTES): [seq, done, 14 gemm arguments, helper failed, job kind (0
// gemm, 1 task), task index, array count, then the chunking (CHUNK)]; alpha is held as float bits.
// Task arrays are described from int slot ARR_SLOT on as (byte offset, length, type 0 f32 / 1 i32)
// triples, task numbers as float64 from byte NUM_BYTE on.
const CTRL_BYTES = 1024;
const FAILED_SLOT = 16;
const ALPHA_SLOT = 2 + 11;
const KIND_SLOT = 17;
const TASK_SLOT = 18;
const NARR_SLOT = 19;
/**
 * The slots of a job's chunks: `next` the counter both threads claim from, `count` chunks of `size`
 * (rows or columns of C for a GEMM, indices for a task) over `extent`; `axis` 0 rows, 1 columns.
 */
const CHUNK = { next: 20, count: 21, size: 22, extent: 23, axis: 24 } as const;
type ChunkSlots = typeof CHUNK;
/** a task's index range is cut into at most this many chunks, a GEMM's rows too */
const MAX_CHUNKS = 8;
/** rows of C per GEMM chunk to aim for at least (each chunk packs op(B) again: free from 64 rows up, measured) */
const MIN_CHUNK_ROWS = 64;
const ARR_SLOT = 32;
const MAX_TASK_ARRAYS = 32;
const NUM_BYTE = 768;
const MAX_TASK_NUMS = 32;

/** An array a task reads or writes: in the kernel's memory, or copied there around the task. */
export type TaskArray = Float32Array | Float64Array | Int32Array;

// The helper thread: instantiates the same module on the shared memory and runs jobs posted in the
// control block until seq goes negative. Plain JS so that no extra file has to be bundled.
const HELPER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { module, memory, ws } = workerData;
const gemm = new WebAssembly.Instance(module, { env: { memory } }).exports.gemm;
const taskGemm = (a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, acc) => gemm(a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, acc, ws);
const ctrl = new Int32Array(memory.buffer, 0, ${CTRL_BYTES / 4});
const ctrlF = new Float32Array(memory.buffer, 0, ${CTRL_BYTES / 4});
const nums = new Float64Array(memory.buffer, ${NUM_BYTE}, ${MAX_TASK_NUMS});
const TASKS = [${TASKS.map((f) => f.toString()).join(', ')}];
const CHUNK = ${JSON.stringify(CHUNK)};
const gemmChunks = ${gemmChunks.toString()};
const taskChunks = ${taskChunks.toString()};
parentPort.postMessage('ready');
let seen = 0;
for (;;) {
  Atomics.wait(ctrl, 0, seen);
  seen = Atomics.load(ctrl, 0);
  if (seen < 0) break;
  const x = ctrl;
  try {
    if (x[${KIND_SLOT}] === 0) {
      gemmChunks(x, ctrlF[${ALPHA_SLOT}], ws, gemm, CHUNK);
    } else {
      const arrs = [];
      for (let i = 0; i < x[${NARR_SLOT}]; i++) {
        const o = ${ARR_SLOT} + 3 * i;
        arrs.push(x[o + 2] === 1 ? new Int32Array(memory.buffer, x[o], x[o + 1]) : new Float32Array(memory.buffer, x[o], x[o + 1]));
      }
      taskChunks(x, TASKS[x[${TASK_SLOT}]], arrs, Array.from(nums), taskGemm, CHUNK);
    }
  } catch (err) {
    // never leave the caller parked in Atomics.wait
    Atomics.store(ctrl, ${FAILED_SLOT}, 1);
  }
  Atomics.store(ctrl, 1, seen);
  Atomics.notify(ctrl, 1);
}
`;

/**
 * Claims chunks of the GEMM job in the control block until none are left, and computes each: rows
 * [lo, lo + size) of C (axis 0) or its columns (axis 1). Both threads run it on the same job. Runs
 * in the helper thread as source text, so it uses only its arguments (and Atomics).
 */
function gemmChunks(x: Int32Array, alpha: number, ws: number, gemm: GemmExport, slot: ChunkSlots): void {
  const a = x[2]!, b = x[3]!, c = x[4]!, m = x[5]!, n = x[6]!, k = x[7]!;
  const sai = x[8]!, sap = x[9]!, sbp = x[10]!, sbj = x[11]!, ldc = x[12]!, acc = x[14]!;
  const count = x[slot.count]!, size = x[slot.size]!, byRows = x[slot.axis] === 0;
  for (;;) {
    const i = Atomics.add(x, slot.next, 1);
    if (i >= count) return;
    const lo = i * size;
    if (byRows) gemm(a + 4 * lo * sai, b, c + 4 * lo * ldc, Math.min(size, m - lo), n, k, sai, sap, sbp, sbj, ldc, alpha, acc, ws);
    else gemm(a, b + 4 * lo * sbj, c + 4 * lo, m, Math.min(size, n - lo), k, sai, sap, sbp, sbj, ldc, alpha, acc, ws);
  }
}

/** As gemmChunks, for a task: index ranges [lo, lo + size) of [0, extent). Source text in the helper. */
function taskChunks(
  x: Int32Array,
  fn: (a: TaskArray[], s: number[], lo: number, hi: number, g?: TaskGemm) => void,
  arrs: TaskArray[],
  nums: number[],
  g: TaskGemm,
  slot: ChunkSlots,
): void {
  const count = x[slot.count]!, size = x[slot.size]!, extent = x[slot.extent]!;
  for (;;) {
    const i = Atomics.add(x, slot.next, 1);
    if (i >= count) return;
    const lo = i * size;
    fn(arrs, nums, lo, Math.min(extent, lo + size), g);
  }
}

const PAGE = 65536;
/** A·Bᵀ with at most this many rows runs as dot products (no packing of Bᵀ); measured crossover */
const DOT_BT_MAX_ROWS = 32;

export class GemmKernel {
  private readonly gemmFn: GemmExport;
  private readonly dotBTFn: DotBTExport;
  private readonly heap: Heap;
  private readonly ctrl: Int32Array;
  private readonly ctrlF: Float32Array;
  private readonly ctrlNums: Float64Array;
  private readonly ws: [number, number];
  private helper: Worker | undefined;
  private seq = 0;
  private readonly minParallelFlops: number;
  /** this thread's GEMM for the tasks (tasks.ts TaskGemm) */
  private readonly taskGemm: TaskGemm = (a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, acc) =>
    this.gemmFn(a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, acc, this.ws[0]);
  /** how many calls had to copy an operand in or out of the kernel's memory */
  copiedCalls = 0;

  private constructor(
    readonly memory: WebAssembly.Memory,
    private readonly module: WebAssembly.Module,
    readonly threads: 1 | 2,
    opts: ComputeOptions,
  ) {
    const { gemm, dotBT } = new WebAssembly.Instance(module, { env: { memory } }).exports;
    if (typeof gemm !== 'function' || typeof dotBT !== 'function') throw new Error('compute: the generated module lacks its exports');
    this.gemmFn = gemm;
    this.dotBTFn = dotBT;
    this.ctrl = new Int32Array(memory.buffer, 0, CTRL_BYTES / 4);
    this.ctrlF = new Float32Array(memory.buffer, 0, CTRL_BYTES / 4);
    this.ctrlNums = new Float64Array(memory.buffer, NUM_BYTE, MAX_TASK_NUMS);
    const wsBytes = workspaceBytes(DEFAULT_SHAPE);
    this.ws = [CTRL_BYTES, CTRL_BYTES + wsBytes];
    this.heap = new Heap(CTRL_BYTES + 2 * wsBytes, memory.buffer.byteLength);
    this.minParallelFlops = opts.minParallelFlops ?? 2 ** 22;
  }

  static async create(opts: ComputeOptions = {}): Promise<GemmKernel> {
    const mb = opts.memoryMB ?? 256;
    if (!(mb >= 8 && mb <= 4096)) throw new Error(`compute: memoryMB must be within 8..4096, got ${mb}`);
    const threads = opts.threads ?? 1;
    const pages = Math.ceil((mb * 1024 * 1024) / PAGE);
    const shared = threads === 2;
    const module = await WebAssembly.compile(buildGemmModule(pages, shared));
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared });
    const k = new GemmKernel(memory, module, threads, opts);
    if (threads === 2) await k.startHelper();
    return k;
  }

  private async startHelper(): Promise<void> {
    const w = new Worker(HELPER_SOURCE, { eval: true, workerData: { module: this.module, memory: this.memory, ws: this.ws[1] } });
    await new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
    // a helper parked in Atomics.wait must not keep the process alive
    w.unref();
    this.helper = w;
  }

  /** Stops the helper thread; arrays from allocF32 stay readable but gemm must not be called again. */
  async dispose(): Promise<void> {
    const w = this.helper;
    if (!w) return;
    this.helper = undefined;
    Atomics.store(this.ctrl, 0, -1);
    Atomics.notify(this.ctrl, 0);
    await w.terminate();
  }

  owns(arr: TaskArray): boolean {
    return arr.buffer === this.memory.buffer;
  }

  /**
   * What alloc(length, false) fills its arrays with; undefined (the default) leaves whatever the
   * memory held. Tests set NaN to show that every such array is written whole before it is read.
   */
  unzeroedFill: number | undefined;

  /**
   * A Float32Array inside the kernel's memory, zeroed unless `zeroed` is false (then its contents
   * are whatever the reused memory held: for arrays the caller writes whole), or undefined when the
   * memory is full.
   */
  alloc(length: number, zeroed = true): Float32Array | undefined {
    const off = this.heap.alloc(Math.max(1, length) * 4);
    if (off === undefined) return undefined;
    const v = new Float32Array(this.memory.buffer, off, length);
    if (zeroed) v.fill(0);
    else if (this.unzeroedFill !== undefined) v.fill(this.unzeroedFill);
    return v;
  }

  free(arr: TaskArray): void {
    if (!this.owns(arr)) throw new Error('compute: freeF32 got an array that was not allocated by allocF32');
    this.heap.release(arr.byteOffset);
  }

  largestFreeBytes(): number {
    return this.heap.largestFree();
  }

  heapUsedBytes(): number {
    return this.heap.used();
  }

  /** C[m×n] = alpha·op(A)·op(B) (+ C if accumulate); row-major; op(A) is m×k, op(B) is k×n. */
  gemm(a: Float32Array, b: Float32Array, c: Float32Array, m: number, n: number, k: number, opts: GemmOptions = {}): void {
    const st = checkGemmArgs(a, b, c, m, n, k, opts);
    if (m === 0 || n === 0) return;
    if (k === 0) {
      if (!opts.accumulate) for (let i = 0; i < m; i++) c.fill(0, i * st.ldc, i * st.ldc + n);
      return;
    }
    const temps: Float32Array[] = [];
    const place = (x: Float32Array, len: number, copyIn: boolean): Float32Array | undefined => {
      if (this.owns(x)) return x;
      // written whole: copied in, or (C without copy-in) every element is an output
      const t = this.alloc(len, false);
      if (!t) return undefined;
      temps.push(t);
      if (copyIn) t.set(x.subarray(0, len));
      return t;
    };
    try {
      const wa = place(a, st.spanA, true);
      const wb = wa && place(b, st.spanB, true);
      // C is copied in when its old values count, or when it has gaps between rows to preserve
      const wc = wb && place(c, st.spanC, opts.accumulate === true || st.ldc !== n);
      if (!wa || !wb || !wc) {
        // the kernel's memory is full: stay correct, if slow
        gemmReference(a, b, c, m, n, k, opts);
        return;
      }
      if (temps.length > 0) this.copiedCalls++;
      this.run(wa.byteOffset, wb.byteOffset, wc.byteOffset, m, n, k, st, opts);
      if (wc !== c) c.set(wc.subarray(0, st.spanC));
    } finally {
      for (const t of temps) this.free(t);
    }
  }

  private run(a: number, b: number, c: number, m: number, n: number, k: number, st: GemmStrides, opts: GemmOptions): void {
    const { sai, sap, sbp, sbj, ldc } = st;
    const alpha = opts.alpha ?? 1;
    const acc = opts.accumulate ? 1 : 0;
    if (opts.transB && !opts.transA && m <= DOT_BT_MAX_ROWS) {
      this.dotBTFn(a, b, c, m, n, k, sai, sbj, ldc, alpha, acc);
      return;
    }
    if (!this.helper || 2 * m * n * k < this.minParallelFlops || (m < 8 && n < 16)) {
      this.gemmFn(a, b, c, m, n, k, sai, sap, sbp, sbj, ldc, alpha, acc, this.ws[0]);
      return;
    }
    // chunks along C's longer side, at multiples of the micro-tile (4 rows, 8 columns): rows in 2 to
    // MAX_CHUNKS chunks of about MIN_CHUNK_ROWS or more; columns in two (each column chunk packs
    // op(A) again, which costs 3 % at two chunks and 7 % at four on the weight gradients)
    const x = this.ctrl;
    const byRows = m >= n;
    const rowChunks = Math.min(MAX_CHUNKS, Math.max(2, Math.floor(m / MIN_CHUNK_ROWS)));
    const size = byRows ? Math.ceil(m / rowChunks / 4) * 4 : Math.ceil(n / 2 / 8) * 8;
    x[2] = a;
    x[3] = b;
    x[4] = c;
    x[5] = m;
    x[6] = n;
    x[7] = k;
    x[8] = sai;
    x[9] = sap;
    x[10] = sbp;
    x[11] = sbj;
    x[12] = ldc;
    this.ctrlF[ALPHA_SLOT] = alpha;
    x[14] = acc;
    x[KIND_SLOT] = 0;
    this.setChunks(byRows ? m : n, size, byRows ? 0 : 1);
    const seq = this.post();
    gemmChunks(x, alpha, this.ws[0], this.gemmFn, CHUNK);
    this.join(seq, 'its share of the product');
  }

  /** Writes a job's chunking into the control block (before post). */
  private setChunks(extent: number, size: number, axis: 0 | 1): void {
    const x = this.ctrl;
    x[CHUNK.extent] = extent;
    x[CHUNK.size] = size;
    x[CHUNK.count] = Math.ceil(extent / size);
    x[CHUNK.axis] = axis;
    x[CHUNK.next] = 0;
  }

  /** Hands the job written in the control block to the helper; returns its sequence number. */
  private post(): number {
    const seq = (this.seq = (this.seq + 1) & 0x3fffffff || 1);
    Atomics.store(this.ctrl, 0, seq);
    Atomics.notify(this.ctrl, 0);
    return seq;
  }

  /** Waits for the helper to finish job `seq` (always, even when this thread's part threw). */
  private join(seq: number, what: string): void {
    const x = this.ctrl;
    for (;;) {
      const done = Atomics.load(x, 1);
      if (done === seq) break;
      Atomics.wait(x, 1, done);
    }
    if (Atomics.exchange(x, FAILED_SLOT, 0) !== 0) throw new Error(`compute: the helper thread failed on ${what}`);
  }

  /**
   * Runs TASKS[task] over the index range [0, n): with the helper thread, cut into up to MAX_CHUNKS
   * chunks that both threads claim; else all of it here. Arrays outside the kernel's memory are
   * copied in (and `outputs` back out), and the task gets its thread's GEMM (TaskGemm); float64
   * arrays or a full memory run it all on this thread without the GEMM. Each task computes every
   * output of its range the same way whatever the chunks, so the results do not depend on the
   * thread count or on which thread took which chunk.
   */
  parallelFor(task: number, n: number, inputs: readonly TaskArray[], outputs: readonly TaskArray[], nums: readonly number[]): void {
    const fn = TASKS[task]! as (a: TaskArray[], s: number[], lo: number, hi: number, g?: TaskGemm) => void;
    const arrays = [...inputs, ...outputs];
    if (n < 1 || arrays.some((x) => x instanceof Float64Array) || arrays.length > MAX_TASK_ARRAYS || nums.length > MAX_TASK_NUMS) {
      fn(arrays, nums as number[], 0, n);
      return;
    }
    const temps: TaskArray[] = [];
    try {
      // every array in the kernel's memory, at 1 thread too: the tasks' GEMM paths need that, and
      // the same path must run whatever the thread count
      const placed: Array<Float32Array | Int32Array> = [];
      for (const x of arrays as Array<Float32Array | Int32Array>) {
        if (this.owns(x)) {
          placed.push(x);
          continue;
        }
        const f = this.alloc(x.length, false);
        if (!f) {
          fn(arrays, nums as number[], 0, n);
          return;
        }
        const t = x instanceof Int32Array ? new Int32Array(f.buffer, f.byteOffset, x.length) : f;
        t.set(x);
        temps.push(t);
        placed.push(t);
      }
      if (!this.helper || n < 2) {
        fn(placed, nums as number[], 0, n, this.taskGemm);
      } else {
        const c = this.ctrl;
        placed.forEach((x, i) => {
          const o = ARR_SLOT + 3 * i;
          c[o] = x.byteOffset;
          c[o + 1] = x.length;
          c[o + 2] = x instanceof Int32Array ? 1 : 0;
        });
        c[NARR_SLOT] = placed.length;
        c[TASK_SLOT] = task;
        c[KIND_SLOT] = 1;
        this.setChunks(n, Math.ceil(n / MAX_CHUNKS), 0);
        this.ctrlNums.fill(0);
        this.ctrlNums.set(nums);
        const seq = this.post();
        let mine: unknown;
        try {
          taskChunks(c, fn, placed, nums as number[], this.taskGemm, CHUNK);
        } catch (err) {
          mine = err;
        }
        this.join(seq, `task ${fn.name}`);
        if (mine !== undefined) throw mine;
      }
      outputs.forEach((x, i) => {
        const p = placed[inputs.length + i]!;
        if (p !== x) x.set(p);
      });
    } finally {
      for (const t of temps) this.free(t);
    }
  }
}
