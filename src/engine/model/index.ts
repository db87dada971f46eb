// The embedded engine's compute layer: createComputeBackend() gives the in-thread backend, or the
// same backend in a worker thread (so an HTTP server in this thread stays responsive while it trains).
import { initCompute } from '../compute';
import type { ComputeBackend } from '../contract';
import { ENGINE_MEMORY_MB, LocalBackend, LocalBackendOptions } from './backend';
import { WorkerBackend } from './workerBackend';

export interface ComputeBackendOptions extends LocalBackendOptions {
  inWorker?: boolean;
  /** GEMM threads of the WASM kernel (2 pays off when nothing else keeps the second core busy) */
  gemmThreads?: 1 | 2;
  /** where a missing WASM SIMD kernel is reported (default: stderr) */
  warn?: (line: string) => void;
}

export async function createComputeBackend(opts: ComputeBackendOptions = {}): Promise<ComputeBackend> {
  if (opts.inWorker) return WorkerBackend.start({ weightsDir: opts.weightsDir, config: opts.config, gemmThreads: opts.gemmThreads ?? 1 });
  const info = await initCompute({ threads: opts.gemmThreads ?? 1, memoryMB: ENGINE_MEMORY_MB, log: () => undefined });
  // the reference GEMM is some 10× slower: say so rather than train slowly without a word
  if (info.kernel === 'reference') (opts.warn ?? ((l: string) => console.error(`[engine] ${l}`)))(`gemm: WASM SIMD kernel unavailable (${info.reason}); using the pure-TypeScript reference, which is much slower`);
  return new LocalBackend(opts);
}

export { LocalBackend };
