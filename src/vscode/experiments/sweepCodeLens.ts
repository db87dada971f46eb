// CodeLenses on the first line of a sweep file: "Start Sweep" (no folder yet), "Resume Sweep" and its
// progress when its folder exists with runs not done, "Compare Runs" when it has runs; while this window
// runs it, its progress and "Cancel Sweep" instead.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';
import { throttle } from '../common/throttle';
import type { RunsModel } from '../runs/runsModel';
import type { RunRegistry } from '../runs/runRegistry';
import { deriveRunStatus } from '../../core/runs/runStatus';
import { describeSweep, sweepCounts } from '../runs/sweepItems';
import { SWEEP_GLOB } from './sweepCommands';
import { describeSweepProgress, type SweepRunner } from './sweepRunner';

export const SWEEP_SELECTOR: vscode.DocumentSelector = [{ scheme: 'file', pattern: SWEEP_GLOB }];

export class SweepCodeLensProvider extends Disposable implements vscode.CodeLensProvider {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(
    private readonly sweeps: SweepRunner,
    private readonly runs: RunsModel,
    private readonly registry: RunRegistry,
  ) {
    super();
    const later = throttle(() => this.changed.fire(), 500);
    this._registerAll(runs.onDidChange(() => this.changed.fire()), sweeps.onDidChange(later), later);
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const range = new vscode.Range(0, 0, 0, 0);
    const file = doc.uri.fsPath;
    const running = this.sweeps.byFile(file);
    if (running) {
      return [
        new vscode.CodeLens(range, { title: `$(sync~spin) Sweep ${running.name}: ${describeSweepProgress(running.progress)}`, tooltip: 'Compare its runs so far', command: COMMAND.openComparison, arguments: [{ sweepDir: running.dir }] }),
        new vscode.CodeLens(range, { title: '$(debug-stop) Cancel Sweep', tooltip: 'Stop every run of the sweep; each keeps its resume point', command: COMMAND.cancelSweep, arguments: [{ sweepDir: running.dir }] }),
      ];
    }
    let dir: string | undefined;
    try {
      dir = await this.sweeps.folderOf(file);
    } catch {
      // not readable yet (diagnostics say why): Start Sweep reports the problem when clicked
    }
    const start = (title: string, tooltip: string) => new vscode.CodeLens(range, { title, tooltip, command: COMMAND.startSweep, arguments: [doc.uri] });
    if (!dir || !fs.existsSync(path.join(dir, 'sweep.json'))) return [start('$(play) Start Sweep', 'Run every point of this sweep as a run in the runs folder')];
    const { readSweepManifest } = await import('../../core/experiments/sweepManifest');
    let total = 0;
    try {
      total = readSweepManifest(dir).runs.length;
    } catch {
      // an unreadable sweep.json: starting again rewrites it
    }
    const own = (await this.runs.list()).filter((r) => path.dirname(r.dir) === dir);
    const statuses = own.map((r) => deriveRunStatus(r, this.registry.byDir(r.dir)));
    const counts = sweepCounts(total, statuses);
    const lenses: vscode.CodeLens[] = [];
    if (counts.done < counts.total) lenses.push(start(`$(debug-continue) Resume Sweep (${describeSweep(counts)})`, 'Skip the finished runs, resume the interrupted ones, start the rest'));
    else lenses.push(new vscode.CodeLens(range, { title: `$(pass) Sweep ${path.basename(dir)}: ${describeSweep(counts)}`, tooltip: dir, command: '' }));
    if (own.length) lenses.push(new vscode.CodeLens(range, { title: `$(graph-line) Compare Runs (${own.length})`, tooltip: "Compare the sweep's runs, ranked by its metric", command: COMMAND.openComparison, arguments: [{ sweepDir: dir }] }));
    return lenses;
  }
}
