// The Runs view's sweep node: a sweep folder (`<runs folder>/<sweep name>/` with sweep.json) shown as
// ONE row — its name, "3/12 done, 1 running · 2 stopped early", a tooltip with the metric and the best
// run (read when hovered) — whose children are its runs (ordinary run rows, stopped-early ones with
// their greyed icon). Its context menu: Compare, Resume Sweep, Cancel Sweep (contextValue
// tinker.sweep:running | :resumable | :done). The sweeps this window runs come from a structural
// `SweepActivity` (the experiments feature's SweepRunner), so this folder imports no higher feature.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunSummary } from '../../core/runs/runDirectory';
import type { RunStatus } from '../../core/runs/runStatus';
import type { SweepManifest } from '../../core/experiments/sweepManifest';
import { codeSpan, escapeMarkdown } from '../../core/text/markdown';

/** What the Runs view needs to know of the sweeps this window runs. */
export interface SweepActivity {
  readonly onDidChange: vscode.Event<unknown>;
  byDir(dir: string): { progress: { total: number; done: number; running: readonly string[] } } | undefined;
}

export interface SweepNode {
  kind: 'sweep';
  /** the sweep folder */
  dir: string;
  name: string;
  manifest?: SweepManifest;
  /** why sweep.json could not be read */
  error?: string;
  /** its run directories, in the manifest's order (then any others) */
  runs: RunSummary[];
  /** each run's status, as the run rows show it */
  statuses: RunStatus[];
  /** this window is running it */
  running: boolean;
  modifiedMs: number;
}

export interface SweepCounts {
  total: number;
  /** completed or stopped early */
  done: number;
  running: number;
  stoppedEarly: number;
  failed: number;
}

/** The sweep folders among the runs folder's direct children, each with its runs; `rest` are the other runs. */
export async function groupSweeps(
  folder: string,
  runs: readonly RunSummary[],
  statusOf: (run: RunSummary) => RunStatus,
  activity: SweepActivity | undefined,
): Promise<{ sweeps: SweepNode[]; rest: RunSummary[] }> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(folder, { withFileTypes: true });
  } catch {
    return { sweeps: [], rest: [...runs] };
  }
  const { readSweepManifest, SWEEP_MANIFEST_FILE } = await import('../../core/experiments/sweepManifest');
  const sweepDirs = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.') && fs.existsSync(path.join(folder, e.name, SWEEP_MANIFEST_FILE))).map((e) => path.join(folder, e.name));
  const inSweep = new Map<string, RunSummary[]>(sweepDirs.map((d) => [d, []]));
  const rest: RunSummary[] = [];
  for (const r of runs) {
    const parent = inSweep.get(path.dirname(r.dir));
    if (parent) parent.push(r);
    else rest.push(r);
  }
  const sweeps = sweepDirs.map((dir): SweepNode => {
    let manifest: SweepManifest | undefined;
    let error: string | undefined;
    try {
      manifest = readSweepManifest(dir);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const order = new Map((manifest?.runs ?? []).map((r, i) => [r.name, i]));
    const own = inSweep.get(dir)!.sort((a, b) => (order.get(a.name) ?? order.size) - (order.get(b.name) ?? order.size) || a.name.localeCompare(b.name));
    let mtime = 0;
    try {
      mtime = fs.statSync(path.join(dir, SWEEP_MANIFEST_FILE)).mtimeMs;
    } catch {
      // gone since the listing: the next refresh drops it
    }
    return {
      kind: 'sweep',
      dir,
      name: manifest?.name ?? path.basename(dir),
      ...(manifest ? { manifest } : {}),
      ...(error ? { error } : {}),
      runs: own,
      statuses: own.map(statusOf),
      running: Boolean(activity?.byDir(dir)),
      modifiedMs: Math.max(mtime, ...own.map((r) => r.modifiedMs)),
    };
  });
  return { sweeps, rest };
}

/** Counts over a sweep's run statuses; `total` is the sweep's point count (runs not started yet count as not done). */
export function sweepCounts(total: number, statuses: readonly RunStatus[]): SweepCounts {
  const count = (...s: RunStatus[]) => statuses.filter((x) => s.includes(x)).length;
  return {
    total: Math.max(total, statuses.length),
    done: count('completed', 'stopped early'),
    running: count('running'),
    stoppedEarly: count('stopped early'),
    failed: count('failed'),
  };
}

function countsOf(node: SweepNode): SweepCounts {
  return sweepCounts(node.manifest?.runs.length ?? 0, node.statuses);
}

/** "3/12 done, 1 running · 2 stopped early · 1 failed" */
export function describeSweep(c: SweepCounts): string {
  const parts = [`${c.done}/${c.total} done${c.running ? `, ${c.running} running` : ''}`];
  if (c.stoppedEarly) parts.push(`${c.stoppedEarly} stopped early`);
  if (c.failed) parts.push(`${c.failed} failed`);
  return parts.join(' · ');
}

export function sweepContextValue(node: SweepNode): string {
  if (node.running) return 'tinker.sweep:running';
  const c = countsOf(node);
  return node.manifest && c.done < c.total ? 'tinker.sweep:resumable' : 'tinker.sweep:done';
}

export function sweepItem(node: SweepNode): vscode.TreeItem {
  const item = new vscode.TreeItem(node.name, vscode.TreeItemCollapsibleState.Collapsed);
  item.id = `sweep:${node.dir}`;
  item.resourceUri = vscode.Uri.file(node.dir);
  item.contextValue = sweepContextValue(node);
  const c = countsOf(node);
  item.description = node.error ? 'unreadable sweep.json' : describeSweep(c);
  item.iconPath = node.error
    ? new vscode.ThemeIcon('warning')
    : node.running
      ? new vscode.ThemeIcon('sync~spin')
      : c.done === c.total
        ? new vscode.ThemeIcon('layers', new vscode.ThemeColor('testing.iconPassed'))
        : new vscode.ThemeIcon('layers');
  // no tooltip here: the view asks resolveTreeItem for it on hover (the best run is read then)
  return item;
}

/** The tooltip; `best` (the ranking's first run) is read when the row is hovered. */
export function sweepTooltip(node: SweepNode, best: { id: string; best?: number; bestStep?: number } | undefined): vscode.MarkdownString {
  const tip = new vscode.MarkdownString(undefined, true);
  const c = countsOf(node);
  tip.appendMarkdown(`**Sweep ${escapeMarkdown(node.name)}** — ${escapeMarkdown(describeSweep(c))}${node.running ? ' (running in this window)' : ''}\n\n`);
  if (node.error) tip.appendMarkdown(`$(warning) ${escapeMarkdown(node.error)}\n\n`);
  if (node.manifest) {
    tip.appendMarkdown(`Metric: ${codeSpan(node.manifest.metric.name)} (${node.manifest.metric.goal})\n\n`);
    if (node.manifest.swept.length) tip.appendMarkdown(`Swept: ${node.manifest.swept.map((f) => codeSpan(f)).join(', ')}\n\n`);
    if (best?.best !== undefined) tip.appendMarkdown(`Best run: ${codeSpan(best.id)} — ${Number(best.best.toPrecision(4))}${best.bestStep !== undefined ? ` at step ${best.bestStep}` : ''}\n\n`);
    tip.appendMarkdown(`Sweep file: ${codeSpan(node.manifest.file)}\n\n`);
  }
  tip.appendMarkdown(`Folder: ${codeSpan(node.dir)}`);
  return tip;
}

/** The sweep's best run by its metric (the comparison's ranking), from the runs' metrics.jsonl. */
export async function bestRunOf(node: SweepNode): Promise<{ id: string; best?: number; bestStep?: number } | undefined> {
  if (!node.manifest || node.runs.length === 0) return undefined;
  const { readMetricsRows } = await import('../../core/runs/runDirectory');
  const { rankRuns } = await import('../../core/experiments/ranking');
  const rows = await Promise.all(node.runs.map(async (r) => ({ id: r.name, rows: await readMetricsRows(r.dir).catch(() => []) })));
  const top = rankRuns(rows, node.manifest.metric)[0];
  return top?.rank === 1 ? top : undefined;
}
