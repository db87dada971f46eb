// The embedded engine's compute layer: createComputeBackend() gives the in-thread backend, or the
// same backend in a worker thread (so an HTTP server in this thread stays responsive while it trains).
import type { ComputeBackend } from '../contract';
import { LocalBackend, LocalBackendOptions } from './backend';
import { WorkerBackend } from './workerBackend';

export interface ComputeBackendOptions extends LocalBackendOptions {
  inWorker?: boolean;
}

export async function createComputeBackend(opts: ComputeBackendOptions = {}): Promise<ComputeBackend> {
  if (opts.inWorker) return WorkerBackend.start({ weightsDir: opts.weightsDir, config: opts.config });
  return new LocalBackend(opts);
}

export { LocalBackend };
