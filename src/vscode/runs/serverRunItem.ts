// A backend's training run as a tree row, the same in the Runs and Checkpoints views: a warning icon
// when corrupted, base model · rank · last request, and its last checkpoints in the tooltip. Both
// views list the runs from one ServerRunList (core/checkpoints/serverRuns), "Load more" included.
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import type { TrainingRun } from '../../core/tinker/wire';
import { codeSpan, escapeMarkdown } from '../../core/text/markdown';
import { formatLocalTime } from '../../core/text/time';

export function serverRunItem(r: TrainingRun, o: { id: string; collapsible: vscode.TreeItemCollapsibleState; contextValue: string }): vscode.TreeItem {
  const item = new vscode.TreeItem(r.training_run_id, o.collapsible);
  item.id = o.id;
  item.iconPath = new vscode.ThemeIcon(r.corrupted ? 'warning' : 'cloud');
  item.description = [r.base_model, r.lora_rank ? `rank ${r.lora_rank}` : undefined, r.last_request_time ? `last ${formatLocalTime(r.last_request_time)}` : undefined]
    .filter(Boolean)
    .join(' · ');
  const tip = new vscode.MarkdownString();
  tip.appendMarkdown(`**${escapeMarkdown(r.training_run_id)}**\n\nBase model: ${codeSpan(r.base_model)}\n\n`);
  if (r.last_checkpoint) tip.appendMarkdown(`Last state: ${codeSpan(r.last_checkpoint.tinker_path)}\n\n`);
  if (r.last_sampler_checkpoint) tip.appendMarkdown(`Last sampler: ${codeSpan(r.last_sampler_checkpoint.tinker_path)}`);
  item.tooltip = tip;
  item.contextValue = o.contextValue;
  return item;
}

/** The "Load more…" row under a server node: fetches the listing's next page (both views show it). */
export function loadMoreItem(o: { id: string; contextValue: string }): vscode.TreeItem {
  const item = new vscode.TreeItem('Load more…', vscode.TreeItemCollapsibleState.None);
  item.id = o.id;
  item.iconPath = new vscode.ThemeIcon('ellipsis');
  item.command = { command: COMMAND.checkpointsLoadMore, title: 'Load more' };
  item.contextValue = o.contextValue;
  return item;
}
