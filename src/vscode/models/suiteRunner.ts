// The suite runner the Models view hands the registry: src/core/suite/run.ts on this window's
// connection, tokenizer cache, runs folder and Python interpreter.
import * as vscode from 'vscode';
import type { SuiteRunner } from '../../core/suite/contract';
import type { Log } from '../common/log';
import { resolvePython } from '../common/pythonInterpreter';
import { readBackendFor } from '../common/settings';
import type { TinkerConnection } from '../connection/connection';

export interface SuiteRunnerServices {
  log: Log;
  connection: Pick<TinkerConnection, 'open'>;
  cacheDir: string;
  runsFolder(): string;
}

export async function windowSuiteRunner(s: SuiteRunnerServices, registryFile: string): Promise<SuiteRunner> {
  const { suiteRunner } = await import('../../core/suite/run');
  const python = (await resolvePython(vscode.Uri.file(registryFile), s.log)).path;
  return suiteRunner({
    connect: async (sp) => s.connection.open(await readBackendFor(sp.backend, sp.base_url)),
    cacheDir: s.cacheDir,
    ...(python ? { python } : {}),
    runsDirs: [s.runsFolder()],
    log: (line) => s.log.info(`suite: ${line}`),
  });
}
