// The engine process's command line: `--port N --host H --data-dir DIR --in-process`, parsed by
// node:util's parseArgs (unknown options and missing values are errors that name the option).
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { engineStoreDir } from './storeDir';

export const ENGINE_USAGE = 'usage: engine [--port N] [--host 127.0.0.1] [--data-dir DIR] [--in-process]';

export interface EngineArgs {
  port: number;
  host: string;
  dataDir: string;
  /** the model's maths in a worker thread (default), or in the server's own thread */
  inWorker: boolean;
  help: boolean;
}

export function parseEngineArgs(argv: string[]): EngineArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'data-dir': { type: 'string', default: engineStoreDir() },
      'in-process': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) throw new Error(`--port must be 0..65535 (got "${values.port}")`);
  return { port, host: values.host, dataDir: path.resolve(values['data-dir']), inWorker: !values['in-process'], help: values.help };
}
