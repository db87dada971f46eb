// The Compare Runs panel's host: one panel per set of runs (or per sweep). It loads each run's
// config.json and metric columns (the per-run column cache, in the extension's storage), computes
// the config diff, the result columns, the seed groups and, for a sweep, the ranking, sensitivity and
// parallel coordinates, and sends them in one snapshot without points; the webview asks for the
// points of the charts in view (`charts`, decimated to their width: core/experiments/compareView.ts).
// Live: a watcher on each run's metrics.jsonl
// and the run registry's events extend that run's columns and push the run again (no polling).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { configDiff, type RunColumns } from '../../protocol/compareData';
import { CompareProtocol, CompareRequests, CompareRun, FromWebview, SweepView, ToWebview } from '../../protocol/compareProtocol';
import type { RunStatus } from '../../protocol/runProgress';
import { inFolder, loadColumns } from '../../core/experiments/columnCache';
import { readSweepManifest, type SweepManifest } from '../../core/experiments/sweepManifest';
import { chartLines, heldKindOf, SmoothedCache, sweepView, wireRuns, type HeldRun } from '../../core/experiments/compareView';
import { STOPPED_EARLY_FILE, directoryRunStatus, reportedRunStatus } from '../../core/runs/runStatus';
import { errorMessage } from '../../core/errors';
import type { Log } from '../common/log';
import type { RunRegistry } from '../runs/runRegistry';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { throttle } from '../common/throttle';
import { windowUi } from '../common/windowUi';

export interface CompareSubject {
  runDirs: string[];
  sweepDir?: string;
}

export interface ComparePanelServices {
  extensionUri: vscode.Uri;
  log: Log;
  registry: RunRegistry;
  /** the folder of the per-run column caches (one file per run directory) */
  cacheFolder: string;
  /** opens the group breakdown of one iteration of a run */
  openIteration(runDir: string, step: number): Promise<boolean>;
  /** the sample comparison of two runs (tinker.compareRuns) */
  compareSamples(a: string, b: string): Promise<void>;
}

type LoadedRun = HeldRun;

/** The runs of a sweep folder: its manifest's runs that exist on disk, in manifest order. */
export function sweepRunDirs(sweepDir: string, manifest: SweepManifest): string[] {
  return manifest.runs.map((r) => path.join(sweepDir, r.name)).filter((d) => fs.existsSync(d));
}

export class ComparePanel extends PanelHost<ToWebview, FromWebview, typeof CompareRequests> {
  private readonly runs = new Map<string, LoadedRun>();
  private manifest: SweepManifest | undefined;
  private problems: string[] = [];
  private loaded: Promise<void> | undefined;
  private nextColor = 0;
  private readonly colors = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private readonly flush = throttle(() => void this.refreshPending(), 200);
  private readonly cache: ReturnType<typeof inFolder>;
  private readonly smoothed = new SmoothedCache();
  runDirs: string[];

  protected readonly requestHandlers: RequestHandlers<typeof CompareRequests> = {
    charts: async (params) => {
      await this.loaded;
      return { charts: chartLines(this.ordered(), params, this.smoothed) };
    },
    openIteration: async ({ runDir, step }) => ({ opened: await this.s.openIteration(runDir, step) }),
    exportCsv: async ({ csv }) => {
      const base = this.subject.sweepDir ?? this.runDirs[0] ?? '';
      const target = await vscode.window.showSaveDialog({
        title: 'Export the comparison as CSV',
        defaultUri: vscode.Uri.file(path.join(path.dirname(base), `${this.subject.sweepDir ? path.basename(this.subject.sweepDir) : 'comparison'}.csv`)),
        filters: { CSV: ['csv'] },
      });
      if (!target) return {};
      await vscode.workspace.fs.writeFile(target, Buffer.from(csv, 'utf8'));
      return { file: target.fsPath };
    },
  };

  constructor(
    panel: vscode.WebviewPanel,
    readonly subject: CompareSubject,
    private readonly s: ComparePanelServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, CompareProtocol, s.log, `compare panel`);
    this.runDirs = subject.runDirs.map((d) => path.resolve(d));
    this.cache = inFolder(s.cacheFolder);
    panel.title = comparisonTitle(subject);
    showPanelPage(panel, s.extensionUri, { entry: 'compare', title: 'Compare Runs' });
    this._registerAll(
      s.registry.onDidReceiveEvent(({ run, event }) => {
        if (!run.runDir) return;
        const id = path.resolve(run.runDir);
        if (!this.runs.has(id)) return;
        if (event.type === 'metrics' || event.type === 'finished' || event.type === 'started') this.changed(id);
      }),
      this.flush,
    );
    this.loaded = this.loadAll();
  }

  /** The runs and their data as the panel holds them (for tests and the bench). */
  async data(): Promise<{ runs: CompareRun[]; sweep?: SweepView; differing: string[]; identical: string[]; columns: Map<string, RunColumns> }> {
    await this.loaded;
    const { differing, identical } = this.diff();
    return { runs: this.wireRuns(), sweep: this.sweepView(), differing, identical, columns: new Map(this.ordered().map((r) => [r.id, r.columns])) };
  }

  private async loadAll(): Promise<void> {
    if (this.subject.sweepDir) {
      try {
        this.manifest = readSweepManifest(this.subject.sweepDir);
        if (this.runDirs.length === 0) this.runDirs = sweepRunDirs(this.subject.sweepDir, this.manifest);
      } catch (err) {
        this.problems.push(errorMessage(err));
      }
    }
    for (const d of this.runDirs) this.colorFor(d);
    await Promise.all(this.runDirs.map((d) => this.loadRun(d)));
    for (const d of this.runDirs) this.watch(d);
  }

  private watch(runDir: string): void {
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(runDir), '{metrics.jsonl,checkpoints.jsonl}'));
    watcher.onDidChange(() => this.changed(runDir));
    watcher.onDidCreate(() => this.changed(runDir));
    this._register(watcher);
  }

  private async loadRun(runDir: string): Promise<void> {
    let config: Record<string, unknown> = {};
    try {
      const text = await fs.promises.readFile(path.join(runDir, 'config.json'), 'utf8');
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) config = parsed as Record<string, unknown>;
      else this.problems.push(`${path.join(runDir, 'config.json')}: not a JSON object`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.problems.push(`${path.join(runDir, 'config.json')}: ${errorMessage(err)}`);
    }
    let columns: RunColumns = { steps: [], cols: {} };
    try {
      const loaded = await loadColumns(runDir, this.cache);
      columns = loaded.columns;
      if (loaded.rebuilt) this.log.warn(`compare panel: column cache ${loaded.rebuilt}`);
    } catch (err) {
      this.problems.push(`${path.join(runDir, 'metrics.jsonl')}: ${errorMessage(err)}`);
    }
    const kind = await heldKindOf(config);
    const old = this.runs.get(runDir);
    this.runs.set(runDir, { id: runDir, color: old?.color ?? this.colorFor(runDir), config, kind, columns, status: await this.statusOf(runDir) });
  }

  /** A run's colour: its place in the panel's first list of runs; a run added later takes the next one. */
  private colorFor(runDir: string): number {
    let c = this.colors.get(runDir);
    if (c === undefined) {
      c = this.nextColor++;
      this.colors.set(runDir, c);
    }
    return c;
  }

  private async statusOf(runDir: string): Promise<RunStatus> {
    // a run the sweep's median rule stopped ended as "cancelled" in this window's registry; its directory says more
    if (fs.existsSync(path.join(runDir, STOPPED_EARLY_FILE))) return 'stopped early';
    const active = reportedRunStatus(this.s.registry.byDir(runDir));
    if (active) return active;
    try {
      // the directory's checkpoints, lock and marker: not its metrics.jsonl, which the column cache has already read
      const { readDirectoryState } = await import('../../core/runs/runDirectory');
      return directoryRunStatus(await readDirectoryState(runDir));
    } catch {
      return 'not finished';
    }
  }

  private changed(runDir: string): void {
    this.dirty.add(path.resolve(runDir));
    this.flush();
  }

  private async refreshPending(): Promise<void> {
    const ids = [...this.dirty];
    this.dirty.clear();
    await this.loaded;
    for (const id of ids) {
      if (this.isDisposed || !this.runs.has(id)) continue;
      await this.loadRun(id);
      const run = this.wireRuns().find((r) => r.id === id);
      if (run) this.post({ type: 'run', run, sweep: this.sweepView() });
    }
  }

  /** The loaded runs in the panel's order (loads finish in any order). */
  private ordered(): LoadedRun[] {
    return this.runDirs.flatMap((d) => this.runs.get(d) ?? []);
  }

  /** The config columns: the differing ones shown, the rest (identical, then bookkeeping) behind "show all". */
  private diff(): { differing: string[]; identical: string[] } {
    const d = configDiff(this.ordered().map((r) => r.config));
    return { differing: d.differing, identical: [...d.identical, ...d.bookkeeping] };
  }

  private wireRuns(): CompareRun[] {
    return wireRuns(this.ordered(), this.manifest);
  }

  private sweepView(): SweepView | undefined {
    return sweepView(this.ordered(), this.manifest);
  }

  protected override async sendSnapshot(): Promise<void> {
    await this.loaded;
    const { differing, identical } = this.diff();
    this.post({ type: 'snapshot', title: comparisonTitle(this.subject), runs: this.wireRuns(), differing, identical, sweep: this.sweepView(), problems: [...this.problems] });
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'removeRun':
        this.runs.delete(msg.id);
        this.runDirs = this.runDirs.filter((d) => d !== msg.id);
        await this.sendSnapshot();
        break;
      case 'diffConfigs':
        await vscode.commands.executeCommand('vscode.diff', vscode.Uri.file(path.join(msg.a, 'config.json')), vscode.Uri.file(path.join(msg.b, 'config.json')), `config.json: ${path.basename(msg.a)} ↔ ${path.basename(msg.b)}`);
        break;
      case 'compareSamples':
        await this.s.compareSamples(msg.a, msg.b);
        break;
      case 'openWandb': {
        const wandb = this.runs.get(msg.id)?.config.wandb as { url?: unknown } | undefined;
        if (typeof wandb?.url === 'string' && /^https?:\/\//.test(wandb.url)) await windowUi.openExternal(vscode.Uri.parse(wandb.url));
        break;
      }
      case 'webviewError':
        this.log.warn(`compare panel: ${msg.message}`);
        break;
    }
  }
}

export function comparisonTitle(subject: CompareSubject): string {
  if (subject.sweepDir) return `Compare: sweep ${path.basename(subject.sweepDir)}`;
  return `Compare: ${subject.runDirs.length} runs`;
}
