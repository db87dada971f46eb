// The Checkpoints view: per run, the checkpoints recorded in checkpoints.jsonl (state and/or sampler
// weights, tinker:// paths); the inline action copies a path.
import * as vscode from 'vscode';
import type { CheckpointRecord, RunSummary } from '../core/runs/runDirectory';
import { escapeMd } from './runsTree';
import { RunsModel } from './runsModel';

export type CheckpointNode =
  | { kind: 'run'; run: RunSummary }
  | { kind: 'checkpoint'; run: RunSummary; checkpoint: CheckpointRecord };

export class CheckpointsTreeProvider implements vscode.TreeDataProvider<CheckpointNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly model: RunsModel) {
    this.sub = model.onDidChange(() => this.changed.fire());
  }

  async getChildren(element?: CheckpointNode): Promise<CheckpointNode[]> {
    if (!element) {
      const runs = await this.model.list();
      return runs.filter((r) => r.checkpoints.length > 0).map((run) => ({ kind: 'run', run }));
    }
    if (element.kind === 'run') {
      return [...element.run.checkpoints].reverse().map((checkpoint) => ({ kind: 'checkpoint', run: element.run, checkpoint }));
    }
    return [];
  }

  getTreeItem(node: CheckpointNode): vscode.TreeItem {
    if (node.kind === 'run') {
      const item = new vscode.TreeItem(node.run.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `ckpt-run:${node.run.dir}`;
      item.iconPath = new vscode.ThemeIcon('folder');
      item.description = `${node.run.checkpoints.length} checkpoint${node.run.checkpoints.length === 1 ? '' : 's'}`;
      return item;
    }
    const c = node.checkpoint;
    const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.None);
    item.id = `ckpt:${node.run.dir}:${c.name}:${c.state_path ?? ''}:${c.sampler_path ?? ''}`;
    item.contextValue = 'tinker.checkpoint';
    const kinds = [c.state_path ? 'state' : undefined, c.sampler_path ? 'sampler' : undefined].filter(Boolean);
    item.description = [kinds.join(' + '), c.batch !== undefined ? `batch ${c.batch}` : undefined].filter(Boolean).join(' · ');
    item.iconPath = new vscode.ThemeIcon(c.name === 'final' ? 'star-full' : 'save');
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown(`**${escapeMd(c.name)}** of ${escapeMd(node.run.name)}\n\n`);
    if (c.state_path) tip.appendMarkdown(`State: \`${c.state_path}\`\n\n`);
    if (c.sampler_path) tip.appendMarkdown(`Sampler: \`${c.sampler_path}\``);
    item.tooltip = tip;
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}

/** The path to copy for a checkpoint: the sampler path when there is one (what sampling needs). */
export function checkpointPath(c: CheckpointRecord): string | undefined {
  return c.sampler_path ?? c.state_path;
}
