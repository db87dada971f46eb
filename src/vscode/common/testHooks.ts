// The extension's internals, for its own extension-host tests only: reachable through a command that
// is registered only while the test suite runs, so they are no part of the public API (src/api.ts).
// Which internals: TinkerStudioTestHandles, declared where they are wired (src/extension.ts).
import * as vscode from 'vscode';

/** Not contributed, so it is in no palette or menu; the leading underscore marks it private. */
export const TEST_HANDLES_COMMAND = '_tinker.testHandles';

/** Set by the host-test runners (scripts/run-web-tests.mjs, test/runTest.ts) in the extension host's environment. */
export const TEST_HOOKS_ENV = 'TINKER_STUDIO_TEST_HOOKS';

/** True while the extension host runs this extension's test suite (development or installed VSIX). */
function testHooksEnabled(mode: vscode.ExtensionMode): boolean {
  return mode === vscode.ExtensionMode.Test || process.env[TEST_HOOKS_ENV] === '1';
}

/** Registers the handles' command when the test suite runs; nothing otherwise. */
export function registerTestHooks<H extends object>(mode: vscode.ExtensionMode, handles: H): vscode.Disposable[] {
  if (!testHooksEnabled(mode)) return [];
  // Called in-process by the suite: executeCommand hands back this very object, not a copy.
  return [vscode.commands.registerCommand(TEST_HANDLES_COMMAND, () => handles)];
}
