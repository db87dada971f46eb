// The metrics panel's host side: one webview panel per run directory. It follows the run's
// metrics.jsonl (file watcher, the run's own events, and a slow poll while visible), keeps every
// row, and sends the webview a full snapshot whenever it reports ready — first load, re-shown after
// being hidden (its context is not retained), restored after a window reload by the serializer —
// then appends. A click on a chart point asks to open that iteration's group breakdown.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MetricsTail } from '../../core/runs/metricsTail';
import type { RunSummary } from '../../core/runs/runDirectory';
import { directoryRunStatus, reportedRunStatus } from '../../core/runs/runStatus';
import { FromWebview, MetricRow, MetricsProtocol, MetricsRequests, RunInfo, ToWebview, toMetricRow } from '../../protocol/metricsProtocol';
import type { Log } from '../common/log';
import type { RunRegistry } from '../runs/runRegistry';
import { throttle } from '../common/throttle';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { toDisposable } from '../common/lifecycle';
import { windowUi } from '../common/windowUi';
import { errorMessage } from '../../core/errors';

const POLL_MS = 2000;


export interface MetricsPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
  registry: RunRegistry;
  /** opens the group breakdown of one iteration of a run (a chart point was clicked) */
  openIteration(runDir: string, step: number): Promise<boolean>;
}

export class MetricsPanel extends PanelHost<ToWebview, FromWebview, typeof MetricsRequests> {
  private tail: MetricsTail | undefined;
  private readonly rows: MetricRow[] = [];
  private problems: string[] = [];
  private model: string | undefined;
  private poll: NodeJS.Timeout | undefined;
  /** progress events arrive per sample; the header follows at most four times a second */
  private readonly postRunSoon = throttle(() => void this.postRun(), 250);

  protected readonly requestHandlers: RequestHandlers<typeof MetricsRequests> = {
    openIteration: async ({ step }) => ({ opened: await this.s.openIteration(this.runDir, step) }),
  };

  constructor(
    panel: vscode.WebviewPanel,
    readonly runDir: string,
    private readonly s: MetricsPanelServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, MetricsProtocol, s.log, `metrics panel ${runDir}`);
    panel.title = `Metrics: ${path.basename(runDir)}`;
    showPanelPage(panel, s.extensionUri, { entry: 'metrics', title: 'Metrics' });
    this._registerAll(
      s.registry.onDidReceiveEvent(({ run, event }) => {
        if (!run.runDir || path.resolve(run.runDir) !== path.resolve(runDir)) return;
        if (event.type === 'metrics' || event.type === 'finished') void this.readMore();
        if (event.type === 'started' || event.type === 'phase' || event.type === 'finished') this.postRunSoon();
      }),
      this.postRunSoon,
    );
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(runDir), 'metrics.jsonl'));
    watcher.onDidChange(() => void this.readMore());
    watcher.onDidCreate(() => void this.readMore());
    this._registerAll(watcher, toDisposable(() => clearInterval(this.poll)));
    void this.readMore();
    this.updatePolling();
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'revealRunDir':
        await vscode.commands.executeCommand(
          vscode.workspace.getWorkspaceFolder(vscode.Uri.file(this.runDir)) ? 'revealInExplorer' : 'revealFileInOS',
          vscode.Uri.file(this.runDir),
        );
        break;
      case 'openWandb': {
        const url = (await readSummary(this.runDir))?.wandbUrl;
        if (url) await windowUi.openExternal(vscode.Uri.parse(url));
        break;
      }
      case 'showLog':
        this.log.show();
        break;
      case 'webviewError':
        this.log.warn(`metrics panel ${this.runDir}: ${msg.message}`);
        break;
    }
  }

  protected override async sendSnapshot(): Promise<void> {
    await this.readMore(false);
    this.post({ type: 'snapshot', run: await this.runInfo(), rows: [...this.rows], problems: [...this.problems] });
    if (!fs.existsSync(this.runDir)) {
      this.post({ type: 'error', message: `The run directory ${this.runDir} does not exist (moved or deleted?). Open another run with Tinker: Open Metrics.` });
    }
  }

  protected override onDidChangeVisibility(): void {
    this.updatePolling();
  }

  /** Reads new lines of metrics.jsonl; sends them as an append (or a snapshot after a reset). */
  private async readMore(send = true): Promise<void> {
    if (this.isDisposed) return;
    try {
      if (!this.tail) {
        const { MetricsTail } = await import('../../core/runs/metricsTail');
        this.tail ??= new MetricsTail(path.join(this.runDir, 'metrics.jsonl'));
      }
      const r = await this.tail.read();
      if (r.reset) {
        this.rows.length = 0;
        this.problems = [];
      }
      for (const p of r.problems) {
        const line = `${p.file}:${p.line}: ${p.message}`;
        this.problems.push(line);
        this.log.warn(line);
      }
      const fresh = r.records.map(toMetricRow);
      for (const x of fresh) this.rows.push(x);
      if (!send) return;
      if (r.reset) await this.sendSnapshot();
      else if (fresh.length) this.post({ type: 'append', rows: fresh });
    } catch (err) {
      this.log.error(`metrics panel: could not read ${path.join(this.runDir, 'metrics.jsonl')}`, err);
      this.post({ type: 'error', message: `Could not read metrics.jsonl in ${this.runDir}: ${errorMessage(err)}` });
    }
  }

  private async postRun(): Promise<void> {
    this.post({ type: 'run', run: await this.runInfo() });
  }

  private async runInfo(): Promise<RunInfo> {
    const active = this.s.registry.byDir(this.runDir);
    let summary: Promise<RunSummary | undefined> | undefined;
    const summarize = () => (summary ??= readSummary(this.runDir));
    this.model ??= active?.model ?? (await summarize())?.model;
    const base = { name: path.basename(this.runDir), dir: this.runDir, model: this.model };
    const status = reportedRunStatus(active) ?? directoryRunStatus((await summarize()) ?? { finished: false });
    const progress =
      status === 'running' && active?.step !== undefined && active.endStep !== undefined ? { step: active.step, endStep: active.endStep, phase: active.phase } : undefined;
    const wandbUrl = (await summarize())?.wandbUrl;
    return { ...base, ...(wandbUrl ? { wandbUrl } : {}), status, progress };
  }

  private updatePolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
    if (this.panel.visible && !this.isDisposed) this.poll = setInterval(() => void this.readMore(), POLL_MS);
  }
}

/** The run's model and whether it has a final checkpoint (undefined when the folder cannot be read). */
async function readSummary(runDir: string): Promise<RunSummary | undefined> {
  try {
    const { summarizeRun } = await import('../../core/runs/runDirectory');
    return await summarizeRun(runDir);
  } catch {
    return undefined;
  }
}
