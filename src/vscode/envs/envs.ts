// Wires the environment-file editor (issue 36): inline validation, the CodeLens, the Play as the
// Model panel and the Dry Run Episode / Play as the Model commands. extension.ts calls this once.
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import type { TinkerConnection } from '../connection/connection';
import type { ApiKeyStore } from '../connection/secrets';
import type { Log } from '../common/log';
import { resolvePython } from '../common/pythonInterpreter';
import type { RewardFileIndex } from '../common/rewardFiles';
import { registerEnvCommands } from './envCommands';
import { ENV_SELECTOR, EnvCodeLensProvider } from './envCodeLens';
import { envPlayPanels, type EnvPlayPanels } from './envPlayPanels';
import { EnvValidator } from './envValidation';

export interface EnvEditor {
  validator: EnvValidator;
  lenses: EnvCodeLensProvider;
  panels: EnvPlayPanels;
}

export function registerEnvEditor(
  context: vscode.ExtensionContext,
  s: { log: Log; index: RewardFileIndex; connection: TinkerConnection; apiKeys: Pick<ApiKeyStore, 'get'>; cacheDir: string },
): { editor: EnvEditor; disposables: vscode.Disposable[] } {
  const validator = new EnvValidator({ log: s.log, index: s.index });
  const lenses = new EnvCodeLensProvider(validator);
  const panels = envPlayPanels({
    extensionUri: context.extensionUri,
    log: s.log,
    state: context.workspaceState,
    cacheDir: s.cacheDir,
    envSpecs: (file) => s.index.envSpecs(file),
    envFiles: async () => {
      const found = await vscode.workspace.findFiles('**/*.env.{py,js,mjs,cjs,ts}', '**/node_modules/**', 200);
      const existing = await Promise.all(found.map(async (u) => ((await fs.stat(u.fsPath).catch(() => undefined))?.isFile() ? [u.fsPath] : [])));
      return [...new Set([...(await s.index.specEnvFiles()), ...existing.flat()])].sort();
    },
    python: async (file) => (await resolvePython(vscode.Uri.file(file), s.log)).path,
    trusted: () => vscode.workspace.isTrusted,
  });
  const disposables: vscode.Disposable[] = [
    validator,
    lenses,
    panels,
    panels.registerSerializer(),
    vscode.languages.registerCodeLensProvider(ENV_SELECTOR, lenses),
    ...registerEnvCommands({ log: s.log, panels, index: s.index, connection: s.connection, apiKeys: s.apiKeys, cacheDir: s.cacheDir }),
  ];
  return { editor: { validator, lenses, panels }, disposables };
}
