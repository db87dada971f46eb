// The connection's commands: Select Backend, Set / Clear API Key, Set / Clear W&B API Key and Show Available Models,
// each a small adapter from VS Code UI (quick picks, input boxes, notifications) to the services.
// Optional arguments let tests and keybindings run a command without its prompts. The ids are in
// common/commandIds.ts; registerTable (common/commandTable.ts) shows and logs a failure.
import * as vscode from 'vscode';
import { BackendKind, isBackendKind } from '../../core/config/backendKinds';
import { TinkerConnection } from './connection';
import { Log } from '../common/log';
import { clearStoredKey, promptAndStoreKey } from './apiKeyPrompt';
import { ApiKeyStore, validateApiKey, validateWandbKey, type WandbKeyStore } from './secrets';
import { customBaseUrlSetting, readBackend, writeBackend } from '../common/settings';
import { COMMAND } from '../common/commandIds';
import { Handler, registerTable } from '../common/commandTable';
import { commandArg } from '../common/commandArgs';

export interface ConnectionCommandServices {
  log: Log;
  apiKeys: ApiKeyStore;
  wandbKeys: WandbKeyStore;
  connection: TinkerConnection;
}

export function registerConnectionCommands(s: ConnectionCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.selectBackend]: (kind?: unknown, url?: unknown) => selectBackend(s, kind, url),
    [COMMAND.setApiKey]: (key?: unknown) => setApiKey(s, key),
    [COMMAND.clearApiKey]: () => clearStoredKey('Tinker API key', s.apiKeys),
    [COMMAND.showModels]: (opts?: unknown) => showModels(s, opts),
    [COMMAND.setWandbApiKey]: (key?: unknown) =>
      promptAndStoreKey(
        {
          what: 'W&B API key',
          title: 'Tinker: Set W&B API Key',
          prompt: 'Your Weights & Biases API key (wandb.ai/authorize). Kept in VS Code secret storage; sent only to the W&B host.',
          validate: validateWandbKey,
          store: s.wandbKeys,
        },
        key,
      ),
    [COMMAND.clearWandbApiKey]: () => clearStoredKey('W&B API key', s.wandbKeys),
  };
  return registerTable(table, s.log);
}

const BACKEND_ITEMS: Array<vscode.QuickPickItem & { backend: BackendKind }> = [
  { backend: 'local', label: '$(vm) Local engine', description: 'offline, free', detail: 'A small real trainer started by the extension on 127.0.0.1: try the whole pipeline before spending GPU money.' },
  { backend: 'cloud', label: '$(cloud) Tinker cloud', description: 'needs an API key', detail: 'The Tinker service. The key is kept in VS Code secret storage (or TINKER_API_KEY).' },
  { backend: 'custom', label: '$(server) Custom server…', description: 'self-hosted', detail: 'A Tinker-compatible server such as SkyRL at a base URL you give.' },
];

async function selectBackend(s: ConnectionCommandServices, kindArg: unknown, urlArg: unknown): Promise<BackendKind | undefined> {
  let kind = isBackendKind(kindArg) ? kindArg : undefined;
  if (!kind) {
    let current: string | undefined;
    try {
      current = (await readBackend()).kind;
    } catch {
      current = undefined;
    }
    const picked = await vscode.window.showQuickPick(
      BACKEND_ITEMS.map((i) => ({ ...i, picked: i.backend === current, description: `${i.description}${i.backend === current ? ' · current' : ''}` })),
      { title: 'Tinker: Select Backend', placeHolder: 'Where should training and sampling run?', matchOnDetail: true },
    );
    kind = picked?.backend;
  }
  if (!kind) return undefined;
  let customUrl: string | undefined;
  if (kind === 'custom') {
    customUrl =
      typeof urlArg === 'string'
        ? urlArg
        : await vscode.window.showInputBox({
            title: 'Tinker: Custom Server URL',
            prompt: 'Base URL of the Tinker-compatible server',
            placeHolder: 'http://127.0.0.1:8000',
            value: customBaseUrlSetting() || 'http://127.0.0.1:8000',
            validateInput: (v) => (/^https?:\/\/[^\s/]+/.test(v.trim()) ? undefined : 'Enter an http:// or https:// URL'),
            ignoreFocusOut: true,
          });
    if (customUrl === undefined) return undefined;
    customUrl = customUrl.trim();
  }
  await writeBackend(kind, customUrl);
  s.log.info(`backend set to ${kind}${customUrl ? ` (${customUrl})` : ''}`);
  if (kind === 'cloud' && !(await s.apiKeys.get()) && kindArg === undefined) {
    const set = await vscode.window.showWarningMessage('The Tinker cloud needs an API key.', 'Set API Key');
    if (set) await setApiKey(s, undefined);
  }
  return kind;
}

function setApiKey(s: ConnectionCommandServices, keyArg: unknown): Promise<boolean> {
  return promptAndStoreKey(
    {
      what: 'Tinker API key',
      title: 'Tinker: Set API Key',
      prompt: 'Your Tinker API key. It is stored in VS Code secret storage, never in settings or logs.',
      placeHolder: 'tml-…',
      validate: validateApiKey,
      store: s.apiKeys,
    },
    keyArg,
  );
}

interface ModelRow {
  name: string;
  maxContextLength?: number;
}

/**
 * Lists the models the current backend serves (starting the local engine if needed). Called with
 * { quiet: true } it returns the list without showing a picker (for tests and other commands).
 */
async function showModels(s: ConnectionCommandServices, opts: unknown): Promise<ModelRow[] | undefined> {
  const quiet = (await commandArg(COMMAND.showModels, 'options', opts, ({ z }) => z.strictObject({ quiet: z.boolean().optional() }).optional()))?.quiet === true;
  const models = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Tinker: listing models' },
    async () => {
      const client = await s.connection.get();
      const caps = await client.capabilities();
      return caps.supported_models.flatMap((m) => (m.model_name ? [{ name: m.model_name, maxContextLength: m.max_context_length ?? undefined }] : []));
    },
  );
  if (quiet) return models;
  const picked = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m.name, description: m.maxContextLength ? `context ${m.maxContextLength} tokens` : undefined })),
    { title: 'Tinker: Models on this backend', placeHolder: 'Pick a model to copy its name' },
  );
  if (picked) {
    await vscode.env.clipboard.writeText(picked.label);
    void vscode.window.setStatusBarMessage(`Copied ${picked.label}`, 4000);
  }
  return models;
}
