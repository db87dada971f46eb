// The embedded engine as a process: `node dist/engine.js --port 0 --data-dir DIR [--host 127.0.0.1]`.
// Prints "Tinker engine listening on http://127.0.0.1:<port>" once ready (and sends {type: 'ready',
// url} over IPC when forked). Every request needs the per-launch token as its API key. Stops on SIGTERM/SIGINT, or when the parent's IPC channel goes away.
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { createComputeBackend } from './model';
import { startEngineServer } from './server';

function parseArgs(argv: string[]): { port: number; host: string; dataDir: string; inWorker: boolean } {
  const out = { port: 0, host: '127.0.0.1', dataDir: path.join(os.homedir(), '.cache', 'tinker-studio', 'engine'), inWorker: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--port') out.port = Number(value());
    else if (a === '--host') out.host = value();
    else if (a === '--data-dir') out.dataDir = path.resolve(value());
    else if (a === '--in-process') out.inWorker = false;
    else if (a === '--help' || a === '-h') {
      console.log('usage: engine [--port N] [--host 127.0.0.1] [--data-dir DIR] [--in-process]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see --help)`);
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new Error(`--port must be 0..65535`);
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const backend = await createComputeBackend({ inWorker: args.inWorker, gemmThreads: 2 });
  // the launcher passes the token in the environment; started by hand, the engine makes one and prints it
  const given = process.env.TINKER_ENGINE_TOKEN?.trim();
  const apiKey = given || `tml-local-${randomBytes(24).toString('hex')}`;
  delete process.env.TINKER_ENGINE_TOKEN;
  const server = await startEngineServer({ port: args.port, host: args.host, dataDir: args.dataDir, backend, apiKey, log: (l) => console.error(`[engine] ${l}`) });
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
  console.error(`engine: ${(err as Error)?.message ?? err}`);
  process.exit(1);
});
