// Asking for keys. Work that needs the Tinker cloud asks for the API key where it starts, instead of
// failing later with "no key": one warning with a "Set API Key" button, shared by runs and the
// playground. And the "Set … API Key" commands (Tinker's, W&B's) share one prompt: a password box,
// validated as typed, the key stored in SecretStorage and the store confirmed.
import * as vscode from 'vscode';
import type { ResolvedBackend } from '../../core/config/backendKinds';
import { COMMAND } from '../common/commandIds';
import { windowUi } from '../common/windowUi';
import type { ApiKeyStore } from './secrets';

/** True when `backend` can be used: not the cloud, or a key is set (after offering to set one). */
export async function haveKeyFor(backend: ResolvedBackend, apiKeys: Pick<ApiKeyStore, 'get'>, what: string): Promise<boolean> {
  if (backend.kind !== 'cloud' || (await apiKeys.get())) return true;
  const action = await vscode.window.showWarningMessage(`${what} uses the Tinker cloud, which needs an API key.`, 'Set API Key');
  if (action === 'Set API Key') await vscode.commands.executeCommand(COMMAND.setApiKey);
  return Boolean(await apiKeys.get());
}

export interface KeyPrompt {
  /** "Tinker API key", "W&B API key" */
  what: string;
  title: string;
  prompt: string;
  placeHolder?: string;
  /** a problem with a typed value, or undefined (the store checks again) */
  validate(value: string): string | undefined;
  store: { set(key: string): Promise<void> };
}

/** A "Set … API Key" command: the key given as the argument (tests, keybindings) or typed in a password box. False when cancelled. */
export async function promptAndStoreKey(p: KeyPrompt, keyArg: unknown): Promise<boolean> {
  const key =
    typeof keyArg === 'string'
      ? keyArg
      : await windowUi.showInputBox({ title: p.title, prompt: p.prompt, placeHolder: p.placeHolder, password: true, ignoreFocusOut: true, validateInput: (v) => p.validate(v) });
  if (key === undefined) return false;
  await p.store.set(key);
  void vscode.window.showInformationMessage(`${p.what} saved in VS Code secret storage.`);
  return true;
}

/** A "Clear … API Key" command. */
export async function clearStoredKey(what: string, store: { clear(): Promise<void> }): Promise<void> {
  await store.clear();
  void vscode.window.showInformationMessage(`${what} removed from VS Code secret storage.`);
}
