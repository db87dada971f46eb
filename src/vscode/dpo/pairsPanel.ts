// The Preference Pairs panel's host side: one panel per source, a pairs file (a dataset, the
// playground's preferences file) or a DPO run directory. For a run it reads the run's pairs file
// (through config.json) and the margins of iteration_NNNNNN/pairs.jsonl, and follows the run live
// (file watcher, the run's own events, a slow poll while visible). A click on a pair opens its chosen
// and rejected completions in the native diff editor.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { FromWebview, PairRow, PairsProtocol, PairsRequests, ToWebview } from '../../protocol/pairsProtocol';
import type { Log } from '../common/log';
import { throttle } from '../common/throttle';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { toDisposable } from '../common/lifecycle';
import { errorMessage } from '../../core/errors';
import { SAMPLE_SCHEME } from '../samples/sampleDocuments';
import { PAIRS_AUTHORITY } from './pairsDocuments';

const POLL_MS = 3000;


export interface PairsPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
  /** the run's events (a DPO run of this window writes its margins step by step) */
  onRunEvent: vscode.Event<{ runDir: string | undefined; type: string }>;
  /** whether a run of this window is writing into `runDir` */
  isRunning(runDir: string): boolean;
}

/** A source is a run when it is a directory with a config.json. */
export function isRunSource(source: string): boolean {
  return fs.existsSync(path.join(source, 'config.json'));
}

export class PairsPanel extends PanelHost<ToWebview, FromWebview, typeof PairsRequests> {
  private rows: PairRow[] = [];
  private pairsFile = '';
  private nextStep = 0;
  private poll: NodeJS.Timeout | undefined;
  private readonly isRun: boolean;
  private readonly readMarginsSoon = throttle(() => void this.readMargins(), 500);

  protected readonly requestHandlers: RequestHandlers<typeof PairsRequests> = {};

  constructor(
    panel: vscode.WebviewPanel,
    readonly source: string,
    private readonly s: PairsPanelServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, PairsProtocol, s.log, `pairs panel ${source}`);
    this.isRun = isRunSource(source);
    panel.title = `Pairs: ${path.basename(source)}`;
    showPanelPage(panel, s.extensionUri, { entry: 'pairs', title: 'Preference Pairs' });
    const watcher = vscode.workspace.createFileSystemWatcher(this.isRun ? new vscode.RelativePattern(vscode.Uri.file(source), 'iteration_*/pairs.jsonl') : new vscode.RelativePattern(vscode.Uri.file(path.dirname(source)), path.basename(source)));
    const changed = () => (this.isRun ? this.readMarginsSoon() : void this.sendSnapshot());
    watcher.onDidChange(changed);
    watcher.onDidCreate(changed);
    this._registerAll(
      watcher,
      this.readMarginsSoon,
      toDisposable(() => clearInterval(this.poll)),
      s.onRunEvent((e) => {
        if (this.isRun && e.runDir && path.resolve(e.runDir) === path.resolve(source) && (e.type === 'metrics' || e.type === 'finished')) this.readMarginsSoon();
      }),
    );
    this.updatePolling();
  }

  /** the rows as the host holds them (tests read them) */
  get pairs(): readonly PairRow[] {
    return this.rows;
  }

  protected override onDidChangeVisibility(): void {
    this.updatePolling();
  }

  private updatePolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
    if (this.isRun && this.panel.visible) this.poll = setInterval(() => void this.readMargins(), POLL_MS);
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'diff':
        await this.diff(msg.id);
        break;
      case 'openFile': {
        const line = msg.id ? Number(/:(\d+)$/.exec(msg.id)?.[1] ?? '1') : 1;
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(this.pairsFile));
        const pos = new vscode.Position(Math.max(0, line - 1), 0);
        await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preview: true });
        break;
      }
      case 'webviewError':
        this.log.warn(`pairs panel ${this.source}: ${msg.message}`);
        break;
    }
  }

  /** The pair's chosen and rejected completions side by side (the prompt above each). */
  async diff(id: string): Promise<{ left: vscode.Uri; right: vscode.Uri }> {
    const p = this.rows.find((r) => r.id === id);
    if (!p) throw new Error(`no pair ${id} in ${this.pairsFile}`);
    const doc = (side: 'chosen' | 'rejected', text: string) =>
      vscode.Uri.from({ scheme: SAMPLE_SCHEME, authority: PAIRS_AUTHORITY, path: `/${encodeURIComponent(id)}/${side}.txt`, query: new URLSearchParams({ doc: `${p.prompt}\n\n--- ${side} ---\n${text}\n` }).toString() });
    const left = doc('chosen', p.chosen);
    const right = doc('rejected', p.rejected);
    await vscode.commands.executeCommand('vscode.diff', left, right, `${id}: chosen ↔ rejected`, { preview: true });
    return { left, right };
  }

  protected override async sendSnapshot(): Promise<void> {
    try {
      const { pairsOfRun, readPairRows, readRunMargins } = await import('../../core/dpo/pairsView');
      let beta: number | undefined;
      let label: string | undefined;
      if (this.isRun) {
        const r = pairsOfRun(this.source);
        this.pairsFile = r.pairsFile;
        label = r.label;
        beta = r.beta;
      } else this.pairsFile = this.source;
      const { rows, skipped } = await readPairRows(this.pairsFile, label);
      for (const s of skipped) this.log.warn(`${s.where}: ${s.reason}`);
      this.rows = rows;
      if (this.isRun) {
        const { applyMargins } = await import('../../protocol/pairsProtocol');
        const m = readRunMargins(this.source, 0);
        applyMargins(this.rows, m.updates);
        this.nextStep = m.nextStep;
      }
      this.post({
        type: 'snapshot',
        title: path.basename(this.source),
        source: { kind: this.isRun ? 'run' : 'file', path: this.source, pairsFile: this.pairsFile },
        ...(beta !== undefined ? { beta } : {}),
        running: this.isRun && this.s.isRunning(this.source),
        pairs: this.rows,
        skipped,
      });
    } catch (err) {
      this.log.error(`pairs panel: could not read ${this.source}`, err);
      this.post({ type: 'error', message: `Could not read the pairs of ${this.source}: ${errorMessage(err)}` });
    }
  }

  /** Reads the margins of the steps written since the last read and sends them. */
  private async readMargins(): Promise<void> {
    if (this.isDisposed || !this.isRun || this.rows.length === 0) return;
    const { readRunMargins } = await import('../../core/dpo/pairsView');
    const { applyMargins } = await import('../../protocol/pairsProtocol');
    // the last step read may have been read while it was written: read it again
    const from = Math.max(0, this.nextStep - 1);
    const m = readRunMargins(this.source, from);
    if (m.updates.length === 0) return;
    applyMargins(this.rows, m.updates);
    this.nextStep = m.nextStep;
    this.post({ type: 'margins', updates: m.updates, running: this.s.isRunning(this.source) });
  }
}
