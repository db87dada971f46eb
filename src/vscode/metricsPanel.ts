// The metrics panel's host side: one webview panel per run directory. It follows the run's
// metrics.jsonl (file watcher, the run's own events, and a slow poll while visible), keeps every
// row, and sends the webview a full snapshot whenever it reports ready — first load, re-shown after
// being hidden (its context is not retained), restored after a window reload by the serializer —
// then appends. Messages from the webview are parsed with zod before use.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MetricsTail } from '../core/runs/metricsTail';
import type { RunSummary } from '../core/runs/runDirectory';
import type { MetricRow, RunInfo, ToWebview } from '../../webview/shared/metricsProtocol';
import { Log } from './log';
import { RunRegistry } from './runRegistry';
import { throttle } from './throttle';

export const METRICS_VIEW_TYPE = 'tinker.metrics';
const POLL_MS = 2000;

// zod and the readers load on first use, not at activation.
const protocol = () => import('../../webview/shared/metricsProtocol');

export interface MetricsPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
  registry: RunRegistry;
}

export class MetricsPanel implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private tail: MetricsTail | undefined;
  private readonly rows: MetricRow[] = [];
  private problems: string[] = [];
  private ready = false;
  private model: string | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly posted = new vscode.EventEmitter<ToWebview>();
  /** every message sent to the webview (the tests read the snapshot here) */
  readonly onDidPost = this.posted.event;
  /** the last snapshot sent to the webview, and how many were sent */
  lastSnapshot: Extract<ToWebview, { type: 'snapshot' }> | undefined;
  snapshotsSent = 0;
  private readonly disposed = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.disposed.event;
  private isDisposed = false;
  /** progress events arrive per sample; the header follows at most four times a second */
  private readonly postRunSoon = throttle(() => void this.postRun(), 250);

  constructor(
    readonly panel: vscode.WebviewPanel,
    readonly runDir: string,
    private readonly s: MetricsPanelServices,
  ) {
    panel.webview.options = webviewOptions(s.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(s.extensionUri, 'media', 'tinker.svg');
    panel.title = `Metrics: ${path.basename(runDir)}`;
    panel.webview.html = renderHtml(panel.webview, s.extensionUri);
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((m: unknown) => void this.handleMessage(m)),
      panel.onDidChangeViewState(() => {
        // A hidden webview is destroyed; it asks for a snapshot again when shown.
        if (!panel.visible) this.ready = false;
        this.updatePolling();
      }),
      s.registry.onDidReceiveEvent(({ run, event }) => {
        if (!run.runDir || path.resolve(run.runDir) !== path.resolve(runDir)) return;
        if (event.type === 'metrics' || event.type === 'finished') void this.readMore();
        if (event.type === 'started' || event.type === 'phase' || event.type === 'finished') this.postRunSoon();
      }),
    );
    this.disposables.push(this.postRunSoon);
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(runDir), 'metrics.jsonl'));
    watcher.onDidChange(() => void this.readMore());
    watcher.onDidCreate(() => void this.readMore());
    this.disposables.push(watcher);
    void this.readMore();
    this.updatePolling();
  }

  /** Handles one message from the webview (public so tests can send what a webview could). */
  async handleMessage(raw: unknown): Promise<void> {
    const parsed = (await protocol()).FromWebview.safeParse(raw);
    if (!parsed.success) {
      this.s.log.warn(`metrics panel ${this.runDir}: ignored a malformed message from the webview (${parsed.error.issues[0]?.message ?? 'invalid'})`);
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case 'ready':
        this.ready = true;
        await this.readMore(false);
        await this.sendSnapshot();
        break;
      case 'revealRunDir':
        await vscode.commands.executeCommand(
          vscode.workspace.getWorkspaceFolder(vscode.Uri.file(this.runDir)) ? 'revealInExplorer' : 'revealFileInOS',
          vscode.Uri.file(this.runDir),
        );
        break;
      case 'showLog':
        this.s.log.show();
        break;
      case 'webviewError':
        this.s.log.warn(`metrics panel ${this.runDir}: ${msg.message}`);
        break;
    }
  }

  /** Reads new lines of metrics.jsonl; sends them as an append (or a snapshot after a reset). */
  private async readMore(send = true): Promise<void> {
    if (this.isDisposed) return;
    try {
      const { toMetricRow } = await protocol();
      if (!this.tail) {
        const { MetricsTail } = await import('../core/runs/metricsTail');
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
        this.s.log.warn(line);
      }
      const fresh = r.records.map(toMetricRow);
      this.rows.push(...fresh);
      if (!send) return;
      if (r.reset) await this.sendSnapshot();
      else if (fresh.length) this.post({ type: 'append', rows: fresh });
    } catch (err) {
      this.s.log.error(`metrics panel: could not read ${path.join(this.runDir, 'metrics.jsonl')}`, err);
      this.post({ type: 'error', message: `Could not read metrics.jsonl in ${this.runDir}: ${(err as Error).message}` });
    }
  }

  private async sendSnapshot(): Promise<void> {
    const snapshot: Extract<ToWebview, { type: 'snapshot' }> = { type: 'snapshot', run: await this.runInfo(), rows: [...this.rows], problems: [...this.problems] };
    if (this.ready) {
      this.lastSnapshot = snapshot;
      this.snapshotsSent += 1;
    }
    this.post(snapshot);
    if (!fs.existsSync(this.runDir)) {
      this.post({ type: 'error', message: `The run directory ${this.runDir} does not exist (moved or deleted?). Open another run with Tinker: Open Metrics.` });
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
    if (active && active.status !== 'starting' && active.status !== 'paused') {
      const progress =
        active.status === 'running' && active.step !== undefined && active.endStep !== undefined
          ? { step: active.step, endStep: active.endStep, phase: active.phase }
          : undefined;
      return { ...base, status: active.status, progress };
    }
    return { ...base, status: (await summarize())?.finished ? 'completed' : 'not finished' };
  }

  private post(msg: ToWebview): void {
    if (this.isDisposed) return;
    this.posted.fire(msg);
    // Before "ready" (or while hidden) the webview cannot receive; it gets a snapshot on ready.
    if (this.ready) void this.panel.webview.postMessage(msg);
  }

  private updatePolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
    if (this.panel.visible && !this.isDisposed) this.poll = setInterval(() => void this.readMore(), POLL_MS);
  }

  reveal(): void {
    this.panel.reveal();
  }

  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    clearInterval(this.poll);
    for (const d of this.disposables) d.dispose();
    this.panel.dispose();
    this.disposed.fire();
    this.disposed.dispose();
    this.posted.dispose();
  }
}

/** Opens, finds and restores metrics panels; one per run directory. */
export class MetricsPanels implements vscode.Disposable {
  private readonly panels = new Map<string, MetricsPanel>();
  private readonly serializer: vscode.Disposable;

  constructor(private readonly s: MetricsPanelServices) {
    this.serializer = vscode.window.registerWebviewPanelSerializer(METRICS_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state: unknown) => {
        const parsed = (await protocol()).MetricsPanelState.safeParse(state);
        if (!parsed.success) {
          s.log.warn('a metrics panel could not be restored: its saved state names no run directory');
          panel.dispose();
          return;
        }
        this.adopt(panel, parsed.data.runDir);
      },
    });
  }

  /** Shows the panel of `runDir`, creating it if needed. */
  open(runDir: string): MetricsPanel {
    const key = path.resolve(runDir);
    const existing = this.panels.get(key);
    if (existing) {
      existing.reveal();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(METRICS_VIEW_TYPE, `Metrics: ${path.basename(runDir)}`, vscode.ViewColumn.Active, webviewOptions(this.s.extensionUri));
    return this.adopt(panel, key);
  }

  get(runDir: string): MetricsPanel | undefined {
    return this.panels.get(path.resolve(runDir));
  }

  private adopt(panel: vscode.WebviewPanel, runDir: string): MetricsPanel {
    const key = path.resolve(runDir);
    const p = new MetricsPanel(panel, key, this.s);
    this.panels.set(key, p);
    p.onDidDispose(() => {
      if (this.panels.get(key) === p) this.panels.delete(key);
    });
    return p;
  }

  dispose(): void {
    this.serializer.dispose();
    for (const p of [...this.panels.values()]) p.dispose();
    this.panels.clear();
  }
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')],
  };
}

function renderHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = crypto.randomBytes(18).toString('base64');
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', name)).toString();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('metrics.css')}">
<title>Metrics</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${asset('metrics.js')}"></script>
</body>
</html>`;
}

/** The run's model and whether it has a final checkpoint (undefined when the folder cannot be read). */
async function readSummary(runDir: string): Promise<RunSummary | undefined> {
  try {
    const { summarizeRun } = await import('../core/runs/runDirectory');
    return await summarizeRun(runDir);
  } catch {
    return undefined;
  }
}
