// The Runs view's rows for evaluation results: each results folder of the workspace's *.eval.json
// specs (evals/<spec name>/ next to the spec, holding summary.json), and any eval running in this
// window, is one row: "holdout · 3 targets · 1,029 problems · n=4", a tooltip with each target
// against the baseline, a click (and the context menu) opens the Eval Results panel. The rows follow
// summary.json and spec files appearing or changing, and a running eval's progress.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EvalSummary } from '../../core/evals/results';
import { codeSpan, escapeMarkdown } from '../../core/text/markdown';
import { errorMessage } from '../../core/errors';
import { baselineComparisonLines, describeEvalResults, formatEvalTable } from '../../core/evals/table';
import { COMMAND } from '../common/commandIds';
import { Disposable } from '../common/lifecycle';
import { throttle } from '../common/throttle';
import { EVAL_SPEC_GLOB, EvalFolder, isResultsFolder, workspaceEvalFolders } from './evalFolders';
import { EvalActivity, evalActivity, onDidChangeEvalActivity, runningEvalDirs } from './evalActivity';

/** One eval results row; `evalResults.dir` is what Open Eval Results takes. */
export interface EvalResultsNode {
  kind: 'evalResults';
  evalResults: { dir: string; name: string; spec?: string };
  summary?: EvalSummary;
  /** summary.json could not be read */
  problem?: string;
  running?: EvalActivity;
}

/** How long a search of the workspace for results folders is reused when no watched file changed. */
const FOLDERS_TTL_MS = 10_000;

/** The eval results rows of the Runs view (RunsSection: runsTree.ts draws what this gives). */
export class EvalResultsRows extends Disposable {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;
  /** the workspace's results folders, until a watched file changes (or FOLDERS_TTL_MS has passed) */
  private folders: Promise<EvalFolder[]> | undefined;
  private foldersAt = 0;
  /** summaries by folder, with the file's mtime and size they were read at */
  private readonly cache = new Map<string, { stamp: string; summary?: EvalSummary; problem?: string }>();

  constructor() {
    super();
    // a running eval reports many times a second; the view follows at most twice a second
    const fire = throttle(() => this.changed.fire(), 500);
    // the workspace is searched again only when a spec or a summary appears, changes or goes (the
    // Runs view refreshes twice a second while a run trains)
    const filesChanged = () => {
      this.folders = undefined;
      fire();
    };
    this._registerAll(fire, onDidChangeEvalActivity(fire));
    for (const glob of ['**/evals/*/summary.json', EVAL_SPEC_GLOB]) {
      const w = vscode.workspace.createFileSystemWatcher(glob);
      this._registerAll(w, w.onDidCreate(filesChanged), w.onDidChange(filesChanged), w.onDidDelete(filesChanged));
    }
    this._registerAll(vscode.workspace.onDidChangeWorkspaceFolders(filesChanged));
  }

  async roots(): Promise<EvalResultsNode[]> {
    // the watcher's events can lag far behind on a busy machine (a burst of other file events is
    // queued before them): a listing older than FOLDERS_TTL_MS is searched again when the view asks
    if (this.folders && Date.now() - this.foldersAt > FOLDERS_TTL_MS) this.folders = undefined;
    if (!this.folders) this.foldersAt = Date.now();
    this.folders ??= workspaceEvalFolders().catch((err: unknown) => {
      this.folders = undefined;
      throw err;
    });
    // a folder deleted with its parent may not reach the watcher: each listed folder is checked
    const folders = (await Promise.all((await this.folders).map(async (f) => ((await isResultsFolder(f.dir)) ? [f] : [])))).flat();
    const byDir = new Map(folders.map((f) => [f.dir, f]));
    for (const dir of runningEvalDirs()) if (!byDir.has(dir)) byDir.set(dir, { dir, name: path.basename(dir) });
    const nodes: EvalResultsNode[] = [];
    for (const f of byDir.values()) {
      const read = await this.summaryOf(f.dir);
      const running = evalActivity(f.dir);
      nodes.push({
        kind: 'evalResults',
        evalResults: { dir: f.dir, name: f.name, ...('spec' in f && f.spec ? { spec: f.spec } : {}) },
        ...(read.summary ? { summary: read.summary } : {}),
        ...(read.problem ? { problem: read.problem } : {}),
        ...(running ? { running } : {}),
      });
    }
    return nodes.sort((a, b) => a.evalResults.name.localeCompare(b.evalResults.name) || a.evalResults.dir.localeCompare(b.evalResults.dir));
  }

  private async summaryOf(dir: string): Promise<{ summary?: EvalSummary; problem?: string }> {
    const file = path.join(dir, 'summary.json');
    const { promises: fs } = await import('node:fs');
    const st = await fs.stat(file).catch(() => undefined);
    if (!st) return {};
    const stamp = `${st.mtimeMs}:${st.size}`;
    const hit = this.cache.get(dir);
    if (hit && hit.stamp === stamp) return hit;
    const { readEvalResults } = await import('../../core/evals/results');
    let entry: { stamp: string; summary?: EvalSummary; problem?: string };
    try {
      entry = { stamp, summary: readEvalResults(dir).summary };
    } catch (err) {
      entry = { stamp, problem: errorMessage(err) };
    }
    this.cache.set(dir, entry);
    return entry;
  }

  treeItem(node: EvalResultsNode): vscode.TreeItem {
    const { dir, name, spec } = node.evalResults;
    const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.None);
    item.id = `eval:${dir}`;
    item.resourceUri = vscode.Uri.file(dir);
    item.contextValue = node.running ? 'tinker.evalResults:running' : 'tinker.evalResults';
    item.command = { command: COMMAND.openEvalResults, title: 'Open Eval Results', arguments: [{ dir }] };
    const parts: string[] = [];
    if (node.running) parts.push(node.running.total ? `running ${node.running.done.toLocaleString('en-US')} / ${node.running.total.toLocaleString('en-US')} samples` : 'running');
    if (node.summary) parts.push(describeEvalResults(node.summary));
    else if (node.problem) parts.push('unreadable summary');
    item.description = parts.join(' · ') || 'no results yet';
    item.iconPath = node.running
      ? new vscode.ThemeIcon('sync~spin')
      : node.problem
        ? new vscode.ThemeIcon('warning')
        : new vscode.ThemeIcon('checklist', node.summary && !node.summary.complete ? new vscode.ThemeColor('disabledForeground') : undefined);
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(`**Evaluation ${escapeMarkdown(name)}**${node.running ? ' — running' : ''}\n\n`);
    if (node.summary) {
      const s = node.summary;
      const base = s.targets.find((t) => t.id === s.baseline);
      tip.appendMarkdown(`${escapeMarkdown(describeEvalResults(s))}; baseline ${codeSpan(base?.label ?? s.baseline)}\n\n`);
      const lines = baselineComparisonLines(s);
      if (lines.length) tip.appendMarkdown(lines.map((l) => `- ${escapeMarkdown(l)}`).join('\n') + '\n\n');
      tip.appendCodeblock(formatEvalTable(s).split('\n').slice(0, s.targets.length + 1).join('\n'), 'text');
      tip.appendMarkdown(`\nUpdated ${escapeMarkdown(s.updated_at)}\n\n`);
    } else if (node.problem) tip.appendMarkdown(`$(warning) ${escapeMarkdown(node.problem)}\n\n`);
    if (spec) tip.appendMarkdown(`Spec: ${codeSpan(spec)}\n\n`);
    tip.appendMarkdown(`Folder: ${codeSpan(dir)}`);
    item.tooltip = tip;
    return item;
  }
}

