// The engine's GEMM entry point for the model code: one synchronous gemm() in the three layouts
// (A·B, Aᵀ·B, A·Bᵀ), backed by the WASM SIMD kernel once initCompute() has run, else by the
// pure-TypeScript reference. allocF32() hands out Float32Arrays that live inside the kernel's
// fixed-size memory, so gemm on them copies nothing; any other Float32Array works too (copied).
//
// Memory rules: one kernel per thread (each worker that calls initCompute gets its own). Its memory
// is sized once (memoryMB) and never grows, so allocF32 views never detach; when it is full,
// allocF32 quietly returns an ordinary array. C must not overlap A or B.
// Threads: with { threads: 2 } a helper thread shares every product above minParallelFlops: both
// threads claim chunks of it until none are left. The memory is then a
// SharedArrayBuffer: postMessage shares allocF32 arrays instead of copying them and refuses them in
// a transfer list, so send `.slice()` copies across a MessagePort. Use threads: 1 when the engine
// already keeps both cores busy with its own threads.
// parallelFor() runs the model's other loops (src/engine/compute/tasks.ts) shared the same way:
// chunks of the index range, on the same shared memory.
import { ComputeOptions, GemmKernel, TaskArray } from './kernel';
import { GemmOptions, gemmReference } from './reference';
import { TASKS, Task } from './tasks';
import { errorMessage } from '../../core/errors';

export { ComputeOptions, GemmKernel, TaskArray } from './kernel';
export { TASKS } from './tasks';
export { GemmOptions, gemmReference, gemmStrides } from './reference';

export interface ComputeInfo {
  /** which implementation gemm() uses */
  kernel: 'wasm-simd' | 'reference';
  threads: 1 | 2;
  /** size of the kernel's memory (what allocF32 can hand out, minus a little scratch) */
  memoryBytes: number;
  /** why the reference is active, when it is */
  reason?: string;
}

let kernel: GemmKernel | undefined;
let info: ComputeInfo = { kernel: 'reference', threads: 1, memoryBytes: 0, reason: 'initCompute() not called yet' };
let pending: Promise<ComputeInfo> | undefined;
let warnedUninitialised = false;

/**
 * Sets up the WASM SIMD kernel for this thread (falls back to the reference if WebAssembly SIMD is
 * unavailable, and says so once on stderr or through `log`). Only the first call's options count:
 * arrays from allocF32 must stay valid, so the kernel is never replaced.
 */
export function initCompute(opts: ComputeOptions & { log?: (line: string) => void } = {}): Promise<ComputeInfo> {
  pending ??= (async () => {
    const log = opts.log ?? ((l: string) => console.error(`[compute] ${l}`));
    try {
      kernel = await GemmKernel.create(opts);
      info = { kernel: 'wasm-simd', threads: kernel.threads, memoryBytes: kernel.memory.buffer.byteLength };
      log(`gemm: WASM SIMD kernel, ${kernel.threads} thread(s), ${info.memoryBytes >> 20} MiB memory`);
    } catch (err) {
      info = { kernel: 'reference', threads: 1, memoryBytes: 0, reason: errorMessage(err) };
      log(`gemm: WASM SIMD kernel unavailable (${info.reason}); using the pure-TypeScript reference`);
    }
    return info;
  })();
  return pending;
}

export function computeInfo(): ComputeInfo {
  return info;
}

/** C[m×n] = alpha·op(A)·op(B) (+ C if accumulate); row-major; op(A) is m×k, op(B) is k×n. */
export function gemm(a: Float32Array, b: Float32Array, c: Float32Array, m: number, n: number, k: number, opts?: GemmOptions): void {
  if (kernel) {
    kernel.gemm(a, b, c, m, n, k, opts);
    return;
  }
  if (!pending && !warnedUninitialised) {
    warnedUninitialised = true;
    console.error('[compute] gemm: initCompute() not called; using the pure-TypeScript reference');
  }
  gemmReference(a, b, c, m, n, k, opts);
}

/**
 * Runs `task` (one of src/engine/compute/tasks.ts) over the index range [0, n): shared with the GEMM
 * helper thread when there is one (chunks of the range, claimed by whichever thread is free), else
 * all here. The results are the same either way (each output is computed by one thread, in a fixed
 * order). Arrays in the kernel's memory (allocF32) are shared; others are copied in, and `outputs`
 * back out.
 */
export function parallelFor(task: Task, n: number, inputs: readonly TaskArray[], outputs: readonly TaskArray[], nums: readonly number[]): void {
  if (kernel) {
    kernel.parallelFor(TASKS.indexOf(task), n, inputs, outputs, nums);
    return;
  }
  task([...inputs, ...outputs] as Array<Float32Array | Int32Array>, nums as number[], 0, n);
}

/**
 * A zeroed Int32Array of `length` elements inside the kernel's memory when there is room, else an
 * ordinary one (release with freeF32 too).
 */
export function allocI32(length: number): Int32Array {
  const f = kernel?.alloc(length);
  return f ? new Int32Array(f.buffer, f.byteOffset, length) : new Int32Array(length);
}

/**
 * A zeroed Float32Array of `length` elements inside the kernel's memory when there is room (then
 * gemm on it copies nothing), else an ordinary Float32Array. Never detaches. Release it with freeF32
 * when done, or its bytes stay taken for the life of the thread. `zeroed` false: the contents are
 * unspecified (reused memory is not cleared), for an array the caller writes whole before reading.
 */
export function allocF32(length: number, zeroed = true): Float32Array {
  return kernel?.alloc(length, zeroed) ?? new Float32Array(length);
}

/**
 * For tests: what allocF32(length, false) fills its kernel-memory arrays with (NaN shows an array
 * read before it was written whole); undefined restores the default (no fill).
 */
export function setUnzeroedFill(value: number | undefined): void {
  if (kernel) kernel.unzeroedFill = value;
}

/**
 * Like allocF32, but takes the kernel's memory only while at least `keepFreeBytes` stay free after
 * it (room for gemm's own copies of operands from outside), else an ordinary Float32Array.
 */
export function allocF32Sparing(length: number, keepFreeBytes: number, zeroed = true): Float32Array {
  if (kernel && kernel.largestFreeBytes() >= length * 4 + keepFreeBytes) return allocF32(length, zeroed);
  return new Float32Array(length);
}

/** Gives an allocF32 array's bytes back; the array must not be used afterwards. Other arrays: no-op. */
export function freeF32(arr: Float32Array | Int32Array): void {
  if (kernel?.owns(arr)) kernel.free(arr);
}

/** true when `arr` lives in the kernel's memory (gemm on it needs no copy) */
export function isKernelArray(arr: Float32Array): boolean {
  return kernel?.owns(arr) ?? false;
}
