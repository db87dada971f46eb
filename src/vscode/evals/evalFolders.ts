// Where evaluations live: a results folder is `evals/<spec name>/` next to its `*.eval.json` spec (or
// any folder holding summary.json or targets/ written by the eval runner). Found in the workspace.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export const EVAL_SPEC_GLOB = '**/*.eval.json';
export const EVAL_SPEC_SUFFIX = '.eval.json';

/** The spec's name: its file name without `.eval.json`. */
export function specName(specFile: string): string {
  return path.basename(specFile).replace(/\.eval\.json$/i, '');
}

/** A spec's default results folder. */
export function resultsDirOf(specFile: string): string {
  return path.join(path.dirname(specFile), 'evals', specName(specFile));
}

/** The spec that wrote a results folder, when it sits where the default puts it. */
export async function findEvalSpec(dir: string): Promise<string | undefined> {
  const candidate = path.join(path.dirname(path.dirname(dir)), `${path.basename(dir)}${EVAL_SPEC_SUFFIX}`);
  return (await isFile(candidate)) ? candidate : undefined;
}

async function isFile(p: string): Promise<boolean> {
  return fs.stat(p).then((s) => s.isFile(), () => false);
}

/** Whether a folder holds evaluation results. */
export async function isResultsFolder(dir: string): Promise<boolean> {
  return (await isFile(path.join(dir, 'summary.json'))) || (await isFile(path.join(dir, 'eval.json'))) || fs.stat(path.join(dir, 'targets')).then((s) => s.isDirectory(), () => false);
}

export interface EvalFolder {
  name: string;
  dir: string;
  spec?: string;
}

/** The results folders of the workspace's eval specs (those that have been run). */
export async function workspaceEvalFolders(): Promise<EvalFolder[]> {
  const specs = await vscode.workspace.findFiles(EVAL_SPEC_GLOB, '**/node_modules/**', 500);
  const found: EvalFolder[] = [];
  for (const uri of specs) {
    const dir = resultsDirOf(uri.fsPath);
    if (await isResultsFolder(dir)) found.push({ name: specName(uri.fsPath), dir, spec: uri.fsPath });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name) || a.dir.localeCompare(b.dir));
}
