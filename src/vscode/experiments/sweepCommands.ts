// The sweep commands: "Tinker: Start Sweep" (the given sweep file, the active editor's, or one picked
// from the workspace; a sweep whose folder exists resumes), Resume Sweep and Cancel Sweep (the Runs
// view's sweep node, `{ sweepDir }`, or a pick among the running sweeps). Arguments parsed with zod.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SweepResult } from '../../core/experiments/runSweep';
import { COMMAND } from '../common/commandIds';
import { commandArg } from '../common/commandArgs';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import type { SweepRunner } from './sweepRunner';

export interface SweepCommandServices {
  log: Log;
  sweeps: SweepRunner;
}

/** Sweep files in the workspace: JSON, and YAML where the core reads it. */
export const SWEEP_GLOB = '**/*.sweep.{json,yaml,yml}';

export function isSweepFileName(file: string): boolean {
  return /\.sweep\.(json|ya?ml)$/i.test(file);
}

type Zod = typeof import('zod');

/** A sweep folder: the Runs view's sweep node, or `{ sweepDir }`. */
const dirArg = ({ z }: Zod) =>
  z.union([z.strictObject({ sweepDir: z.string().min(1) }).transform((a) => a.sweepDir), z.object({ kind: z.literal('sweep'), dir: z.string().min(1) }).transform((n) => n.dir)]);

/** A sweep file: its Uri (palette, CodeLens, explorer), or `{ sweepFile, maxConcurrent? }`. */
const startArg = ({ z }: Zod) =>
  z.union([
    z.custom<vscode.Uri>((v) => v instanceof vscode.Uri, 'expected a file Uri').transform((u) => ({ sweepFile: u.fsPath, maxConcurrent: undefined as number | undefined })),
    z.strictObject({ sweepFile: z.string().min(1), maxConcurrent: z.number().int().min(1).optional() }),
  ]);

export function registerSweepCommands(s: SweepCommandServices): vscode.Disposable[] {
  return registerTable(
    {
      [COMMAND.startSweep]: (arg?: unknown) => startSweep(s, arg),
      [COMMAND.resumeSweep]: (arg?: unknown) => resumeSweep(s, arg),
      [COMMAND.cancelSweep]: (arg?: unknown) => cancelSweep(s, arg),
    },
    s.log,
  );
}

async function startSweep(s: SweepCommandServices, arg: unknown): Promise<SweepResult | undefined> {
  const title = 'Tinker: Start Sweep';
  let req: { sweepFile: string; maxConcurrent?: number } | undefined;
  if (arg !== undefined) req = await commandArg(COMMAND.startSweep, 'sweep file', arg, startArg);
  else {
    const editor = vscode.window.activeTextEditor?.document;
    if (editor && editor.uri.scheme === 'file' && isSweepFileName(editor.uri.fsPath)) req = { sweepFile: editor.uri.fsPath };
    else {
      const files = await vscode.workspace.findFiles(SWEEP_GLOB, '**/node_modules/**', 200);
      if (files.length === 0) {
        void vscode.window.showInformationMessage(`${title}: no sweep file (*.sweep.json, *.sweep.yaml) in the workspace.`, 'Open Example').then((a) => {
          if (a) void vscode.commands.executeCommand(COMMAND.openExample);
        });
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        files
          .sort((a, b) => a.fsPath.localeCompare(b.fsPath))
          .map((u) => ({ label: path.basename(u.fsPath), description: vscode.workspace.asRelativePath(path.dirname(u.fsPath)), file: u.fsPath })),
        { title, placeHolder: 'Which sweep? (a sweep whose folder exists resumes)', matchOnDescription: true },
      );
      if (!picked) return undefined;
      req = { sweepFile: picked.file };
    }
  }
  // the sweep runs from the file on disk: unsaved edits are saved first
  const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && path.resolve(d.uri.fsPath) === path.resolve(req!.sweepFile));
  if (open?.isDirty) await open.save();
  return s.sweeps.start(req.sweepFile, req.maxConcurrent !== undefined ? { maxConcurrent: req.maxConcurrent } : {});
}

async function resumeSweep(s: SweepCommandServices, arg: unknown): Promise<SweepResult | undefined> {
  const dir = await commandArg(COMMAND.resumeSweep, 'sweep', arg, dirArg);
  const { readSweepManifest } = await import('../../core/experiments/sweepManifest');
  const manifest = readSweepManifest(dir);
  const fs = await import('node:fs');
  if (!fs.existsSync(manifest.file)) throw new Error(`Cannot resume sweep ${manifest.name}: its sweep file ${manifest.file} is gone (sweep.json records it).`);
  return s.sweeps.start(manifest.file);
}

async function cancelSweep(s: SweepCommandServices, arg: unknown): Promise<boolean> {
  let dir: string | undefined;
  if (arg !== undefined) dir = await commandArg(COMMAND.cancelSweep, 'sweep', arg, dirArg);
  else {
    const active = s.sweeps.active();
    if (active.length === 0) {
      void vscode.window.showInformationMessage('No sweep is running in this window.');
      return false;
    }
    dir =
      active.length === 1
        ? active[0]!.dir
        : (await vscode.window.showQuickPick(active.map((x) => ({ label: x.name, description: `${x.progress.done}/${x.progress.total} done`, dir: x.dir })), { title: 'Tinker: Cancel Sweep' }))?.dir;
    if (!dir) return false;
  }
  return s.sweeps.cancel(dir);
}
