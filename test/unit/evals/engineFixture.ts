// The eval tests' engine: the embedded engine in this process with the shipped weights (arith-gpt,
// arith-chat), real HTTP on 127.0.0.1:0, its compute backend counting the sampling requests and
// samples it serves (so a test can say what a resumed eval asked for).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ServiceClient } from '../../../src/core/tinker/client';
import type { ComputeBackend } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { startEngineServer, type EngineServer } from '../../../src/engine/server';

export interface CountingEngine {
  dir: string;
  server: EngineServer;
  /** sampling requests and samples the engine's compute backend served */
  served: { requests: number; samples: number };
  connect(): Promise<ServiceClient>;
  cacheDir(): string;
  close(): Promise<void>;
}

/** A fresh temp folder with the counting engine in it; close() stops the engine and removes the folder. */
export async function startCountingEngine(tmpPrefix: string): Promise<CountingEngine> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  const served = { requests: 0, samples: 0 };
  const real = await createComputeBackend({});
  const counting: ComputeBackend = Object.create(real);
  counting.sample = (id, req) => {
    served.requests++;
    served.samples += req.numSamples;
    return real.sample(id, req);
  };
  let server: EngineServer;
  try {
    server = await startEngineServer({ dataDir: path.join(dir, 'engine-data'), backend: counting, longPollMs: 2000 });
  } catch (err) {
    await real.close();
    throw err;
  }
  return {
    dir,
    server,
    served,
    connect: () => ServiceClient.connect({ baseUrl: server.url, clientVersion: 'test' }),
    cacheDir: () => path.join(dir, 'cache'),
    close: async () => {
      await server.close();
      await real.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
