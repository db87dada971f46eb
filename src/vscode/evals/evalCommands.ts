// "Tinker: Open Eval Results…": the evaluation results panel of a results folder — from a results
// folder's node in the Runs view ({dir} or an Explorer folder), at the end of an eval, or from the
// palette (pick one of the workspace's evaluations).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import type { EvalPanels } from './evalPanels';

export interface EvalCommandServices {
  log: Log;
  evals: EvalPanels;
}

export function registerEvalCommands(s: EvalCommandServices): vscode.Disposable[] {
  return registerTable({ [COMMAND.openEvalResults]: (arg?: unknown) => openEvalResults(s, arg) }, s.log);
}

/** Opens the panel; resolves to true when a panel shows the folder. */
async function openEvalResults(s: EvalCommandServices, arg: unknown): Promise<boolean> {
  let dir: string | undefined;
  if (arg instanceof vscode.Uri) dir = arg.fsPath;
  else if (typeof arg === 'string' && arg) dir = arg;
  else if (arg !== undefined) {
    const { z } = await import('zod');
    const parsed = z.union([z.object({ dir: z.string().min(1) }), z.object({ evalResults: z.object({ dir: z.string().min(1) }) }).transform((n) => n.evalResults)]).safeParse(arg);
    if (!parsed.success) throw new Error(`Tinker: Open Eval Results: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    dir = parsed.data.dir;
  }
  const { isResultsFolder, workspaceEvalFolders } = await import('./evalFolders');
  if (!dir) {
    const found = await workspaceEvalFolders();
    if (!found.length) {
      void vscode.window.showInformationMessage('Tinker: no evaluation results in this workspace yet: run an *.eval.json spec first.');
      return false;
    }
    const picked = await vscode.window.showQuickPick(
      found.map((f) => ({ label: f.name, description: vscode.workspace.asRelativePath(f.dir), dir: f.dir })),
      { title: 'Tinker: Open Eval Results', placeHolder: 'Which evaluation?' },
    );
    if (!picked) return false;
    dir = picked.dir;
  }
  if (!(await isResultsFolder(dir))) throw new Error(`${dir} holds no evaluation results (no summary.json, eval.json or targets/)`);
  await s.evals.open({ dir: path.resolve(dir) });
  return true;
}
