// "Tinker: Show Preference Pairs": the Preference Pairs panel on a pairs file (the explorer's or
// editor's .jsonl, the workspace's preferences file) or a DPO run (a Runs view row, a run directory);
// and the workspace's preferences file (`tinker.preferencesFile`), asked for the first time the
// playground records a preference.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import { preferencesFileSetting, writePreferencesFileSetting } from '../common/settings';
import { windowUi } from '../common/windowUi';
import type { PairsPanels } from './pairsPanels';

export interface PairsCommandServices {
  log: Log;
  pairs: PairsPanels;
  /** the runs of the runs folder (to offer the DPO runs) */
  runs(): Promise<Array<{ name: string; dir: string }>>;
}

/** The workspace's preferences file; when unset, asks where to keep it (default preferences.jsonl in the workspace) and remembers the answer. */
export async function preferencesFile(ask = true): Promise<string | undefined> {
  const set = preferencesFileSetting();
  if (set || !ask) return set;
  const folder = vscode.workspace.workspaceFolders?.[0];
  const answer = await windowUi.showInputBox({
    title: 'Where should preferences be kept?',
    prompt: 'A JSONL file of preference pairs (the DPO pairs format), relative to the workspace folder. Saved as the tinker.preferencesFile setting.',
    value: 'preferences.jsonl',
    validateInput: (v) => (v.trim() === '' ? 'Give a file name' : !v.trim().endsWith('.jsonl') ? 'The pairs file is JSON Lines: end it with .jsonl' : undefined),
  });
  if (!answer?.trim()) return undefined;
  const file = path.isAbsolute(answer.trim()) || !folder ? path.resolve(answer.trim()) : path.join(folder.uri.fsPath, answer.trim());
  await writePreferencesFileSetting(file);
  return file;
}

/** Whether a run directory is a DPO run: the DPO kind's own test, loaded on first use. */
async function isDpoRun(dir: string): Promise<boolean> {
  return (await import('../../core/dpo/pairsView')).isDpoRun(dir);
}

/** The source a command argument names: a file or folder Uri, a path, a Runs view row ({run: {dir}}) or {runDir}. */
function sourceOf(arg: unknown): string | undefined {
  if (arg instanceof vscode.Uri) return arg.fsPath;
  if (typeof arg === 'string' && arg.trim()) return path.resolve(arg);
  if (arg && typeof arg === 'object') {
    const o = arg as { runDir?: unknown; dir?: unknown; run?: { dir?: unknown } };
    for (const v of [o.runDir, o.dir, o.run?.dir]) if (typeof v === 'string' && v) return path.resolve(v);
  }
  return undefined;
}

export function registerPairsCommands(s: PairsCommandServices): vscode.Disposable[] {
  const show = async (arg?: unknown): Promise<boolean> => {
    let source = sourceOf(arg);
    if (!source) {
      const active = vscode.window.activeTextEditor?.document.uri;
      const pref = preferencesFileSetting();
      const runs = await s.runs();
      const dpo = await Promise.all(runs.map((r) => isDpoRun(r.dir)));
      const dpoRuns = runs.filter((_, i) => dpo[i]);
      type Item = vscode.QuickPickItem & { source?: string; browse?: boolean };
      const items: Item[] = [
        ...(active?.scheme === 'file' && active.fsPath.endsWith('.jsonl') ? [{ label: `$(file) ${path.basename(active.fsPath)}`, description: 'the active editor', source: active.fsPath }] : []),
        ...(pref ? [{ label: `$(thumbsup) ${path.basename(pref)}`, description: 'the preferences file (tinker.preferencesFile)', detail: fs.existsSync(pref) ? pref : `${pref} (no preference recorded yet)`, source: pref }] : []),
        ...dpoRuns.map((r) => ({ label: `$(pulse) ${r.name}`, description: 'DPO run', detail: r.dir, source: r.dir })),
        { label: '$(folder-opened) Choose a pairs file…', browse: true },
      ];
      const picked = await vscode.window.showQuickPick(items, { title: 'Tinker: Show Preference Pairs', placeHolder: 'A pairs file or a DPO run', matchOnDescription: true, matchOnDetail: true });
      if (!picked) return false;
      if (picked.browse) source = (await vscode.window.showOpenDialog({ title: 'A pairs file', canSelectMany: false, filters: { 'JSON Lines': ['jsonl'] } }))?.[0]?.fsPath;
      else source = picked.source;
    }
    if (!source) return false;
    if (!fs.existsSync(source)) throw new Error(`${source} does not exist${source === preferencesFileSetting() ? ': record a preference in the playground first (A better / B better)' : ''}`);
    if (fs.statSync(source).isDirectory() && !(await isDpoRun(source))) throw new Error(`${source} is not a DPO run directory (its config.json has no run_kind "dpo")`);
    await s.pairs.open(source);
    return true;
  };
  return registerTable({ [COMMAND.showPreferencePairs]: show }, s.log);
}
