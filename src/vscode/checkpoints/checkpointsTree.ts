// The Checkpoints view. Local runs (checkpoints.jsonl, newest first) expand into their records and
// each record into its training-state and sampler-weights paths; the "Server runs" node pages
// through the backend's training runs ("Load more") and each run into the checkpoints the server
// reports. A checkpoint row shows state vs sampler, time, public, expiry and size, and carries
// a context value whose words (state|sampler, public|private, expiring, remote, local, resumable)
// the manifest's `when` clauses test, so each action appears only where it works.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CheckpointKind, expiryText, sizeText } from '../../core/checkpoints/format';
import { recordPaths, recordTime } from '../../core/checkpoints/local';
import type { ServerCheckpoint } from '../../core/checkpoints/manage';
import { ServerRunList } from '../../core/checkpoints/serverRuns';
import type { CheckpointRecord, RunSummary } from '../../core/runs/runDirectory';
import type { TrainingRun } from '../../core/tinker/wire';
import { codeSpan, escapeMarkdown } from '../../core/text/markdown';
import { checkpointStorageText } from '../../core/cost/storage';
import { DEFAULT_PRICES } from '../../core/cost/defaultPrices';
import type { PriceTable } from '../../core/cost/prices';
import { pricesSetting } from '../common/settings';
import { formatLocalTime } from '../../core/text/time';
import type { TinkerConnection } from '../connection/connection';
import { Disposable } from '../common/lifecycle';
import { RunsModel } from '../runs/runsModel';
import { loadMoreItem, serverRunItem } from '../runs/serverRunItem';

/** What the server says about a local path: its facts, 'missing' (the run's list lacks it), or unknown. */
export type ServerFacts = ServerCheckpoint | 'missing' | undefined;

export type CheckpointNode =
  | { kind: 'run'; run: RunSummary }
  | { kind: 'checkpoint'; run: RunSummary; checkpoint: CheckpointRecord; time: Date | undefined }
  | { kind: 'path'; run: RunSummary; checkpoint: CheckpointRecord; which: 'state' | 'sampler'; tinkerPath: string; server: ServerFacts }
  | { kind: 'serverRoot' }
  | { kind: 'serverRun'; run: TrainingRun }
  | { kind: 'serverCheckpoint'; checkpoint: ServerCheckpoint }
  | { kind: 'loadMore'; offset: number }
  | { kind: 'message'; text: string; detail?: string; error: boolean };

/**
 * One checkpoint an action works on, whichever row it came from. Actions added later (such as
 * opening a sampler checkpoint in the playground) take this too.
 */
export interface CheckpointTarget {
  tinkerPath: string;
  /** state, sampler, or a type of the server's this extension has no use for ("external", newer ones) */
  kind: CheckpointKind;
  /** the server's facts when known */
  server?: ServerCheckpoint;
  /** the local run directory the checkpoint was recorded in */
  runDir?: string;
  runFinished?: boolean;
}

/** The rows the Checkpoints view has handed out (to VS Code, to tests): what a checkpoint command's node argument must be. */
const ROWS = new WeakSet<object>();

/** Whether `value` is a row of the Checkpoints view (by identity: VS Code hands the row object back to commands). */
export function isCheckpointRow(value: unknown): value is CheckpointNode {
  return typeof value === 'object' && value !== null && ROWS.has(value);
}

export function targetOf(node: CheckpointNode): CheckpointTarget | undefined {
  if (node.kind === 'path') {
    return { tinkerPath: node.tinkerPath, kind: node.which, server: typeof node.server === 'object' ? node.server : undefined, runDir: node.run.dir, runFinished: node.run.finished };
  }
  if (node.kind === 'serverCheckpoint') return { tinkerPath: node.checkpoint.tinkerPath, kind: node.checkpoint.kind, server: node.checkpoint };
  return undefined;
}

/** The context value of a checkpoint row: a prefix and the words the `when` clauses test. */
function checkpointContextValue(t: CheckpointTarget, facts: ServerFacts | ServerCheckpoint): string {
  // a type of the server's own ("external", newer) is one word the state/sampler clauses never match
  const words = ['tinker.checkpointPath', t.kind === 'state' || t.kind === 'sampler' ? t.kind : `other-${t.kind.replace(/[^A-Za-z0-9_-]/g, '_')}`];
  const manageable = typeof facts !== 'object' || facts.manageable;
  if (typeof facts === 'object' && manageable) {
    words.push(facts.public ? 'public' : 'private');
    if (facts.expiresAt) words.push('expiring');
  }
  // the server actions need a path of a known form: a checkpoint whose path is not one is shown only
  if (facts !== 'missing' && manageable) words.push('remote');
  if (t.runDir) words.push('local');
  if (t.runDir && t.kind === 'state' && t.runFinished === false) words.push('resumable');
  return words.join(' ');
}

export class CheckpointsTreeProvider extends Disposable implements vscode.TreeDataProvider<CheckpointNode> {
  private readonly changed = this._register(new vscode.EventEmitter<CheckpointNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  /** a server run's checkpoints by run id, fetched once per refresh for its server row and its local paths alike */
  private runCkpts = new Map<string, Promise<ServerCheckpoint[] | Error>>();
  /** the server's runs, the same listing as the Runs view's */
  readonly serverRuns: ServerRunList;

  constructor(
    private readonly model: RunsModel,
    private readonly connection?: Pick<TinkerConnection, 'get'>,
    o: { pageSize?: number; serverRuns?: ServerRunList } = {},
  ) {
    super();
    this.serverRuns = o.serverRuns ?? new ServerRunList(() => this.client(), o);
    const listening = this.serverRuns.onDidChange(() => this.changed.fire(undefined));
    this._registerAll(model.onDidChange(() => this.changed.fire(undefined)), listening);
  }

  /** server runs fetched per page */
  get pageSize(): number {
    return this.serverRuns.pageSize;
  }

  set pageSize(n: number) {
    this.serverRuns.pageSize = n;
  }

  /** Forgets everything fetched from the server; the next expansion fetches again. */
  refresh(): void {
    this.runCkpts.clear();
    this.serverRuns.reset(); // fires its listeners, this view's among them: one refresh, not two
  }

  /** Fetches the next page of server runs (the "Load more" row). */
  loadMore(): Promise<number> {
    return this.serverRuns.loadMore();
  }

  /** the storage rate of the tooltips' estimates: tinker.prices over the shipped table (a bad setting: the shipped one) */
  private prices: Pick<PriceTable, 'storage_usd_per_gb_month' | 'taken'> = DEFAULT_PRICES;

  async getChildren(element?: CheckpointNode): Promise<CheckpointNode[]> {
    if (!element) this.prices = await pricesSetting().catch(() => DEFAULT_PRICES);
    const rows = await this.children(element);
    for (const r of rows) ROWS.add(r);
    return rows;
  }

  private async children(element: CheckpointNode | undefined): Promise<CheckpointNode[]> {
    if (!element) {
      const runs = await this.model.list();
      const local: CheckpointNode[] = runs.filter((r) => r.checkpoints.length > 0).map((run) => ({ kind: 'run', run }));
      return this.connection ? [...local, { kind: 'serverRoot' }] : local;
    }
    switch (element.kind) {
      case 'run': {
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
      case 'checkpoint': {
        const c = element.checkpoint;
        const out: CheckpointNode[] = [];
        for (const p of recordPaths(c)) out.push({ kind: 'path', run: element.run, checkpoint: c, which: p.kind, tinkerPath: p.tinkerPath, server: await this.factsFor(p.tinkerPath) });
        return out;
      }
      case 'serverRoot':
        return this.serverRuns.rows();
      case 'serverRun': {
        const id = element.run.training_run_id;
        const list = await this.runCheckpoints(id);
        if (list instanceof Error) {
          // not kept: expanding the run again asks again
          this.runCkpts.delete(id);
          return [{ kind: 'message', text: 'Could not list this run’s checkpoints', detail: list.message, error: true }];
        }
        if (list.length === 0) return [{ kind: 'message', text: 'No checkpoints in this run', error: false }];
        return list.map((checkpoint) => ({ kind: 'serverCheckpoint', checkpoint }));
      }
      default:
        return [];
    }
  }

  private async client() {
    if (!this.connection) throw new Error('no connection to a Tinker server');
    return this.connection.get();
  }

  private runCheckpoints(runId: string): Promise<ServerCheckpoint[] | Error> {
    let p = this.runCkpts.get(runId);
    if (!p) {
      p = (async () => {
        const { listRunCheckpoints } = await import('../../core/checkpoints/manage');
        try {
          return await listRunCheckpoints(await this.client(), runId, AbortSignal.timeout(30_000));
        } catch (err) {
          return err instanceof Error ? err : new Error(String(err));
        }
      })();
      this.runCkpts.set(runId, p);
    }
    return p;
  }

  /** The server's facts for a local path; unknown (undefined) when the server cannot be asked. */
  private async factsFor(tinkerPath: string): Promise<ServerFacts> {
    if (!this.connection) return undefined;
    const { splitTinkerPath } = await import('../../core/tinker/client');
    let runId: string;
    try {
      runId = splitTinkerPath(tinkerPath).runId;
    } catch {
      return undefined;
    }
    const list = await this.runCheckpoints(runId);
    if (list instanceof Error) {
      const { NotFoundError } = await import('../../core/tinker/errors');
      // a run the server does not know has none of its checkpoints
      return list instanceof NotFoundError ? 'missing' : undefined;
    }
    return list.find((c) => c.tinkerPath === tinkerPath) ?? 'missing';
  }

  getTreeItem(node: CheckpointNode): vscode.TreeItem {
    switch (node.kind) {
      case 'run': {
        const item = new vscode.TreeItem(node.run.name, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `ckpt-run:${node.run.dir}`;
        item.iconPath = new vscode.ThemeIcon('folder');
        item.description = `${node.run.checkpoints.length} checkpoint${node.run.checkpoints.length === 1 ? '' : 's'}`;
        item.contextValue = 'tinker.checkpointRun';
        return item;
      }
      case 'path':
        return checkpointItem(
          node.which,
          `ckpt-path:${node.run.dir}:${node.checkpoint.name}:${node.which}:${node.tinkerPath}`,
          { tinkerPath: node.tinkerPath, kind: node.which, runDir: node.run.dir, runFinished: node.run.finished },
          node.server,
          this.prices,
        );
      case 'serverCheckpoint': {
        const c = node.checkpoint;
        return checkpointItem(c.name, `ckpt-server:${c.tinkerPath}`, { tinkerPath: c.tinkerPath, kind: c.kind }, c, this.prices);
      }
      case 'serverRoot': {
        const item = new vscode.TreeItem('Server runs', vscode.TreeItemCollapsibleState.Collapsed);
        item.id = 'ckpt-server-root';
        item.iconPath = new vscode.ThemeIcon('server-environment');
        item.description = 'the backend’s training runs';
        item.tooltip = 'The training runs and checkpoints the selected backend reports, a page at a time. Expand to fetch; Refresh to fetch again.';
        item.contextValue = 'tinker.checkpointServer';
        return item;
      }
      case 'serverRun':
        return serverRunItem(node.run, { id: `ckpt-server-run:${node.run.training_run_id}`, collapsible: vscode.TreeItemCollapsibleState.Collapsed, contextValue: 'tinker.checkpointServerRun' });
      case 'loadMore':
        return loadMoreItem({ id: `ckpt-load-more:${node.offset}`, contextValue: 'tinker.checkpointLoadMore' });
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon(node.error ? 'error' : 'info');
        item.description = node.detail;
        item.tooltip = node.detail ?? node.text;
        return item;
      }
      case 'checkpoint': {
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
    }
  }

}

/**
 * What a checkpoint row says after its label. A server row: kind, time, public, expiry, size. A local
 * run's path row (its record shows the time): public, expiry, size, then the tinker:// path.
 */
function checkpointDescription(t: Pick<CheckpointTarget, 'tinkerPath' | 'kind' | 'runDir'>, facts: ServerFacts, now = new Date()): string {
  const parts: string[] = [];
  if (facts === 'missing') parts.push('not on the server');
  else {
    if (!t.runDir) parts.push(t.kind);
    if (facts) {
      if (!t.runDir && facts.baseModel) parts.push(facts.baseModel);
      if (!t.runDir && facts.time) parts.push(formatLocalTime(facts.time));
      if (facts.public) parts.push('public');
      const exp = expiryText(facts.expiresAt, now);
      if (exp) parts.push(exp);
      if (facts.sizeBytes !== undefined) parts.push(sizeText(facts.sizeBytes));
      if (!t.runDir && facts.userMetadata) parts.push(metadataText(facts.userMetadata));
    }
  }
  if (t.runDir) parts.push(t.tinkerPath);
  return parts.join(' · ');
}

function checkpointItem(label: string, id: string, t: CheckpointTarget, facts: ServerFacts, prices: Pick<PriceTable, 'storage_usd_per_gb_month' | 'taken'>): vscode.TreeItem {
  const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
  item.id = id;
  item.description = checkpointDescription(t, facts);
  item.iconPath = new vscode.ThemeIcon(
    facts === 'missing'
      ? 'circle-slash'
      : t.kind !== 'state' && t.kind !== 'sampler'
        ? 'link-external'
        : typeof facts === 'object' && facts.public
          ? 'globe'
          : t.kind === 'state'
            ? 'database'
            : 'symbol-event',
  );
  const tip = new vscode.MarkdownString();
  tip.appendMarkdown(`${kindText(t.kind)}\n\n${codeSpan(t.tinkerPath)}`);
  if (facts === 'missing') tip.appendMarkdown('\n\nThe server no longer has this checkpoint (deleted, or its TTL passed).');
  else if (facts) {
    if (facts.baseModel) tip.appendMarkdown(`\n\nBase model: ${codeSpan(facts.baseModel)}`);
    if (facts.expiresAt) tip.appendMarkdown(`\n\nExpires: ${facts.expiresAt.toLocaleString()}`);
    if (facts.sizeBytes !== undefined) tip.appendMarkdown(`\n\n${checkpointStorageText(facts.sizeBytes, prices)}`); // our words; `taken` is a checked date
    if (facts.userMetadata) {
      tip.appendMarkdown('\n\nMetadata:');
      for (const [k, v] of Object.entries(facts.userMetadata)) tip.appendMarkdown(`\n- ${escapeMarkdown(k)}: ${codeSpan(v)}`);
    }
    if (!facts.manageable) tip.appendMarkdown('\n\nIts path is not of a form Tinker Studio can manage (publish, TTL, delete): use the Tinker console or SDK.');
  }
  item.tooltip = tip;
  item.contextValue = checkpointContextValue(t, facts);
  return item;
}

function kindText(kind: CheckpointKind): string {
  if (kind === 'state') return 'Training state (weights + optimizer), for resuming or further training';
  if (kind === 'sampler') return 'Sampler weights, for sampling';
  if (kind === 'external') return 'External weights (uploaded, or saved outside a training run): no training or sampling actions here';
  return `A checkpoint of type "${escapeMarkdown(kind)}", which this version of Tinker Studio does not know: shown as the server reports it`;
}

/** "k=v, k2=v2" of a checkpoint's metadata, cut to a length a tree row can show. */
export function metadataText(m: Record<string, string>, max = 60): string {
  const text = Object.entries(m)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
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
