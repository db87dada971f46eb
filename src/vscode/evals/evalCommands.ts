// The evaluation commands: "Tinker: Open Eval Results…" (a results folder's panel: {dir}, an
// Explorer folder, or picked from the workspace's evaluations), "Tinker: Run Eval" (a *.eval.json
// spec: its CodeLens, the Explorer, the active editor) and "Tinker: Evaluate Checkpoints…" (runs and
// checkpoints of the Runs and Checkpoints views, the multi-selection, or picked); and the spec's
// CodeLenses (Run eval · Open results).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import * as fs from 'node:fs';
import { checkpointsOf, datasetFields, EvalOutcome, EvalRunnerServices, evaluateSpec, runEvalSpec, writeSpecUndoable } from './evalRunner';
import { resultsDirOf } from './evalFolders';
import { isEnvFile } from '../../core/env/files';

export type EvalCommandServices = EvalRunnerServices;

export function registerEvalCommands(s: EvalCommandServices): vscode.Disposable[] {
  return [
    ...registerTable(
      {
        [COMMAND.openEvalResults]: (arg?: unknown) => openEvalResults(s, arg),
        [COMMAND.runEval]: (arg?: unknown) => runEvalCommand(s, arg),
        [COMMAND.evaluateCheckpoints]: (arg?: unknown, selection?: unknown) => evaluateCheckpoints(s, arg, selection),
      },
      s.log,
    ),
    vscode.languages.registerCodeLensProvider({ scheme: 'file', pattern: '**/*.eval.json' }, new EvalSpecLenses()),
  ];
}

/** "Run eval" and, once it has results, "Open results" above an eval spec. */
class EvalSpecLenses implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses = [new vscode.CodeLens(top, { title: '$(play) Run eval', command: COMMAND.runEval, arguments: [{ specFile: doc.uri.fsPath }] })];
    const dir = resultsDirOf(doc.uri.fsPath);
    if (fs.existsSync(path.join(dir, 'targets'))) lenses.push(new vscode.CodeLens(top, { title: '$(checklist) Open results', command: COMMAND.openEvalResults, arguments: [{ dir }] }));
    return lenses;
  }
}

async function runEvalCommand(s: EvalCommandServices, arg: unknown): Promise<EvalOutcome | undefined> {
  let specFile: string | undefined;
  if (arg instanceof vscode.Uri) specFile = arg.fsPath;
  else if (arg !== undefined) {
    const { z } = await import('zod');
    const spec = z.object({ specFile: z.string().min(1) });
    // a row of the Runs view whose results folder has its spec: run it again (resume, new targets)
    const row = z.object({ node: z.object({ evalResults: z.object({ spec: z.string().min(1) }) }) }).transform((n) => ({ specFile: n.node.evalResults.spec }));
    const parsed = z.union([spec, row]).safeParse(arg);
    if (!parsed.success) throw new Error(`Tinker: Run Eval: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    specFile = parsed.data.specFile;
  } else {
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active?.scheme === 'file' && active.fsPath.endsWith('.eval.json')) specFile = active.fsPath;
    else {
      const specs = await vscode.workspace.findFiles('**/*.eval.json', '**/node_modules/**', 500);
      const picked = await vscode.window.showQuickPick(specs.map((u) => ({ label: vscode.workspace.asRelativePath(u), file: u.fsPath })), { title: 'Tinker: Run Eval', placeHolder: 'Which eval spec?' });
      specFile = picked?.file;
    }
  }
  if (!specFile) return undefined;
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === specFile);
  if (doc?.isDirty) await doc.save();
  return runEvalSpec(s, specFile);
}

/** Pick checkpoints → dataset → grader → n; writes `<dataset>.eval.json`'s sibling spec and runs it. */
async function evaluateCheckpoints(s: EvalCommandServices, arg: unknown, selection: unknown): Promise<EvalOutcome | undefined> {
  const title = 'Tinker: Evaluate Checkpoints';
  const checkpoints = await checkpointsOf(s, arg, selection);
  if (!checkpoints) return undefined;
  const { z } = await import('zod');
  const given = z.object({ dataset: z.string().min(1).optional(), grader: z.string().min(1).optional(), n: z.number().int().positive().optional(), max_tokens: z.number().int().positive().optional() }).passthrough().safeParse(arg);
  const opts = given.success ? given.data : {};
  const defaultUri = vscode.workspace.workspaceFolders?.[0]?.uri;
  const dataset = opts.dataset ?? (await vscode.window.showOpenDialog({ title: `${title} (2/4): the problems (JSONL)`, canSelectMany: false, filters: { 'JSON Lines': ['jsonl'] }, ...(defaultUri ? { defaultUri } : {}) }))?.[0]?.fsPath;
  if (!dataset) return undefined;
  const grader =
    opts.grader ??
    (await vscode.window.showOpenDialog({ title: `${title} (3/4): the grader (a reward file, or an environment file *.env.py … whose episodes are scored)`, canSelectMany: false, filters: { 'Reward or environment file': ['py', 'mjs', 'cjs', 'js', 'ts'] }, defaultUri: vscode.Uri.file(path.dirname(dataset)) }))?.[0]?.fsPath;
  if (!grader) return undefined;
  let n = opts.n;
  if (n === undefined) {
    const text = await vscode.window.showInputBox({ title: `${title} (4/4)`, prompt: 'Samples per problem (n): pass@k is reported for k up to n', value: '4', validateInput: (v) => (/^[1-9]\d{0,3}$/.test(v.trim()) ? undefined : 'a whole number from 1 to 9999') });
    if (text === undefined) return undefined;
    n = Number(text.trim());
  }
  // an environment takes each dataset line whole: no prompt or answer field to ask for
  const fields = isEnvFile(grader) ? {} : await datasetFields(dataset);
  const base = path.basename(dataset).replace(/\.jsonl$/i, '');
  const specFile = path.join(path.dirname(dataset), `${base}-checkpoints.eval.json`);
  const { readBackend } = await import('../common/settings');
  const backend = (await readBackend()).kind;
  await writeSpecUndoable(specFile, { ...evaluateSpec({ specFile, dataset, fields, grader, n, checkpoints, backend }), ...(opts.max_tokens ? { max_tokens: opts.max_tokens } : {}) });
  return runEvalSpec(s, specFile);
}

/** Opens the panel; resolves to true when a panel shows the folder. */
async function openEvalResults(s: EvalCommandServices, arg: unknown): Promise<boolean> {
  let dir: string | undefined;
  if (arg instanceof vscode.Uri) dir = arg.fsPath;
  else if (typeof arg === 'string' && arg) dir = arg;
  else if (arg !== undefined) {
    const { z } = await import('zod');
    const row = z.object({ evalResults: z.object({ dir: z.string().min(1) }) }).transform((n) => n.evalResults);
    // a row of the Runs view: {kind: 'section', node: {kind: 'evalResults', evalResults}}
    const parsed = z.union([z.object({ dir: z.string().min(1) }), row, z.object({ node: row }).transform((n) => n.node)]).safeParse(arg);
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
