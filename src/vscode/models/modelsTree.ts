// The Models view: the workspace registry's versions grouped by status (production, staging,
// candidate, retired; empty groups left out). A version row opens its model card; its context value
// carries words (its status, sampler, expiring) that the manifest's `when` clauses test, so each
// action appears only where it works. Refreshes whenever the registry file changes.
import * as vscode from 'vscode';
import type { ModelStatus, ModelVersion } from '../../core/models/registry';
import { COMMAND } from '../common/commandIds';
import { Disposable } from '../common/lifecycle';
import type { ModelRegistryFile } from './registryFile';

export const STATUS_ORDER: readonly ModelStatus[] = ['production', 'staging', 'candidate', 'retired'];

export type ModelNode =
  | { kind: 'status'; status: ModelStatus; versions: ModelVersion[] }
  | { kind: 'version'; version: ModelVersion; registryFile: string }
  | { kind: 'message'; text: string; detail?: string; error: boolean };

/** The rows the view handed out: what a Models command's node argument must be (VS Code hands the row back). */
const ROWS = new WeakSet<object>();

export function isModelRow(value: unknown): value is ModelNode {
  return typeof value === 'object' && value !== null && ROWS.has(value);
}

const ICON: Record<ModelStatus, [string, string]> = {
  production: ['star-full', 'charts.green'],
  staging: ['beaker', 'charts.blue'],
  candidate: ['circle-outline', 'charts.foreground'],
  retired: ['archive', 'disabledForeground'],
};

/** The first suite entry's figure of the version's newest suite result, as "pass@1 0.62 [0.55, 0.69]". */
export function headlineFigure(v: ModelVersion): string | undefined {
  const s = v.suite_results.at(-1);
  const e = s?.entries[0];
  if (!e) return undefined;
  const f = (x: number) => Number(x.toPrecision(3)).toString();
  return `${e.metric} ${f(e.estimate.value)}${e.estimate.lo !== undefined && e.estimate.hi !== undefined ? ` [${f(e.estimate.lo)}, ${f(e.estimate.hi)}]` : ''}`;
}

export class ModelsTreeProvider extends Disposable implements vscode.TreeDataProvider<ModelNode> {
  private readonly changed = this._register(new vscode.EventEmitter<ModelNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly refreshed = this._register(new vscode.EventEmitter<void>());
  /** the view read the registry again (the host tests wait on it) */
  readonly onDidRefresh = this.refreshed.event;

  constructor(readonly registry: ModelRegistryFile) {
    super();
    this._register(registry.onDidChange(() => this.refresh()));
  }

  refresh(): void {
    this.changed.fire(undefined);
    this.refreshed.fire();
  }

  async getChildren(element?: ModelNode): Promise<ModelNode[]> {
    const rows = await this.children(element);
    for (const r of rows) ROWS.add(r);
    return rows;
  }

  private async children(element: ModelNode | undefined): Promise<ModelNode[]> {
    if (element?.kind === 'status') {
      const file = this.registry.file ?? '';
      return element.versions.map((version) => ({ kind: 'version', version, registryFile: file }));
    }
    if (element) return [];
    if (!this.registry.file) return [];
    try {
      const reg = await this.registry.read();
      const sorted = [...reg.versions].sort((a, b) => (a.name === b.name ? b.version - a.version : a.name < b.name ? -1 : 1));
      return STATUS_ORDER.flatMap((status): ModelNode[] => {
        const versions = sorted.filter((v) => v.status === status);
        return versions.length ? [{ kind: 'status', status, versions }] : [];
      });
    } catch (err) {
      return [{ kind: 'message', text: 'Could not read the model registry', detail: err instanceof Error ? err.message : String(err), error: true }];
    }
  }

  getTreeItem(node: ModelNode): vscode.TreeItem {
    switch (node.kind) {
      case 'status': {
        const item = new vscode.TreeItem(node.status, node.status === 'retired' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
        item.id = `models-status:${node.status}`;
        item.description = String(node.versions.length);
        item.contextValue = `tinker.modelStatus ${node.status}`;
        return item;
      }
      case 'version': {
        const v = node.version;
        const item = new vscode.TreeItem(v.id, vscode.TreeItemCollapsibleState.None);
        item.id = `models-version:${v.id}`;
        const flagged = v.status === 'production' && !!v.expires_at;
        const [icon, colour] = flagged ? ['warning', 'list.warningForeground'] : ICON[v.status];
        item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(colour));
        item.description = [v.base_model, headlineFigure(v), flagged ? `checkpoint expires ${v.expires_at}` : undefined].filter(Boolean).join(' · ');
        const words = ['tinker.modelVersion', v.status];
        if (v.sampler_path) words.push('sampler');
        if (v.expires_at) words.push('expiring');
        item.contextValue = words.join(' ');
        const md = new vscode.MarkdownString(undefined, true);
        md.appendMarkdown(`**${v.id}** — ${v.status}\n\n`);
        if (v.sampler_path) md.appendMarkdown(`sampler: \`${v.sampler_path}\`\n\n`);
        if (v.state_path) md.appendMarkdown(`state: \`${v.state_path}\`\n\n`);
        md.appendMarkdown(`base model: \`${v.base_model}\`${v.renderer ? ` · renderer ${v.renderer}` : ''}${v.lora_rank ? ` · LoRA rank ${v.lora_rank}` : ''}\n\n`);
        if (v.recipe.length) md.appendMarkdown(`recipe: ${v.recipe.map((r) => `${r.kind}${r.learning_rate !== undefined ? ` lr ${r.learning_rate}` : ''}${r.steps !== undefined ? ` × ${r.steps}` : ''}`).join(' → ')}\n\n`);
        if (v.expires_at) md.appendMarkdown(`${flagged ? '$(warning) ' : ''}checkpoint expires ${v.expires_at}\n\n`);
        item.tooltip = md;
        item.command = { command: COMMAND.modelsOpenCard, title: 'Open Model Card', arguments: [node] };
        return item;
      }
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.description = node.detail;
        item.tooltip = node.detail;
        item.iconPath = new vscode.ThemeIcon(node.error ? 'error' : 'info');
        return item;
      }
    }
  }
}
