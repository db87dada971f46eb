// One instance of the WASM SIMD GEMM: its fixed-size memory (never grown, so views never detach),
// the heap of Float32Arrays that live in that memory, and optionally a helper thread sharing the
// memory that computes half of each large product while the calling thread computes the other.
// gemm() is synchronous on the calling thread: it blocks in Atomics.wait for the helper's half.
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
// gemm, 1 task), task index, array count, lo, hi]; alpha is held as float bits. Task arrays are
// described from int slot ARR_SLOT on as (byte offset, length, type 0 f32 / 1 i32) triples, task
// numbers as float64 from byte NUM_BYTE on.
const CTRL_BYTES = 1024;
const FAILED_SLOT = 16;
const ALPHA_SLOT = 2 + 11;
const KIND_SLOT = 17;
const TASK_SLOT = 18;
const NARR_SLOT = 19;
const LO_SLOT = 20;
const HI_SLOT = 21;
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
parentPort.postMessage('ready');
let seen = 0;
for (;;) {
  Atomics.wait(ctrl, 0, seen);
  seen = Atomics.load(ctrl, 0);
  if (seen < 0) break;
  const x = ctrl;
  try {
    if (x[${KIND_SLOT}] === 0) {
      gemm(x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], ctrlF[${ALPHA_SLOT}], x[14], x[15]);
    } else {
      const arrs = [];
      for (let i = 0; i < x[${NARR_SLOT}]; i++) {
        const o = ${ARR_SLOT} + 3 * i;
        arrs.push(x[o + 2] === 1 ? new Int32Array(memory.buffer, x[o], x[o + 1]) : new Float32Array(memory.buffer, x[o], x[o + 1]));
      }
      TASKS[x[${TASK_SLOT}]](arrs, Array.from(nums), x[${LO_SLOT}], x[${HI_SLOT}], taskGemm);
    }
  } catch (err) {
    // never leave the caller parked in Atomics.wait
    Atomics.store(ctrl, ${FAILED_SLOT}, 1);
  }
  Atomics.store(ctrl, 1, seen);
  Atomics.notify(ctrl, 1);
}
`;

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

  /** A zeroed Float32Array inside the kernel's memory, or undefined when the memory is full. */
  alloc(length: number): Float32Array | undefined {
    const off = this.heap.alloc(Math.max(1, length) * 4);
    if (off === undefined) return undefined;
    const v = new Float32Array(this.memory.buffer, off, length);
    v.fill(0);
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
      const t = this.alloc(len);
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
    // split C in two along its longer side, at a multiple of the micro-tile
    let job: number[];
    let mine: number[];
    if (m >= n) {
      const h = Math.ceil(m / 2 / 4) * 4;
      mine = [a, b, c, h, n];
      job = [a + h * sai * 4, b, c + h * ldc * 4, m - h, n];
    } else {
      const h = Math.ceil(n / 2 / 8) * 8;
      mine = [a, b, c, m, h];
      job = [a, b + h * sbj * 4, c + h * 4, m, n - h];
    }
    const x = this.ctrl;
    for (let i = 0; i < 5; i++) x[2 + i] = job[i]!;
    x[7] = k;
    x[8] = sai;
    x[9] = sap;
    x[10] = sbp;
    x[11] = sbj;
    x[12] = ldc;
    this.ctrlF[ALPHA_SLOT] = alpha;
    x[14] = acc;
    x[15] = this.ws[1];
    x[KIND_SLOT] = 0;
    const seq = this.post();
    this.gemmFn(mine[0]!, mine[1]!, mine[2]!, mine[3]!, mine[4]!, k, sai, sap, sbp, sbj, ldc, alpha, acc, this.ws[0]);
    this.join(seq, 'its half of the product');
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
   * Runs TASKS[task] over the index range [0, n): with the helper thread, this thread does [0, split)
   * and the helper [split, n) (split defaults to n/2); else all of it here. Arrays outside the
   * kernel's memory are copied in (and `outputs` back out), and the task gets its thread's GEMM
   * (TaskGemm); float64 arrays or a full memory run it all on this thread without the GEMM. Each
   * task computes every output of its range the same way whatever the split, so the results do not
   * depend on the thread count.
   */
  parallelFor(task: number, n: number, inputs: readonly TaskArray[], outputs: readonly TaskArray[], nums: readonly number[], split = Math.floor(n / 2)): void {
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
        const f = this.alloc(x.length);
        if (!f) {
          fn(arrays, nums as number[], 0, n);
          return;
        }
        const t = x instanceof Int32Array ? new Int32Array(f.buffer, f.byteOffset, x.length) : f;
        t.set(x);
        temps.push(t);
        placed.push(t);
      }
      if (!this.helper || n < 2 || split <= 0 || split >= n) {
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
        c[LO_SLOT] = split;
        c[HI_SLOT] = n;
        c[KIND_SLOT] = 1;
        this.ctrlNums.fill(0);
        this.ctrlNums.set(nums);
        const seq = this.post();
        let mine: unknown;
        try {
          fn(placed, nums as number[], 0, split, this.taskGemm);
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
