// The embedded engine's compute layer: createComputeBackend() gives the in-thread backend, or the
// same backend in a worker thread (so an HTTP server in this thread stays responsive while it trains).
import { initCompute } from '../compute';
import type { ComputeBackend } from '../contract';
import { LocalBackend, LocalBackendOptions } from './backend';
import { WorkerBackend } from './workerBackend';

export interface ComputeBackendOptions extends LocalBackendOptions {
  inWorker?: boolean;
  /** GEMM threads of the WASM kernel (2 pays off when nothing else keeps the second core busy) */
  gemmThreads?: 1 | 2;
}

export async function createComputeBackend(opts: ComputeBackendOptions = {}): Promise<ComputeBackend> {
  if (opts.inWorker) return WorkerBackend.start({ weightsDir: opts.weightsDir, config: opts.config, gemmThreads: opts.gemmThreads ?? 1 });
  await initCompute({ threads: opts.gemmThreads ?? 1, log: () => undefined });
  return new LocalBackend(opts);
}

export { LocalBackend };
