// The Runs view: one row per local run directory (status, iteration, last reward) that expands to
// its sampled iterations (training and holdout evaluation; a click opens that iteration's group
// breakdown), then a "Server" node listing the backend's training runs (the Checkpoints view's
// listing: fetched a page at a time when expanded, "Load more"; a failure shows as a row).
// Status: "running" and how a run ended in this window come from the run registry; any other run
// counts as completed when it has a final checkpoint, as interrupted when its writer died holding the
// run directory (a window reloaded or closed mid-run), else as not finished (either can be resumed).
import { codeSpan, escapeMarkdown } from '../../core/text/markdown';
import * as vscode from 'vscode';
import type { RunSummary } from '../../core/runs/runDirectory';
import { RunStatus, deriveRunStatus, isResumable } from '../../core/runs/runStatus';
import { ServerRunList, ServerRunRow } from '../../core/checkpoints/serverRuns';
import { TinkerConnection } from '../connection/connection';
import { ActiveRun, RunRegistry } from './runRegistry';
import { RunsModel } from './runsModel';
import { describeProgress } from './runStatusBar';
import { projectIdSetting, readBackend } from '../common/settings';
import { throttle } from '../common/throttle';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';
import { loadMoreItem, serverRunItem } from './serverRunItem';
import { bestRunOf, groupSweeps, sweepItem, sweepTooltip, type SweepActivity, type SweepNode } from './sweepItems';

/** Rows another feature lists after the runs (eval results …): it finds them and draws them. */
export interface RunsSection<T extends object = object> {
  readonly onDidChange: vscode.Event<void>;
  roots(): Promise<T[]>;
  treeItem(node: T): vscode.TreeItem;
}

export type RunsNode =
  | { kind: 'run'; run: RunSummary; status: RunStatus; active?: ActiveRun }
  | { kind: 'section'; section: RunsSection; node: object }
  | { kind: 'iteration'; run: RunSummary; iteration: number; split: 'train' | 'eval' }
  | { kind: 'server' }
  | SweepNode
  | ServerRunRow;

const SERVER_NODE: RunsNode = { kind: 'server' };

export class RunsTreeProvider extends Disposable implements vscode.TreeDataProvider<RunsNode> {
  private readonly changed = this._register(new vscode.EventEmitter<RunsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private serverLabel = 'Server';
  /** the server's runs, the same listing as the Checkpoints view's */
  readonly serverRuns: ServerRunList;

  constructor(
    private readonly model: RunsModel,
    private readonly registry: RunRegistry,
    connection: Pick<TinkerConnection, 'get'>,
    serverRuns?: ServerRunList,
    /** the sweeps this window runs (their nodes show it, and follow their progress) */
    private readonly sweeps?: SweepActivity,
    private readonly sections: readonly RunsSection[] = [],
  ) {
    super();
    this.serverRuns = serverRuns ?? new ServerRunList(() => connection.get(), { projectId: projectIdSetting });
    // A run reports progress many times a second; the view follows it at most twice a second.
    const fromRegistry = throttle(() => this.changed.fire(undefined), 500);
    this._registerAll(
      model.onDidChange(() => this.changed.fire(undefined)),
      registry.onDidChange(fromRegistry),
      fromRegistry,
      this.serverRuns.onDidChange(() => this.changed.fire(undefined)),
      ...sections.map((s) => s.onDidChange(() => this.changed.fire(undefined))),
    );
    if (sweeps) this._register(sweeps.onDidChange(fromRegistry));
  }

  /** Re-reads the server's training runs the next time the Server node is shown. */
  refreshServer(): void {
    this.serverRuns.reset();
    this.changed.fire(undefined);
  }

  async getChildren(element?: RunsNode): Promise<RunsNode[]> {
    if (!element) {
      // a sweep folder is one node, its runs under it; the other runs and the sweeps newest first
      const grouped = await groupSweeps(this.model.runsFolder, await this.model.list(), (run) => this.runNode(run).status, this.sweeps);
      const local: RunsNode[] = [...grouped.sweeps, ...grouped.rest.map((run) => this.runNode(run))].sort((a, b) => modified(b) - modified(a));
      try {
        const { describeBackend } = await import('../../core/config/backendKinds');
        this.serverLabel = `Server: ${describeBackend(await readBackend())}`;
      } catch {
        this.serverLabel = 'Server';
      }
      const extra: RunsNode[] = [];
      for (const section of this.sections) for (const node of await section.roots()) extra.push({ kind: 'section', section, node });
      // With no local run the view stays empty, so its welcome content (what to do first) shows.
      return local.length || extra.length ? [...local, ...extra, SERVER_NODE] : [];
    }
    if (element.kind === 'server') return this.serverRuns.rows();
    if (element.kind === 'run') return this.iterationsOf(element.run);
    if (element.kind === 'sweep') return element.runs.map((run) => this.runNode(run));
    return [];
  }

  private runNode(run: RunSummary): Extract<RunsNode, { kind: 'run' }> {
    const active = this.registry.byDir(run.dir);
    return { kind: 'run', run, status: deriveRunStatus(run, active), active };
  }

  async resolveTreeItem(item: vscode.TreeItem, node: RunsNode): Promise<vscode.TreeItem> {
    if (node.kind === 'sweep') item.tooltip = sweepTooltip(node, await bestRunOf(node));
    return item;
  }

  /** The run's sampled iterations, newest first (at one iteration, training after its evaluation). */
  private async iterationsOf(run: RunSummary): Promise<RunsNode[]> {
    const { sampledIterations } = await import('../../core/runs/sampleRecord');
    const { train, eval: evals } = await sampledIterations(run.dir);
    const nodes: Array<Extract<RunsNode, { kind: 'iteration' }>> = [
      ...evals.map((iteration) => ({ kind: 'iteration' as const, run, iteration, split: 'eval' as const })),
      ...train.map((iteration) => ({ kind: 'iteration' as const, run, iteration, split: 'train' as const })),
    ];
    if (nodes.length === 0) return [{ kind: 'message', text: 'No sampled iterations yet', detail: 'iteration_NNNNNN/*_samples.jsonl are written by Tinker Studio runs', error: false }];
    return nodes.sort((a, b) => b.iteration - a.iteration || (a.split === 'train' ? -1 : 1));
  }

  /** The local run rows only, those inside sweep nodes too (what tests and commands look for). */
  async localRuns(): Promise<Array<Extract<RunsNode, { kind: 'run' }>>> {
    const top = await this.getChildren();
    const inSweeps = top.flatMap((n) => (n.kind === 'sweep' ? n.runs.map((run) => this.runNode(run)) : []));
    return [...top.filter((n): n is Extract<RunsNode, { kind: 'run' }> => n.kind === 'run'), ...inSweeps];
  }

  /** The sweep nodes. */
  async sweepNodes(): Promise<SweepNode[]> {
    return (await this.getChildren()).filter((n): n is SweepNode => n.kind === 'sweep');
  }

  getTreeItem(node: RunsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'run':
        return runItem(node.run, node.status, node.active);
      case 'section':
        return node.section.treeItem(node.node);
      case 'iteration': {
        const item = new vscode.TreeItem(`iteration ${node.iteration}`, vscode.TreeItemCollapsibleState.None);
        item.id = `iteration:${node.run.dir}:${node.split}:${node.iteration}`;
        item.description = node.split === 'eval' ? 'holdout evaluation' : 'training';
        item.iconPath = new vscode.ThemeIcon(node.split === 'eval' ? 'beaker' : 'list-tree');
        item.tooltip = `Open the GRPO groups of ${node.split === 'eval' ? 'the holdout evaluation at' : 'training'} iteration ${node.iteration} of ${node.run.name}`;
        item.contextValue = `tinker.iteration:${node.split}`;
        item.command = { command: COMMAND.showIteration, title: 'Show Iteration', arguments: [{ runDir: node.run.dir, step: node.iteration, split: node.split }] };
        return item;
      }
      case 'sweep':
        return sweepItem(node);
      case 'server': {
        const item = new vscode.TreeItem(this.serverLabel, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = 'server';
        item.iconPath = new vscode.ThemeIcon('server-environment');
        item.description = 'training runs';
        item.tooltip = 'Training runs the backend knows about (its training-runs REST API). Expand to fetch; refresh to fetch again.';
        item.contextValue = 'tinker.server';
        return item;
      }
      case 'serverRun':
        return serverRunItem(node.run, { id: `server-run:${node.run.training_run_id}`, collapsible: vscode.TreeItemCollapsibleState.None, contextValue: 'tinker.serverRun' });
      case 'loadMore':
        return loadMoreItem({ id: `server-load-more:${node.offset}`, contextValue: 'tinker.serverLoadMore' });
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon(node.error ? 'error' : 'info');
        item.description = node.detail;
        item.tooltip = node.detail ? `${node.text}: ${node.detail}` : node.text;
        if (node.error) item.command = { command: COMMAND.showLog, title: 'Show Log' };
        return item;
      }
    }
  }
}

function modified(n: RunsNode): number {
  return n.kind === 'sweep' ? n.modifiedMs : n.kind === 'run' ? n.run.modifiedMs : 0;
}

const STATUS_ICON: Record<RunStatus, vscode.ThemeIcon> = {
  running: new vscode.ThemeIcon('sync~spin'),
  'paused (agent)': new vscode.ThemeIcon('debug-pause'),
  completed: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  failed: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  cancelled: new vscode.ThemeIcon('circle-slash'),
  'not finished': new vscode.ThemeIcon('circle-large-outline'),
  interrupted: new vscode.ThemeIcon('debug-disconnect'),
  'stopped early': new vscode.ThemeIcon('debug-step-out', new vscode.ThemeColor('disabledForeground')),
};

function runItem(run: RunSummary, status: RunStatus, active: ActiveRun | undefined): vscode.TreeItem {
  const item = new vscode.TreeItem(run.name, vscode.TreeItemCollapsibleState.Collapsed);
  item.id = `run:${run.dir}`;
  item.contextValue = status === 'running' || status === 'paused (agent)' ? 'tinker.run:running' : isResumable(run, active) ? 'tinker.run:resumable' : 'tinker.run:done';
  item.resourceUri = vscode.Uri.file(run.dir);
  const parts: string[] = [];
  if (status === 'running' && active) parts.push(describeProgress(active));
  else if (run.lastStep !== undefined) parts.push(`iteration ${run.lastStep}`);
  const reward = status === 'running' && active?.lastReward !== undefined ? active.lastReward : run.lastReward;
  if (reward !== undefined) parts.push(`reward ${reward.toFixed(3)}`);
  parts.push(status);
  item.description = parts.join(' · ');
  item.iconPath = run.problems.length && status !== 'running' ? new vscode.ThemeIcon('warning') : STATUS_ICON[status];
  item.command = { command: COMMAND.openMetrics, title: 'Open Metrics', arguments: [run.dir] };
  const tip = new vscode.MarkdownString(undefined, true);
  tip.appendMarkdown(`**${escapeMarkdown(run.name)}** — ${status}\n\n`);
  if (run.model) tip.appendMarkdown(`Model: ${codeSpan(run.model)}\n\n`);
  if (run.wandbUrl) tip.appendMarkdown(`W&B: [${escapeMarkdown(run.wandbUrl)}](${run.wandbUrl})\n\n`);
  tip.appendMarkdown(`Steps logged: ${run.steps}\n\nCheckpoints: ${run.checkpoints.length}\n\n`);
  if (active?.error) tip.appendMarkdown(`Error: ${escapeMarkdown(active.error)}\n\n`);
  if (status === 'interrupted') tip.appendMarkdown('It stopped without ending: the window was reloaded or closed, or its process was killed, in the middle of the run. Resume continues from the last checkpoint.\n\n');
  tip.appendMarkdown(`Folder: ${codeSpan(run.dir)}`);
  if (run.problems.length) tip.appendMarkdown(`\n\n$(warning) ${run.problems.length} unreadable line(s); see Tinker: Show Log`);
  item.tooltip = tip;
  return item;
}

