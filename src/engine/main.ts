// The embedded engine as a process: `node dist/engine.js --port 0 --data-dir DIR [--host 127.0.0.1]`.
// Prints "Tinker engine listening on http://127.0.0.1:<port>" once ready (and sends {type: 'ready',
// url} over IPC when forked). Every request needs the per-launch token as its API key. Stops on SIGTERM/SIGINT, or when the parent's IPC channel goes away.
import { randomBytes } from 'node:crypto';
import { ENGINE_USAGE, parseEngineArgs } from './args';
import { createComputeBackend } from './model';
import { startEngineServer } from './server';
import { SIMULATION_ENV, parseServiceSimulation } from './server/simulation';
import { errorMessage } from '../core/errors';

async function main(): Promise<void> {
  const args = parseEngineArgs(process.argv.slice(2));
  if (args.help) {
    console.log(ENGINE_USAGE);
    return;
  }
  const backend = await createComputeBackend({ inWorker: args.inWorker, gemmThreads: 2 });
  // the launcher passes the token in the environment; started by hand, the engine makes one and prints it
  const given = process.env.TINKER_ENGINE_TOKEN?.trim();
  const apiKey = given || `tml-local-${randomBytes(24).toString('hex')}`;
  delete process.env.TINKER_ENGINE_TOKEN;
  // tests that start the engine as a process give it the service simulation in its environment
  const simulation = process.env[SIMULATION_ENV]?.trim() ? parseServiceSimulation(process.env[SIMULATION_ENV]!, SIMULATION_ENV) : undefined;
  const server = await startEngineServer({ port: args.port, host: args.host, dataDir: args.dataDir, backend, apiKey, log: (l) => console.error(`[engine] ${l}`), ...(simulation ? { serviceSimulation: simulation } : {}) });
  if (simulation) console.error(`[engine] service simulation on (${SIMULATION_ENV}): ${JSON.stringify(simulation)}`);
  console.log(`Tinker engine listening on ${server.url}`);
  if (!given) console.log(`API key (TINKER_API_KEY) for this engine: ${apiKey}`);
  console.error(`[engine] data dir ${args.dataDir}; models: ${backend.listBaseModels().map((m) => m.name).join(', ')}`);
  process.send?.({ type: 'ready', url: server.url });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    await backend.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());
}

main().catch((err: unknown) => {
  console.error(`engine: ${errorMessage(err)}`);
  process.exit(1);
});
