// The suite results panel's host: one suite file and one checkpoint (its result, grouped by layer) or
// two (Compare Suites, with the gate's verdicts). It reads the suite and its results
// (suiteSnapshot.ts), follows the result files while a suite run writes them, and answers the
// webview: open the suite file, open an entry's eval results, run the suite on a column's checkpoint.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { FromWebview, SuiteProtocol, SuiteRequests, SuiteSnapshot, ToWebview } from '../../protocol/suiteProtocol';
import type { Log } from '../common/log';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { errorMessage } from '../../core/errors';
import { toDisposable } from '../common/lifecycle';
import { readSuiteSnapshot } from './suiteSnapshot';

export interface SuitePanelServices {
  extensionUri: vscode.Uri;
  log: Log;
}

export function suitePanelTitle(suiteFile: string, checkpoints: readonly string[]): string {
  const name = path.basename(suiteFile).replace(/\.suite\.json$/i, '');
  const short = (c: string) => c.split('/').pop() || c;
  return checkpoints.length === 2 ? `Compare Suites: ${name} (${short(checkpoints[0]!)} vs ${short(checkpoints[1]!)})` : `Suite: ${name} · ${short(checkpoints[0] ?? '')}`;
}

export class SuitePanel extends PanelHost<ToWebview, FromWebview, typeof SuiteRequests> {
  protected readonly requestHandlers: RequestHandlers<typeof SuiteRequests> = {};
  private current: SuiteSnapshot | undefined;
  private generation = 0;
  private readonly refreshSoon: () => void;

  constructor(
    panel: vscode.WebviewPanel,
    readonly suiteFile: string,
    readonly checkpoints: readonly string[],
    s: SuitePanelServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, SuiteProtocol, s.log, `suite ${suiteFile}`);
    showPanelPage(panel, s.extensionUri, { entry: 'suite', title: 'Suite' });
    panel.title = suitePanelTitle(suiteFile, checkpoints);
    let timer: NodeJS.Timeout | undefined;
    this.refreshSoon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void this.sendSnapshot(), 300);
    };
    // the suite file itself, and every result of it (a run writes result.json as entries finish)
    const dir = vscode.Uri.file(path.dirname(suiteFile));
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(dir, `{${path.basename(suiteFile)},suites/**/result.json}`));
    this._registerAll(watcher, watcher.onDidChange(this.refreshSoon), watcher.onDidCreate(this.refreshSoon), watcher.onDidDelete(this.refreshSoon));
    this._register(toDisposable(() => clearTimeout(timer)));
  }

  /** The snapshot last prepared (the host tests read it). */
  get snapshot(): SuiteSnapshot | undefined {
    return this.current;
  }

  /** Reads the suite and its results again and repaints. */
  async refresh(): Promise<void> {
    await this.sendSnapshot();
  }

  protected override async sendSnapshot(): Promise<void> {
    const generation = ++this.generation;
    try {
      const snapshot = await readSuiteSnapshot(this.suiteFile, this.checkpoints);
      if (generation !== this.generation || this.isDisposed) return;
      this.current = snapshot;
      this.post(snapshot);
    } catch (err) {
      if (generation !== this.generation || this.isDisposed) return;
      this.log.error(`suite results: could not read ${this.suiteFile}`, err);
      this.post({ type: 'error', message: `Could not read the suite ${this.suiteFile}: ${errorMessage(err)}` });
    }
  }

  protected override notificationFailed(message: string): void {
    void vscode.window.showErrorMessage(message);
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'openSuite':
        await vscode.window.showTextDocument(vscode.Uri.file(this.suiteFile), { viewColumn: vscode.ViewColumn.Beside });
        break;
      case 'openEntry':
        await this.openEntry(msg.entry, msg.column);
        break;
      case 'run': {
        const checkpoint = this.checkpoints[msg.column];
        if (checkpoint) void vscode.commands.executeCommand(COMMAND.runSuite, { suiteFile: this.suiteFile, checkpoint });
        break;
      }
      case 'webviewError':
        this.log.warn(`suite ${this.suiteFile}: ${msg.message}`);
        break;
    }
  }

  /** An entry's eval results folder of one column, in the eval results panel. */
  async openEntry(entry: string, column: number): Promise<string> {
    const checkpoint = this.checkpoints[column];
    if (!checkpoint) throw new Error(`the suite panel has no column ${column}`);
    const { loadSuite, readSuiteResult, suiteResultDir } = await import('../../core/suite/store');
    const suite = await loadSuite(this.suiteFile);
    const result = await readSuiteResult(suite, checkpoint);
    const e = result?.entries.find((x) => x.name === entry);
    if (!e?.results_dir) throw new Error(`${entry}: no eval results of ${checkpoint} for suite ${suite.name} (version ${suite.version})`);
    const dir = path.resolve(suiteResultDir(suite, checkpoint), e.results_dir);
    await vscode.commands.executeCommand(COMMAND.openEvalResults, { dir });
    return dir;
  }
}
