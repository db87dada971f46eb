// The LocalBackend in a worker thread behind the same async interface. Calls are messages
// {id, method, args}; typed arrays are copied by structured clone.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BaseModelInfo, ComputeBackend, StateDescription } from '../contract';
import type { LocalBackendOptions } from './backend';

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

export class WorkerBackend implements ComputeBackend {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(
    private readonly worker: Worker,
    private readonly models: BaseModelInfo[],
    private readonly describe: (state: Uint8Array) => StateDescription,
  ) {
    worker.on('message', (r: Reply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) p.resolve(r.value);
      else p.reject(new Error(r.message));
    });
    worker.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
  }

  static async start(opts: LocalBackendOptions): Promise<WorkerBackend> {
    // the worker script lives next to this file both in out/ (tsc) and in dist/ (bundled as engineWorker.js)
    const worker = new Worker(path.join(__dirname, 'engineWorker.js'), { workerData: opts });
    const { LocalBackend } = await import('./backend');
    // describeState only parses a header: done in this thread, no round trip
    const local = new LocalBackend({ ...opts });
    const b = new WorkerBackend(worker, local.listBaseModels(), (s) => local.describeState(s));
    await b.call('ping', []);
    return b;
  }

  private call<T>(method: string, args: unknown[]): Promise<T> {
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, method, args });
    });
  }

  listBaseModels(): BaseModelInfo[] {
    return this.models;
  }
  describeState(state: Uint8Array): StateDescription {
    return this.describe(state);
  }
  createTrainingModel(...a: Parameters<ComputeBackend['createTrainingModel']>) {
    return this.call<void>('createTrainingModel', a);
  }
  forwardBackward(...a: Parameters<ComputeBackend['forwardBackward']>) {
    return this.call<Awaited<ReturnType<ComputeBackend['forwardBackward']>>>('forwardBackward', a);
  }
  optimStep(...a: Parameters<ComputeBackend['optimStep']>) {
    return this.call<Record<string, number>>('optimStep', a);
  }
  exportState(...a: Parameters<ComputeBackend['exportState']>) {
    return this.call<Uint8Array>('exportState', a);
  }
  importState(...a: Parameters<ComputeBackend['importState']>) {
    return this.call<void>('importState', a);
  }
  releaseTrainingModel(...a: Parameters<ComputeBackend['releaseTrainingModel']>) {
    return this.call<void>('releaseTrainingModel', a);
  }
  createSampler(...a: Parameters<ComputeBackend['createSampler']>) {
    return this.call<void>('createSampler', a);
  }
  sample(...a: Parameters<ComputeBackend['sample']>) {
    return this.call<Awaited<ReturnType<ComputeBackend['sample']>>>('sample', a);
  }
  releaseSampler(...a: Parameters<ComputeBackend['releaseSampler']>) {
    return this.call<void>('releaseSampler', a);
  }
  async close(): Promise<void> {
    await this.call('close', []).catch(() => undefined);
    await this.worker.terminate();
  }
}
