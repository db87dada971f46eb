// Worker-thread side of WorkerBackend: a LocalBackend answering method calls from the parent.
import { parentPort, workerData } from 'node:worker_threads';
import { initCompute } from '../compute';
import { ENGINE_MEMORY_MB, LocalBackend, LocalBackendOptions } from './backend';
import { errorMessage } from '../../core/errors';

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

// Calls start one at a time, in arrival order: the model is not re-entrant. A sample call is not
// waited for: it only queues its request, so the sample calls that arrive together are served as
// one batch (LocalBackend.sample).
let queue: Promise<unknown> = initCompute({ threads: options.gemmThreads ?? 1, memoryMB: ENGINE_MEMORY_MB, log: (l) => console.error(`[engine] ${l}`) });
const reply = (id: number, run: () => unknown) =>
  Promise.resolve()
    .then(run)
    .then(
      (value) => parentPort!.postMessage({ id, ok: true, value }),
      (err: unknown) => parentPort!.postMessage({ id, ok: false, message: errorMessage(err) }),
    );
parentPort!.on('message', (msg: { id: number; method: string; args: never[] }) => {
  queue = queue.then(async () => {
    const fn = methods[msg.method];
    const run = () => {
      if (!fn) throw new Error(`unknown method ${msg.method}`);
      return fn(...msg.args);
    };
    if (msg.method === 'sample') void reply(msg.id, run);
    else await reply(msg.id, run);
  });
});
