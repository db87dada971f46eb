// Work that needs the Tinker cloud asks for the API key where it starts, instead of failing later
// with "no key": one warning with a "Set API Key" button, shared by runs and the playground.
import * as vscode from 'vscode';
import type { ResolvedBackend } from '../../core/config/backendKinds';
import { COMMAND } from '../common/commandIds';
import type { ApiKeyStore } from './secrets';

/** True when `backend` can be used: not the cloud, or a key is set (after offering to set one). */
export async function haveKeyFor(backend: ResolvedBackend, apiKeys: Pick<ApiKeyStore, 'get'>, what: string): Promise<boolean> {
  if (backend.kind !== 'cloud' || (await apiKeys.get())) return true;
  const action = await vscode.window.showWarningMessage(`${what} uses the Tinker cloud, which needs an API key.`, 'Set API Key');
  if (action === 'Set API Key') await vscode.commands.executeCommand(COMMAND.setApiKey);
  return Boolean(await apiKeys.get());
}
