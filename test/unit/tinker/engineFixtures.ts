// Shared by the client-against-engine tests: an embedded engine in this process, and a supervised
// datum for its byte model.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceClient } from '../../../src/core/tinker/client';
import { Datum, textInput } from '../../../src/core/tinker/types';
import { createComputeBackend } from '../../../src/engine/model';
import { encodeChat } from '../../../src/engine/model/models';
import { EngineServerOptions, startEngineServer } from '../../../src/engine/server';

/** The engine on `<dir>/data` with the randomly initialised model (no weights file). */
export async function startEngine(dir: string, extra: Partial<EngineServerOptions> = {}) {
  const backend = await createComputeBackend({ weightsDir: path.join(dir, 'no-weights') });
  const server = await startEngineServer({ dataDir: path.join(dir, 'data'), backend, longPollMs: 2000, ...extra });
  return { server, backend };
}

/** The chat text's tokens, each predicting the next, every target weighted 1. */
export function sftDatum(text: string): Datum {
  const toks = encodeChat(text);
  return {
    model_input: textInput(toks.slice(0, -1)),
    loss_fn_inputs: {
      target_tokens: { dtype: 'int64', data: toks.slice(1) },
      weights: { dtype: 'float32', data: toks.slice(1).map(() => 1) },
    },
  };
}

/** For a describe block: an engine in a temporary folder and a client connected to it, closed after. */
export function useEngineClient(prefix: string): { readonly client: ServiceClient; readonly url: string } {
  let dir: string | undefined;
  let engine: Awaited<ReturnType<typeof startEngine>> | undefined;
  let client: ServiceClient | undefined;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    engine = await startEngine(dir);
    client = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test', heartbeatIntervalMs: 200 });
  });
  after(async () => {
    client?.close();
    await engine?.server.close();
    await engine?.backend.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const early = () => new Error('the engine is used before its before() hook ran');
  return {
    get client() {
      if (!client) throw early();
      return client;
    },
    get url() {
      if (!engine) throw early();
      return engine.server.url;
    },
  };
}
