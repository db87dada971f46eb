// "Tinker: Compare Runs…": the Compare Runs panel over runs picked from the runs folder, the Runs
// view's multi-selection (its run nodes), its sweep node, `{ runDirs }` or a sweep folder `{ sweepDir }`.
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import type { RunsModel } from '../runs/runsModel';
import type { ComparePanels } from './comparePanels';
import type { ComparePanel } from './comparePanel';

export interface CompareCommandServices {
  log: Log;
  runs: RunsModel;
  compare: ComparePanels;
}

const TITLE = 'Tinker: Compare Runs…';

async function argSchema() {
  const { z } = await import('zod');
  const runNode = z.object({ run: z.object({ dir: z.string().min(1) }) });
  const sweepNode = z.object({ kind: z.literal('sweep'), dir: z.string().min(1) });
  return z.union([
    z.object({ runDirs: z.array(z.string().min(1)).min(1) }).strict(),
    z.object({ sweepDir: z.string().min(1) }).strict(),
    /** the Runs view: the clicked node and the selection (VS Code passes both) */
    z.tuple([runNode, z.array(runNode).optional()]).transform(([node, selection]) => ({ runDirs: (selection?.length ? selection : [node]).map((n) => n.run.dir) })),
    /** the Runs view's sweep node (alone, or with the selection VS Code passes beside it) */
    sweepNode.transform((n) => ({ sweepDir: n.dir })),
    z.tuple([sweepNode, z.array(z.unknown()).optional()]).transform(([n]) => ({ sweepDir: n.dir })),
  ]);
}

export function registerCompareCommands(s: CompareCommandServices): vscode.Disposable[] {
  return registerTable({ [COMMAND.openComparison]: (...args: unknown[]) => openComparison(s, args) }, s.log);
}

/** Opens the panel; resolves to it (undefined when the pick was dismissed). */
async function openComparison(s: CompareCommandServices, args: unknown[]): Promise<ComparePanel | undefined> {
  const given = args.filter((a) => a !== undefined);
  if (given.length === 0) {
    const runs = await s.runs.list();
    if (runs.length < 1) {
      void vscode.window.showInformationMessage(`${TITLE}: no run in the runs folder yet.`);
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      runs.map((r) => ({ label: r.name, description: r.model, detail: r.dir, dir: r.dir })),
      { title: TITLE, placeHolder: 'Which runs? (pick two or more)', canPickMany: true, matchOnDetail: true },
    );
    if (!picked || picked.length === 0) return undefined;
    return s.compare.open({ runDirs: picked.map((p) => p.dir) });
  }
  const parsed = (await argSchema()).safeParse(given.length === 1 && !('run' in Object(given[0])) ? given[0] : given);
  if (!parsed.success) throw new Error(`${TITLE}: unexpected argument (${parsed.error.issues[0]?.path.join('.') || 'argument'}: ${parsed.error.issues[0]?.message ?? 'invalid'})`);
  const subject = parsed.data;
  if ('sweepDir' in subject) return s.compare.open({ runDirs: [], sweepDir: subject.sweepDir });
  return s.compare.open({ runDirs: [...new Set(subject.runDirs)] });
}
