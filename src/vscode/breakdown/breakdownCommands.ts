// "Tinker: Show Iteration…": the GRPO group breakdown of one iteration of a run. Reached from a
// click on a metrics chart point ({runDir, step}), from a run in the Runs view (the last sampled
// iteration), or from the palette (pick a run, then an iteration).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { BreakdownPanels } from './breakdownPanels';
import { showIteration } from './breakdownPanels';
import type { Log } from '../common/log';
import type { RunsModel } from '../runs/runsModel';

export interface BreakdownCommandServices {
  log: Log;
  runs: RunsModel;
  breakdowns: BreakdownPanels;
}

async function argSchema() {
  const { z } = await import('zod');
  return z.union([
    z.object({ runDir: z.string().min(1), step: z.number().int().nonnegative().optional(), split: z.enum(['train', 'eval']).optional() }),
    /** a run node of the Runs view */
    z.object({ run: z.object({ dir: z.string().min(1) }) }).transform((n) => ({ runDir: n.run.dir, step: undefined, split: undefined })),
  ]);
}

export function registerBreakdownCommands(s: BreakdownCommandServices): vscode.Disposable[] {
  return registerTable({ [COMMAND.showIteration]: (arg?: unknown) => showIterationCommand(s, arg) }, s.log);
}

/** Opens the breakdown; resolves to true when a panel is showing the iteration. */
async function showIterationCommand(s: BreakdownCommandServices, arg: unknown): Promise<boolean> {
  let runDir: string | undefined;
  let step: number | undefined;
  let split: 'train' | 'eval' = 'train';
  if (typeof arg === 'string' && arg) runDir = arg;
  else if (arg instanceof vscode.Uri) runDir = arg.fsPath;
  else if (arg !== undefined) {
    const parsed = (await argSchema()).safeParse(arg);
    if (!parsed.success) throw new Error(`Tinker: Show Iteration: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    runDir = parsed.data.runDir;
    step = parsed.data.step;
    split = parsed.data.split ?? 'train';
  }
  if (!runDir) {
    const runs = await s.runs.list();
    const picked = await vscode.window.showQuickPick(
      runs.map((r) => ({ label: r.name, description: r.model, dir: r.dir })),
      { title: 'Tinker: Show Iteration', placeHolder: 'The groups of which run?' },
    );
    if (!picked) return false;
    runDir = picked.dir;
  }
  if (step === undefined && arg === undefined) {
    const { sampledIterations } = await import('../../core/runs/sampleRecord');
    const available = await sampledIterations(runDir);
    const items = [
      ...available.train.map((i) => ({ label: `iteration ${i}`, description: 'training', iteration: i, split: 'train' as const })),
      ...available.eval.map((i) => ({ label: `iteration ${i}`, description: 'holdout evaluation', iteration: i, split: 'eval' as const })),
    ].reverse();
    if (items.length) {
      const picked = await vscode.window.showQuickPick(items, { title: `Tinker: Show Iteration — ${path.basename(runDir)}`, placeHolder: 'Which iteration?' });
      if (!picked) return false;
      step = picked.iteration;
      split = picked.split;
    }
  }
  await showIteration(s.breakdowns, { runDir, ...(step !== undefined ? { ref: { iteration: step, split } } : {}) });
  return true;
}
