// The model card panel's host: one panel per model version. It reads the registry (and MODELS.md's
// entry) into a snapshot, repaints when the registry file changes, and runs the card's buttons as
// the Models view's commands on this version (one code path for the menu and the card).
import * as vscode from 'vscode';
import type { CardAction, FromWebview, GateView, ModelCardSnapshot, ToWebview } from '../../protocol/modelCardProtocol';
import { ModelCardProtocol, ModelCardRequests } from '../../protocol/modelCardProtocol';
import { errorMessage } from '../../core/errors';
import { COMMAND } from '../common/commandIds';
import type { Log } from '../common/log';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { cardSnapshot, markdownEntry } from './modelCard';
import type { ModelRegistryFile } from './registryFile';

export interface ModelCardServices {
  extensionUri: vscode.Uri;
  log: Log;
  registry: ModelRegistryFile;
  /** the promotion gate's verdict of a version against production (undefined: no production to compare with) */
  gate(registryFile: string, id: string): Promise<GateView | undefined>;
}

const ACTION_COMMAND: Record<CardAction, string> = {
  promote: COMMAND.modelsPromote,
  retire: COMMAND.modelsRetire,
  runSuite: COMMAND.modelsRunSuite,
  openInPlayground: COMMAND.modelsOpenInPlayground,
  compare: COMMAND.modelsCompareWithProduction,
  copyPath: COMMAND.modelsCopyPath,
  clearTtl: COMMAND.modelsClearTtl,
  openModelsMd: COMMAND.modelsOpenModelsMd,
};

export class ModelCardPanel extends PanelHost<ToWebview, FromWebview, typeof ModelCardRequests> {
  protected readonly requestHandlers: RequestHandlers<typeof ModelCardRequests> = {};
  private current: ModelCardSnapshot | undefined;
  private generation = 0;
  /** the last action the card ran (the host tests read it) */
  lastAction: CardAction | undefined;

  constructor(
    panel: vscode.WebviewPanel,
    readonly id: string,
    readonly registryFile: string,
    private readonly s: ModelCardServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, ModelCardProtocol, s.log, `model card ${id}`);
    showPanelPage(panel, s.extensionUri, { entry: 'modelcard', title: id });
    panel.title = `Model: ${id}`;
    this._register(s.registry.onDidChange(() => void this.sendSnapshot()));
  }

  /** The snapshot last prepared (the host tests read it). */
  get snapshot(): ModelCardSnapshot | undefined {
    return this.current;
  }

  async refresh(): Promise<ModelCardSnapshot | undefined> {
    await this.sendSnapshot();
    return this.current;
  }

  protected override async sendSnapshot(): Promise<void> {
    const generation = ++this.generation;
    try {
      const [{ readRegistry }, { renderModelsMd }, { findVersion }] = await Promise.all([import('../../core/models/store'), import('../../core/models/markdown'), import('../../core/models/registry')]);
      const reg = await readRegistry(this.registryFile);
      const v = findVersion(reg, this.id);
      if (!v || v.id !== this.id) throw new Error(`${this.id} is not in ${this.registryFile} (removed, or the file was replaced)`);
      const gate = await this.s.gate(this.registryFile, this.id).catch((err: unknown) => ({ against: 'production', passed: false, reasons: [{ passed: false, text: `the gate could not be checked: ${errorMessage(err)}` }] }));
      const snap = cardSnapshot(reg, v, { registryFile: this.registryFile, markdown: markdownEntry(renderModelsMd(reg), v.id), ...(gate ? { gate } : {}) });
      if (generation !== this.generation || this.isDisposed) return;
      this.current = snap;
      this.post(snap);
    } catch (err) {
      this.log.error(`model card: could not read ${this.id}`, err);
      this.post({ type: 'error', message: `Could not read ${this.id} from ${this.registryFile}: ${errorMessage(err)}` });
    }
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    if (msg.type === 'webviewError') {
      this.log.warn(`model card ${this.id}: ${msg.message}`);
      return;
    }
    this.lastAction = msg.action;
    await vscode.commands.executeCommand(ACTION_COMMAND[msg.action], { id: this.id, registryFile: this.registryFile });
  }
}
