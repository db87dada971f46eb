// The commands of the runs folder: Open Runs Folder, Refresh Runs, and Open Arithmetic Example (the
// example a first run starts from, copied into the workspace).
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { Handler, registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import { openArithmeticExample } from './example';
import type { RunsModel } from './runsModel';

export interface RunsFolderCommandServices {
  log: Log;
  runs: RunsModel;
  /** also called by Refresh Runs (the server's training runs are fetched again) */
  onRefresh?: () => void;
  /** where the bundled example lives (<extension>/examples) */
  extensionPath: string;
}

export function registerRunsFolderCommands(s: RunsFolderCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.openRunsFolder]: () => openRunsFolder(s),
    [COMMAND.refreshRuns]: () => {
      s.onRefresh?.();
      return s.runs.refresh();
    },
    [COMMAND.openExample]: (which?: unknown) => openArithmeticExample(s.extensionPath, which),
  };
  return registerTable(table, s.log);
}

async function openRunsFolder(s: RunsFolderCommandServices): Promise<void> {
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
