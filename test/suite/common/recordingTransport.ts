// A webview transport for host tests: forwards to the panel's real webview (whose real script says
// ready, gets snapshots, ...) and records everything the host sends; `deliver` hands the host a
// message as if the webview had sent it and resolves once the host has handled it.
import * as vscode from 'vscode';
import type { WebviewTransport } from '../../../src/vscode/common/webview/transport';

export class RecordingTransport implements WebviewTransport {
  readonly sent: unknown[] = [];
  private readonly sentEmitter = new vscode.EventEmitter<unknown>();
  readonly onDidSend = this.sentEmitter.event;
  private handler: ((raw: unknown) => Promise<void>) | undefined;

  constructor(private readonly webview: vscode.Webview) {}

  post(message: unknown): Thenable<boolean> {
    this.sent.push(message);
    this.sentEmitter.fire(message);
    return this.webview.postMessage(message);
  }

  onMessage(handler: (raw: unknown) => Promise<void>): vscode.Disposable {
    this.handler = handler;
    const sub = this.webview.onDidReceiveMessage((raw: unknown) => void handler(raw));
    return new vscode.Disposable(() => {
      sub.dispose();
      this.handler = undefined;
    });
  }

  async deliver(raw: unknown): Promise<void> {
    if (!this.handler) throw new Error('the host is not listening');
    await this.handler(raw);
  }

  /** Messages sent so far with the given `type`. */
  ofType<T extends { type: string }>(type: T['type']): T[] {
    return this.sent.filter((m): m is T => typeof m === 'object' && m !== null && 'type' in m && m.type === type);
  }
}

/** Records the transport of every panel a Panels registry creates. */
export class TransportRecorder {
  readonly byPanel = new Map<vscode.WebviewPanel, RecordingTransport>();
  readonly factory = (panel: vscode.WebviewPanel): RecordingTransport => {
    const t = new RecordingTransport(panel.webview);
    this.byPanel.set(panel, t);
    return t;
  };

  of(panel: vscode.WebviewPanel): RecordingTransport {
    const t = this.byPanel.get(panel);
    if (!t) throw new Error('no transport recorded for this panel');
    return t;
  }
}
