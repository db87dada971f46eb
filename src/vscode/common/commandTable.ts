// The command table: every command of the extension is registered through registerTable, so that a
// failing command shows an error and logs it (redacted); it never throws into the extension host.
// The ids are in commandIds.ts.
import * as vscode from 'vscode';
import type { Log } from './log';
import { errorMessage } from '../../core/errors';

export type Handler = (...args: unknown[]) => unknown;

/** Registers each handler so that a failure is logged and shown, never thrown into the host. */
export function registerTable(table: Record<string, Handler>, log: Log): vscode.Disposable[] {
  return Object.entries(table).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(...args);
      } catch (err) {
        log.error(`${id} failed`, err);
        void vscode.window.showErrorMessage(log.redactor.redact(errorMessage(err)));
        return undefined;
      }
    }),
  );
}
