// Shared by the client-against-engine tests: an embedded engine in this process, and a supervised
// datum for its byte model.
import * as path from 'node:path';
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
