// The Runs view: one row per local run directory (status, iteration, last reward).
import * as vscode from 'vscode';
import type { RunSummary } from '../core/runs/runDirectory';
import { RunsModel } from './runsModel';

export class RunsTreeProvider implements vscode.TreeDataProvider<RunSummary>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly model: RunsModel) {
    this.sub = model.onDidChange(() => this.changed.fire());
  }

  getChildren(element?: RunSummary): Promise<RunSummary[]> | RunSummary[] {
    return element ? [] : this.model.list();
  }

  getTreeItem(run: RunSummary): vscode.TreeItem {
    const item = new vscode.TreeItem(run.name, vscode.TreeItemCollapsibleState.None);
    item.id = `run:${run.dir}`;
    item.contextValue = 'tinker.run';
    item.resourceUri = vscode.Uri.file(run.dir);
    const parts: string[] = [];
    if (run.lastStep !== undefined) parts.push(`iteration ${run.lastStep}`);
    if (run.lastReward !== undefined) parts.push(`reward ${run.lastReward.toFixed(3)}`);
    parts.push(run.finished ? 'finished' : 'not finished');
    item.description = parts.join(' · ');
    item.iconPath = new vscode.ThemeIcon(
      run.problems.length ? 'warning' : run.finished ? 'pass' : 'circle-large-outline',
    );
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(`**${escapeMd(run.name)}**\n\n`);
    if (run.model) tip.appendMarkdown(`Model: \`${escapeMd(run.model)}\`\n\n`);
    tip.appendMarkdown(`Steps logged: ${run.steps}\n\nCheckpoints: ${run.checkpoints.length}\n\n`);
    tip.appendMarkdown(`Folder: \`${escapeMd(run.dir)}\``);
    if (run.problems.length) tip.appendMarkdown(`\n\n$(warning) ${run.problems.length} unreadable line(s); see Tinker: Show Log`);
    item.tooltip = tip;
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}

export function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|]/g, (c) => `\\${c}`);
}
