// The suite commands: "Tinker: Run Suite on Checkpoint…" (a *.suite.json: its CodeLens, the palette;
// a sampler checkpoint of the Checkpoints view; the suite panel), "Tinker: Compare Suites" (a suite and
// two checkpoints that have results of its current version) and "Tinker: Open Suite Results…"; and the
// suite file's CodeLenses (Run suite on… · Results · Compare Suites).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import { windowUi } from '../common/windowUi';
import { connectionModels, runSuiteWithProgress, type SuiteOutcome, type SuiteRunnerServices } from './suiteRunner';
import type { SuitePanel } from './suitePanel';

export type SuiteCommandServices = SuiteRunnerServices;

export const SUITE_SELECTOR: vscode.DocumentSelector = { scheme: 'file', pattern: '**/*.suite.json' };

export function registerSuiteCommands(s: SuiteCommandServices): vscode.Disposable[] {
  return [
    ...registerTable(
      {
        [COMMAND.runSuite]: (arg?: unknown) => runSuiteCommand(s, arg),
        [COMMAND.compareSuites]: (arg?: unknown) => compareSuites(s, arg),
        [COMMAND.openSuiteResults]: (arg?: unknown) => openSuiteResults(s, arg),
      },
      s.log,
    ),
    vscode.languages.registerCodeLensProvider(SUITE_SELECTOR, new SuiteLenses()),
  ];
}

/** A checkpoint of a suite result: what it was run on. */
export interface SuiteResultChoice {
  checkpoint: string;
  label: string;
  complete: boolean;
  updated_at: string;
}

/** The results of the suite's current version (one per checkpoint), newest first. */
export async function suiteResultsOf(suiteFile: string, text?: string): Promise<SuiteResultChoice[]> {
  const { checkpointKey, loadSuite, parseSuiteValue, SUITE_RESULTS_DIR } = await import('../../core/suite/store');
  const suite = text === undefined ? await loadSuite(suiteFile) : parseSuiteValue(JSON.parse(text), suiteFile);
  const dir = path.join(suite.dir, SUITE_RESULTS_DIR, suite.name, suite.version);
  const keys = await fs.promises.readdir(dir).catch(() => [] as string[]);
  const { SuiteResult } = await import('../../core/suite/contract');
  const out: SuiteResultChoice[] = [];
  for (const k of keys) {
    const raw = await fs.promises.readFile(path.join(dir, k, 'result.json'), 'utf8').catch(() => undefined);
    if (raw === undefined) continue;
    let parsed: ReturnType<typeof SuiteResult.safeParse>;
    try {
      parsed = SuiteResult.safeParse(JSON.parse(raw));
    } catch {
      continue; // being written, or damaged: the panel reports it when opened on that checkpoint
    }
    if (!parsed.success) continue;
    // the folder must be the checkpoint's own (the panel reads it back by the checkpoint)
    if (k !== checkpointKey(parsed.data.checkpoint.path)) continue;
    out.push({ checkpoint: parsed.data.checkpoint.path, label: parsed.data.checkpoint.label, complete: parsed.data.complete, updated_at: parsed.data.updated_at });
  }
  return out.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
}

/** "Run suite on…" and, once it has results, "Results" and "Compare Suites" above a suite file. */
class SuiteLenses implements vscode.CodeLensProvider {
  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const top = new vscode.Range(0, 0, 0, 0);
    const suiteFile = doc.uri.fsPath;
    const lenses = [new vscode.CodeLens(top, { title: '$(play) Run suite on…', tooltip: 'Evaluate every entry of this suite on a checkpoint or base model', command: COMMAND.runSuite, arguments: [{ suiteFile }] })];
    // a suite being typed may not parse: the run lens alone, its diagnostics say why
    const results = await suiteResultsOf(suiteFile, doc.getText()).catch(() => []);
    if (results.length > 0) lenses.push(new vscode.CodeLens(top, { title: `$(table) Results (${results.length})`, command: COMMAND.openSuiteResults, arguments: [{ suiteFile }] }));
    if (results.length > 1) lenses.push(new vscode.CodeLens(top, { title: '$(diff) Compare Suites', command: COMMAND.compareSuites, arguments: [{ suiteFile }] }));
    return lenses;
  }
}

/** A suite file from the argument, else the active editor, else picked from the workspace. */
async function suiteFileOf(arg: string | undefined, title: string): Promise<string | undefined> {
  if (arg) return path.resolve(arg);
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === 'file' && active.fsPath.toLowerCase().endsWith('.suite.json')) return active.fsPath;
  const files = await vscode.workspace.findFiles('**/*.suite.json', '**/node_modules/**', 500);
  if (files.length === 0) {
    void vscode.window.showInformationMessage(`${title}: no suite file (*.suite.json) in the workspace.`);
    return undefined;
  }
  if (files.length === 1) return files[0]!.fsPath;
  const picked = await vscode.window.showQuickPick(files.map((u) => ({ label: vscode.workspace.asRelativePath(u), file: u.fsPath })), { title, placeHolder: 'Which suite?' });
  return picked?.file;
}

/** What the commands take: a suite file (Uri or {suiteFile}), a checkpoint or two, or a sampler row of the Checkpoints view. */
async function parseArg(arg: unknown, command: string): Promise<{ suiteFile?: string; checkpoint?: string; checkpoints?: [string, string] }> {
  if (arg === undefined) return {};
  if (arg instanceof vscode.Uri) return { suiteFile: arg.fsPath };
  const { z } = await import('zod');
  const given = z.strictObject({ suiteFile: z.string().min(1).optional(), checkpoint: z.string().min(1).optional(), checkpoints: z.tuple([z.string().min(1), z.string().min(1)]).optional() });
  // the Checkpoints view's sampler rows: a local run's sampler path, a server checkpoint of type sampler
  const localRow = z.object({ kind: z.literal('path'), which: z.literal('sampler'), tinkerPath: z.string().min(1) }).transform((n) => ({ checkpoint: n.tinkerPath }));
  const serverRow = z.object({ kind: z.literal('serverCheckpoint'), checkpoint: z.object({ kind: z.literal('sampler'), tinkerPath: z.string().min(1) }) }).transform((n) => ({ checkpoint: n.checkpoint.tinkerPath }));
  const parsed = z.union([given, localRow, serverRow]).safeParse(arg);
  if (!parsed.success) throw new Error(`${command}: unexpected argument (a suite file, {suiteFile, checkpoint}, or a sampler checkpoint of the Checkpoints view): ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

type CheckpointItem = vscode.QuickPickItem & { checkpoint?: string; typed?: true };

/** The Checkpoints' sampler checkpoints (each run's last marked final), the base models, or a typed path. */
export async function pickCheckpoint(s: SuiteCommandServices, title: string): Promise<string | undefined> {
  const items = (async (): Promise<CheckpointItem[]> => {
    const runs = await s.runs.list();
    const sampler: CheckpointItem[] = runs.flatMap((r) => {
      const withSampler = r.checkpoints.filter((c) => c.sampler_path);
      return [...withSampler].reverse().map((c, i) => ({ label: `${r.name} · ${c.name}`, description: `${i === 0 ? 'final · ' : ''}${r.model ?? ''}`, detail: c.sampler_path!, checkpoint: c.sampler_path! }));
    });
    const models = [...new Set([...runs.flatMap((r) => (r.model ? [r.model] : [])), ...(await connectionModels(s))])];
    return [
      ...(sampler.length ? [{ label: 'Sampler checkpoints', kind: vscode.QuickPickItemKind.Separator }, ...sampler] : []),
      ...(models.length ? [{ label: 'Base models', kind: vscode.QuickPickItemKind.Separator }, ...models.map((m) => ({ label: m, description: 'base model', checkpoint: m }))] : []),
      { label: '', kind: vscode.QuickPickItemKind.Separator },
      { label: '$(edit) Enter a tinker:// path or a model name…', typed: true },
    ];
  })();
  const picked = await vscode.window.showQuickPick(items, { title, placeHolder: 'Which checkpoint? (a sampler checkpoint, a run’s final one, a base model)', matchOnDetail: true });
  if (!picked) return undefined;
  if (!picked.typed) return picked.checkpoint;
  const typed = await windowUi.showInputBox({
    title,
    prompt: 'A tinker:// sampler path, or a base model name',
    placeHolder: 'tinker://…/sampler_weights/…',
    validateInput: (v) => (v.trim() ? undefined : 'give a tinker:// path or a model name'),
  });
  return typed?.trim() || undefined;
}

async function runSuiteCommand(s: SuiteCommandServices, arg: unknown): Promise<SuiteOutcome | undefined> {
  const title = 'Tinker: Run Suite on Checkpoint';
  const given = await parseArg(arg, title);
  const suiteFile = await suiteFileOf(given.suiteFile, title);
  if (!suiteFile) return undefined;
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === suiteFile);
  if (doc?.isDirty) await doc.save();
  const checkpoint = given.checkpoint ?? (await pickCheckpoint(s, `${title}: ${path.basename(suiteFile)}`));
  if (!checkpoint) return undefined;
  return runSuiteWithProgress(s, suiteFile, checkpoint);
}

/** Picks one of the suite's results (the placeholder names the role). */
async function pickResult(results: readonly SuiteResultChoice[], title: string, placeHolder: string): Promise<string | undefined> {
  const picked = await vscode.window.showQuickPick(
    results.map((r) => ({ label: r.label, description: r.label === r.checkpoint ? (r.complete ? '' : 'incomplete') : `${r.checkpoint}${r.complete ? '' : ' · incomplete'}`, detail: `result of ${r.updated_at}`, checkpoint: r.checkpoint })),
    { title, placeHolder },
  );
  return picked?.checkpoint;
}

/** Compare Suites: a candidate (A) beside the checkpoint it is judged against (B, playing production). */
async function compareSuites(s: SuiteCommandServices, arg: unknown): Promise<SuitePanel | undefined> {
  const title = 'Tinker: Compare Suites';
  const given = await parseArg(arg, title);
  const suiteFile = await suiteFileOf(given.suiteFile, title);
  if (!suiteFile) return undefined;
  let pair = given.checkpoints;
  if (!pair) {
    const results = await suiteResultsOf(suiteFile);
    if (results.length < 2) {
      const run = 'Run Suite on Checkpoint…';
      const action = await vscode.window.showInformationMessage(
        `${title}: ${path.basename(suiteFile)} has results of ${results.length} checkpoint${results.length === 1 ? '' : 's'} for its current version; comparing needs two. Run the suite on another checkpoint first.`,
        run,
      );
      if (action === run) void vscode.commands.executeCommand(COMMAND.runSuite, { suiteFile });
      return undefined;
    }
    const a = await pickResult(results, `${title} (1/2)`, 'The candidate (A)');
    if (!a) return undefined;
    const b = await pickResult(
      results.filter((r) => r.checkpoint !== a),
      `${title} (2/2)`,
      'Compared with (B, playing production: each entry’s gate is checked against it)',
    );
    if (!b) return undefined;
    pair = [a, b];
  }
  const panel = await s.suites.open({ suiteFile, checkpoints: [...pair] });
  await panel.refresh();
  return panel;
}

async function openSuiteResults(s: SuiteCommandServices, arg: unknown): Promise<SuitePanel | undefined> {
  const title = 'Tinker: Open Suite Results';
  const given = await parseArg(arg, title);
  const suiteFile = await suiteFileOf(given.suiteFile, title);
  if (!suiteFile) return undefined;
  let checkpoint = given.checkpoint;
  if (!checkpoint) {
    const results = await suiteResultsOf(suiteFile);
    if (results.length === 0) {
      void vscode.window.showInformationMessage(`${title}: ${path.basename(suiteFile)} has no result for its current version yet: run it on a checkpoint.`);
      return undefined;
    }
    checkpoint = results.length === 1 ? results[0]!.checkpoint : await pickResult(results, title, 'Which checkpoint’s result?');
    if (!checkpoint) return undefined;
  }
  const panel = await s.suites.open({ suiteFile, checkpoints: [checkpoint] });
  await panel.refresh();
  return panel;
}
