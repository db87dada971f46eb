// The general commands (backend, key, runs folder, models, example), each a small adapter from VS
// Code UI (quick picks, input boxes, notifications) to the services, and registerTable, the wrapper
// every command of the extension is registered through: a failing command shows an error and logs
// it (redacted); it never throws into the extension host. Optional arguments let tests and
// keybindings run a command without its prompts. The ids are in commandIds.ts.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { BackendKind, isBackendKind } from '../../core/config/backendKinds';
import { CheckpointNode, checkpointPath, targetOf } from '../checkpoints/checkpointsTree';
import { TinkerConnection } from '../connection/connection';
import { openArithmeticExample } from '../runs/example';
import { Log } from './log';
import { RunsModel } from '../runs/runsModel';
import { ApiKeyStore, validateApiKey } from '../connection/secrets';
import { customBaseUrlSetting, readBackend, writeBackend } from './settings';
import { COMMAND } from './commandIds';

export interface CommandServices {
  log: Log;
  apiKeys: ApiKeyStore;
  runs: RunsModel;
  connection: TinkerConnection;
  /** also called by Refresh Runs (the server's training runs are fetched again) */
  onRefresh?: () => void;
  /** where the bundled example lives (<extension>/examples) */
  extensionPath: string;
}

export type Handler = (...args: unknown[]) => unknown;

export function registerCommands(s: CommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.selectBackend]: (kind?: unknown, url?: unknown) => selectBackend(s, kind, url),
    [COMMAND.setApiKey]: (key?: unknown) => setApiKey(s, key),
    [COMMAND.clearApiKey]: async () => {
      await s.apiKeys.clear();
      void vscode.window.showInformationMessage('Tinker API key removed from VS Code secret storage.');
    },
    [COMMAND.openRunsFolder]: () => openRunsFolder(s),
    [COMMAND.refreshRuns]: () => {
      s.onRefresh?.();
      return s.runs.refresh();
    },
    [COMMAND.copyCheckpointPath]: (node?: unknown, which?: unknown) => copyCheckpointPath(node, which),
    [COMMAND.showLog]: () => s.log.show(),
    [COMMAND.showModels]: (opts?: unknown) => showModels(s, opts),
    [COMMAND.openExample]: (which?: unknown) => openArithmeticExample(s.extensionPath, which),
  };
  return registerTable(table, s.log);
}

/** Registers each handler so that a failure is logged and shown, never thrown into the host. */
export function registerTable(table: Record<string, Handler>, log: Log): vscode.Disposable[] {
  return Object.entries(table).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(...args);
      } catch (err) {
        log.error(`${id} failed`, err);
        void vscode.window.showErrorMessage(log.redactor.redact(err instanceof Error ? err.message : String(err)));
        return undefined;
      }
    }),
  );
}

const BACKEND_ITEMS: Array<vscode.QuickPickItem & { backend: BackendKind }> = [
  { backend: 'local', label: '$(vm) Local engine', description: 'offline, free', detail: 'A small real trainer started by the extension on 127.0.0.1: try the whole pipeline before spending GPU money.' },
  { backend: 'cloud', label: '$(cloud) Tinker cloud', description: 'needs an API key', detail: 'The Tinker service. The key is kept in VS Code secret storage (or TINKER_API_KEY).' },
  { backend: 'custom', label: '$(server) Custom server…', description: 'self-hosted', detail: 'A Tinker-compatible server such as SkyRL at a base URL you give.' },
];

async function selectBackend(s: CommandServices, kindArg: unknown, urlArg: unknown): Promise<BackendKind | undefined> {
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

async function setApiKey(s: CommandServices, keyArg: unknown): Promise<boolean> {
  const key =
    typeof keyArg === 'string'
      ? keyArg
      : await vscode.window.showInputBox({
          title: 'Tinker: Set API Key',
          prompt: 'Your Tinker API key. It is stored in VS Code secret storage, never in settings or logs.',
          placeHolder: 'tml-…',
          password: true,
          ignoreFocusOut: true,
          validateInput: (v) => validateApiKey(v),
        });
  if (key === undefined) return false;
  await s.apiKeys.set(key);
  void vscode.window.showInformationMessage('Tinker API key saved in VS Code secret storage.');
  return true;
}

async function openRunsFolder(s: CommandServices): Promise<void> {
  const folder = s.runs.runsFolder;
  await fs.promises.mkdir(folder, { recursive: true });
  const uri = vscode.Uri.file(folder);
  const inWorkspace = vscode.workspace.getWorkspaceFolder(uri) !== undefined;
  if (inWorkspace) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
  } else {
    await vscode.commands.executeCommand('revealFileInOS', uri);
  }
}

async function copyCheckpointPath(node: unknown, which: unknown): Promise<string | undefined> {
  const n = node as CheckpointNode | undefined;
  const target = n ? targetOf(n) : undefined;
  if (target) {
    await vscode.env.clipboard.writeText(target.tinkerPath);
    void vscode.window.setStatusBarMessage(`Copied ${target.tinkerPath}`, 4000);
    return target.tinkerPath;
  }
  if (!n || n.kind !== 'checkpoint') throw new Error('Select a checkpoint in the Checkpoints view to copy its path.');
  let p = checkpointPath(n.checkpoint);
  if (which === 'state' || which === 'sampler') {
    p = which === 'state' ? n.checkpoint.state_path : n.checkpoint.sampler_path;
  } else if (n.checkpoint.state_path && n.checkpoint.sampler_path) {
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Sampler weights', description: n.checkpoint.sampler_path, value: n.checkpoint.sampler_path },
        { label: 'Training state (weights + optimizer)', description: n.checkpoint.state_path, value: n.checkpoint.state_path },
      ],
      { title: `Copy path of checkpoint ${n.checkpoint.name}` },
    );
    if (!pick) return undefined;
    p = pick.value;
  }
  if (!p) throw new Error(`Checkpoint ${n.checkpoint.name} has no tinker:// path.`);
  await vscode.env.clipboard.writeText(p);
  void vscode.window.setStatusBarMessage(`Copied ${p}`, 4000);
  return p;
}

interface ModelRow {
  name: string;
  maxContextLength?: number;
}

/**
 * Lists the models the current backend serves (starting the local engine if needed). Called with
 * { quiet: true } it returns the list without showing a picker (for tests and other commands).
 */
async function showModels(s: CommandServices, opts: unknown): Promise<ModelRow[] | undefined> {
  const quiet = typeof opts === 'object' && opts !== null && (opts as { quiet?: unknown }).quiet === true;
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
