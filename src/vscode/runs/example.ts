// "Tinker: Open Arithmetic Example": copies the example that ships with the extension (spec, data,
// reward function) into the workspace as tinker-arithmetic/, never over files already there, and opens
// its spec and reward function. The walkthrough's second step.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export const EXAMPLE_FOLDER = 'tinker-arithmetic';
const FILES = ['arith.grpo.json', 'reward.py', 'train.jsonl', 'holdout.jsonl', 'README.md'];

/** Copies the example into `<workspace>/tinker-arithmetic` (missing files only) and opens it; returns the spec path. */
export async function openArithmeticExample(extensionPath: string, which?: unknown): Promise<string | undefined> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!root) {
    const open = await vscode.window.showInformationMessage('Open a folder first: the example is copied into the workspace so you can edit and run it.', 'Open Folder…');
    if (open) void vscode.commands.executeCommand('workbench.action.files.openFolder');
    return undefined;
  }
  const source = path.join(extensionPath, 'examples', 'arithmetic');
  const dest = path.join(root, EXAMPLE_FOLDER);
  await fs.promises.mkdir(dest, { recursive: true });
  for (const f of FILES) {
    // COPYFILE_EXCL fails on an existing file: the user's edits are kept
    await fs.promises.copyFile(path.join(source, f), path.join(dest, f), fs.constants.COPYFILE_EXCL).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  const spec = path.join(dest, 'arith.grpo.json');
  const reward = path.join(dest, 'reward.py');
  if (which === 'reward') {
    await vscode.window.showTextDocument(vscode.Uri.file(reward));
  } else {
    await vscode.window.showTextDocument(vscode.Uri.file(spec), { viewColumn: vscode.ViewColumn.One });
    await vscode.window.showTextDocument(vscode.Uri.file(reward), { viewColumn: vscode.ViewColumn.Beside, preview: false });
  }
  return spec;
}
