// Worker-thread side of WorkerBackend: a LocalBackend answering method calls from the parent.
import { parentPort, workerData } from 'node:worker_threads';
import { initCompute } from '../compute';
import { LocalBackend, LocalBackendOptions } from './backend';

const options = workerData as LocalBackendOptions;
const backend = new LocalBackend(options);
const methods: Record<string, (...args: never[]) => unknown> = {
  ping: () => 'pong',
  createTrainingModel: backend.createTrainingModel.bind(backend),
  forwardBackward: backend.forwardBackward.bind(backend),
  optimStep: backend.optimStep.bind(backend),
  exportState: backend.exportState.bind(backend),
  importState: backend.importState.bind(backend),
  releaseTrainingModel: backend.releaseTrainingModel.bind(backend),
  createSampler: backend.createSampler.bind(backend),
  sample: backend.sample.bind(backend),
  releaseSampler: backend.releaseSampler.bind(backend),
  close: backend.close.bind(backend),
};

// Calls run one at a time, in arrival order: the model is not re-entrant.
let queue: Promise<unknown> = initCompute({ threads: options.gemmThreads ?? 1, log: (l) => console.error(`[engine] ${l}`) });
parentPort!.on('message', (msg: { id: number; method: string; args: never[] }) => {
  queue = queue.then(async () => {
    try {
      const fn = methods[msg.method];
      if (!fn) throw new Error(`unknown method ${msg.method}`);
      const value = await fn(...msg.args);
      parentPort!.postMessage({ id: msg.id, ok: true, value });
    } catch (err) {
      parentPort!.postMessage({ id: msg.id, ok: false, message: (err as Error)?.message ?? String(err) });
    }
  });
});
