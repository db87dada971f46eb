// The Checkpoints view: per run, the checkpoints recorded in checkpoints.jsonl, newest first; each
// expands into its training-state and sampler-weights entries with their tinker:// paths. Inline
// actions copy a path. The time comes from the record when it has one, else from the file's mtime.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { codeSpan, escapeMarkdown } from '../core/text/markdown';
import { formatLocalTime } from '../core/text/time';
import * as vscode from 'vscode';
import type { CheckpointRecord, RunSummary } from '../core/runs/runDirectory';
import { RunsModel } from './runsModel';

export type CheckpointNode =
  | { kind: 'run'; run: RunSummary }
  | { kind: 'checkpoint'; run: RunSummary; checkpoint: CheckpointRecord; time: Date | undefined }
  | { kind: 'path'; run: RunSummary; checkpoint: CheckpointRecord; which: 'state' | 'sampler'; tinkerPath: string };

/** A time the record carries (ISO string or Unix seconds/milliseconds), if any. */
export function recordTime(c: CheckpointRecord): Date | undefined {
  for (const key of ['time', 'created_at', 'timestamp', 'saved_at']) {
    const v: unknown = c[key];
    let d: Date | undefined;
    if (typeof v === 'string') d = new Date(v);
    else if (typeof v === 'number' && Number.isFinite(v)) d = new Date(v < 1e11 ? v * 1000 : v);
    if (d && !Number.isNaN(d.getTime())) return d;
  }
  return undefined;
}

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
      const fileTime = await mtime(path.join(element.run.dir, 'checkpoints.jsonl'));
      const list = [...element.run.checkpoints].reverse();
      return list.map((checkpoint, i) => ({
        kind: 'checkpoint',
        run: element.run,
        checkpoint,
        // Only the newest record was certainly written at the file's mtime.
        time: recordTime(checkpoint) ?? (i === 0 ? fileTime : undefined),
      }));
    }
    if (element.kind === 'checkpoint') {
      const c = element.checkpoint;
      const out: CheckpointNode[] = [];
      if (c.state_path) out.push({ kind: 'path', run: element.run, checkpoint: c, which: 'state', tinkerPath: c.state_path });
      if (c.sampler_path) out.push({ kind: 'path', run: element.run, checkpoint: c, which: 'sampler', tinkerPath: c.sampler_path });
      return out;
    }
    return [];
  }

  getTreeItem(node: CheckpointNode): vscode.TreeItem {
    if (node.kind === 'run') {
      const item = new vscode.TreeItem(node.run.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `ckpt-run:${node.run.dir}`;
      item.iconPath = new vscode.ThemeIcon('folder');
      item.description = `${node.run.checkpoints.length} checkpoint${node.run.checkpoints.length === 1 ? '' : 's'}`;
      item.contextValue = 'tinker.checkpointRun';
      return item;
    }
    if (node.kind === 'path') {
      const item = new vscode.TreeItem(node.which === 'state' ? 'state' : 'sampler', vscode.TreeItemCollapsibleState.None);
      item.id = `ckpt-path:${node.run.dir}:${node.checkpoint.name}:${node.which}:${node.tinkerPath}`;
      item.description = node.tinkerPath;
      item.iconPath = new vscode.ThemeIcon(node.which === 'state' ? 'database' : 'symbol-event');
      item.tooltip = `${node.which === 'state' ? 'Training state (weights + optimizer), for resuming or further training' : 'Sampler weights, for sampling'}\n${node.tinkerPath}`;
      item.contextValue = 'tinker.checkpointPath';
      return item;
    }
    const c = node.checkpoint;
    const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `ckpt:${node.run.dir}:${c.name}:${c.state_path ?? ''}:${c.sampler_path ?? ''}`;
    item.contextValue = 'tinker.checkpoint';
    const kinds = [c.state_path ? 'state' : undefined, c.sampler_path ? 'sampler' : undefined].filter(Boolean);
    item.description = [kinds.join(' + '), c.batch !== undefined ? `batch ${c.batch}` : undefined, node.time ? formatLocalTime(node.time) : undefined]
      .filter(Boolean)
      .join(' · ');
    item.iconPath = new vscode.ThemeIcon(c.name === 'final' || c.final === true ? 'star-full' : 'save');
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown(`**${escapeMarkdown(c.name)}** of ${escapeMarkdown(node.run.name)}\n\n`);
    if (node.time) tip.appendMarkdown(`Saved: ${node.time.toLocaleString()}\n\n`);
    if (c.state_path) tip.appendMarkdown(`State: ${codeSpan(c.state_path)}\n\n`);
    if (c.sampler_path) tip.appendMarkdown(`Sampler: ${codeSpan(c.sampler_path)}`);
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

async function mtime(file: string): Promise<Date | undefined> {
  try {
    return (await fs.promises.stat(file)).mtime;
  } catch {
    return undefined;
  }
}
