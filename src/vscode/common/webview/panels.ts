// Owns the open panels of one kind, one per key (a run directory, an iteration), and restores them
// after a window reload from the state their webview saved (parsed with the panel's state schema).
// The panel's code (and zod) loads when the first panel opens, not at activation.
import * as vscode from 'vscode';
import type { z } from 'zod';
import type { Log } from '../log';
import { webviewOptions } from './html';
import { WebviewTransport, webviewTransport } from './transport';
import { Disposable, toDisposable } from '../lifecycle';

export interface OwnedPanel extends vscode.Disposable {
  readonly onDidDispose: vscode.Event<void>;
  reveal(): void;
}

export interface PanelKind<H extends OwnedPanel, K, S extends z.ZodType> {
  viewType: string;
  /** the schema of the state the webview saves with setState */
  state(): Promise<S>;
  /** the map key of a panel's subject */
  keyOf(subject: K): string;
  /** the subject a restored panel shows, from its saved state */
  subjectOf(state: z.output<S>): K;
  title(subject: K): string;
  create(panel: vscode.WebviewPanel, subject: K, transport: WebviewTransport): Promise<H>;
}

export class Panels<H extends OwnedPanel, K, S extends z.ZodType> extends Disposable {
  private readonly panels = new Map<string, H>();
  private readonly opening = new Map<string, Promise<H>>();

  constructor(
    private readonly kind: PanelKind<H, K, S>,
    private readonly extensionUri: vscode.Uri,
    private readonly log: Log,
    /** how a panel reaches its webview (the host tests record it) */
    private readonly transport: (panel: vscode.WebviewPanel) => WebviewTransport = (p) => webviewTransport(p.webview),
  ) {
    super();
    this._register(
      toDisposable(() => {
        for (const p of [...this.panels.values()]) p.dispose();
        this.panels.clear();
      }),
    );
  }

  /** Restores this kind's panels after a window reload; registered once per window. */
  registerSerializer(): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(this.kind.viewType, {
      deserializeWebviewPanel: async (panel, state: unknown) => {
        const parsed = (await this.kind.state()).safeParse(state);
        if (!parsed.success) {
          this.log.warn(`a ${this.kind.viewType} panel could not be restored: its saved state is not usable (${parsed.error.issues[0]?.message ?? 'invalid'})`);
          panel.dispose();
          return;
        }
        await this.adopt(panel, this.kind.subjectOf(parsed.data));
      },
    });
  }

  /** Shows the panel of `subject`, creating it if needed. */
  async open(subject: K): Promise<H> {
    const key = this.kind.keyOf(subject);
    const existing = this.panels.get(key);
    if (existing) {
      existing.reveal();
      return existing;
    }
    const pending = this.opening.get(key);
    if (pending) return pending;
    const panel = vscode.window.createWebviewPanel(this.kind.viewType, this.kind.title(subject), vscode.ViewColumn.Active, webviewOptions(this.extensionUri));
    const opened = this.adopt(panel, subject).finally(() => this.opening.delete(key));
    this.opening.set(key, opened);
    return opened;
  }

  get(subject: K): H | undefined {
    return this.panels.get(this.kind.keyOf(subject));
  }

  all(): H[] {
    return [...this.panels.values()];
  }

  private async adopt(panel: vscode.WebviewPanel, subject: K): Promise<H> {
    const key = this.kind.keyOf(subject);
    const host = await this.kind.create(panel, subject, this.transport(panel));
    this.panels.get(key)?.dispose();
    this.panels.set(key, host);
    host.onDidDispose(() => {
      if (this.panels.get(key) === host) this.panels.delete(key);
    });
    return host;
  }
}
