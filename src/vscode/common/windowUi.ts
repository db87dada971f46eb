// The few window calls that wait on a person (an input box, a warning's buttons, a folder picker) or leave VS Code
// (opening a browser), behind one seam: the extension-host tests answer and record them through
// the test handles (testHooks.ts) instead of a person or a real browser. Outside tests these are
// VS Code's own calls, unchanged.
import * as vscode from 'vscode';
import { toDisposable, type Releasable } from './lifecycle';

export interface WindowUi {
  showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined>;
  showWarningMessage(message: string, ...items: string[]): Thenable<string | undefined>;
  openExternal(target: vscode.Uri): Thenable<boolean>;
  showOpenDialog(options: vscode.OpenDialogOptions): Thenable<vscode.Uri[] | undefined>;
}

const vscodeUi: WindowUi = {
  showInputBox: (options) => vscode.window.showInputBox(options),
  showWarningMessage: (message, ...items) => vscode.window.showWarningMessage(message, ...items),
  openExternal: (target) => vscode.env.openExternal(target),
  showOpenDialog: (options) => vscode.window.showOpenDialog(options),
};

let current: WindowUi = vscodeUi;

/** What the extension calls. */
export const windowUi: WindowUi = {
  showInputBox: (options) => current.showInputBox(options),
  showWarningMessage: (message, ...items) => current.showWarningMessage(message, ...items),
  openExternal: (target) => current.openExternal(target),
  showOpenDialog: (options) => current.showOpenDialog(options),
};

/** For the extension-host tests (through the test handles): replaces some calls until disposed. */
export function overrideWindowUi(patch: Partial<WindowUi>): Releasable {
  const previous = current;
  current = { ...current, ...patch };
  return toDisposable(() => {
    current = previous;
  });
}
