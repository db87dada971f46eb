// The host side shared by every webview panel: every message from the webview is parsed with zod
// before use; `ready` (first load, re-shown after being hidden, restored after a reload) is answered
// with a snapshot; requests get exactly one reply and can be cancelled; notifications go to the
// panel. While the webview is not ready (hidden panels lose their webview) nothing is sent: the next
// snapshot carries everything.
import * as vscode from 'vscode';
import type { z } from 'zod';
import { Envelope, errorText, Reply, Request, RequestMap } from '../../../protocol/panelProtocol';
import type { Log } from '../log';
import type { WebviewTransport } from './transport';
import { Disposable, toDisposable } from '../lifecycle';
import { errorMessage } from '../../../core/errors';

/** The functions answering a protocol's requests, one per method. */
export type RequestHandlers<R extends RequestMap> = {
  [K in keyof R]: (params: z.output<R[K]['params']>, token: vscode.CancellationToken) => Promise<z.input<R[K]['result']>>;
};

/** What the host parses: the webview's notifications and the requests it may make. */
export interface HostProtocol<FromWebview, Requests extends RequestMap> {
  fromWebview: z.ZodType<FromWebview>;
  requests: Requests;
}

/** A panel's host, sending `ToWebview` notifications and receiving `FromWebview` ones. */
export abstract class PanelHost<ToWebview, FromWebview, Requests extends RequestMap> extends Disposable {
  private ready = false;
  private readonly pending = new Map<number, vscode.CancellationTokenSource>();
  private readonly disposed = this._register(new vscode.EventEmitter<void>());
  readonly onDidDispose = this.disposed.event;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly transport: WebviewTransport,
    private readonly protocol: HostProtocol<FromWebview, Requests>,
    protected readonly log: Log,
    /** names the panel in log lines */
    private readonly label: string,
  ) {
    super();
    // released newest first: requests in flight are cancelled, then the subscriptions go, then the
    // panel closes, and last its owner hears of it
    this._register(toDisposable(() => this.disposed.fire()));
    this._register(panel);
    this._registerAll(
      panel.onDidDispose(() => this.dispose()),
      transport.onMessage((raw) => this.receive(raw)),
      panel.onDidChangeViewState(() => {
        // A hidden webview is destroyed; it says ready again when shown.
        if (!panel.visible) this.ready = false;
        this.onDidChangeVisibility();
      }),
    );
    this._register(toDisposable(() => this.pending.forEach((c) => c.cancel())));
  }

  /** Sends the webview everything it shows; called on each `ready`. */
  protected abstract sendSnapshot(): Promise<void>;
  protected abstract onNotification(message: FromWebview): Promise<void>;
  /** Hears why onNotification failed (already logged), to tell the person in the panel; default nothing. */
  protected notificationFailed(_message: string): void {}
  protected abstract readonly requestHandlers: RequestHandlers<Requests>;
  protected onDidChangeVisibility(): void {}

  /** Sends a notification, or nothing while the webview cannot receive it. */
  protected post(message: ToWebview): void {
    if (this.isDisposed || !this.ready) return;
    void this.transport.post(message);
  }

  private async receive(raw: unknown): Promise<void> {
    if (this.isDisposed) return;
    const envelope = Envelope.safeParse(raw);
    if (envelope.success) {
      const msg = envelope.data;
      if (msg.type === 'ready') {
        this.ready = true;
        await this.sendSnapshot();
      } else if (msg.type === 'request') await this.answer(msg);
      else this.pending.get(msg.id)?.cancel();
      return;
    }
    const notification = this.protocol.fromWebview.safeParse(raw);
    if (!notification.success) {
      const issue = notification.error.issues[0];
      this.log.warn(`${this.label}: ignored a malformed message from the webview (${issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid'})`);
      return;
    }
    try {
      await this.onNotification(notification.data);
    } catch (err) {
      this.log.error(`${this.label}: handling a webview message failed`, err);
      this.notificationFailed(errorMessage(err));
    }
  }

  private async answer(req: Request): Promise<void> {
    const reply = (r: Reply) => (this.isDisposed ? undefined : void this.transport.post(r));
    const spec = Object.prototype.hasOwnProperty.call(this.protocol.requests, req.method) ? this.protocol.requests[req.method] : undefined;
    const handler = spec ? (this.requestHandlers as Record<string, (p: unknown, t: vscode.CancellationToken) => Promise<unknown>>)[req.method] : undefined;
    if (!spec || !handler) return reply({ type: 'reply', id: req.id, ok: false, error: `unknown request "${req.method}"` });
    const params = spec.params.safeParse(req.params);
    if (!params.success) {
      const issue = params.error.issues[0];
      return reply({ type: 'reply', id: req.id, ok: false, error: `${req.method}: ${issue ? `${issue.path.join('.') || 'params'}: ${issue.message}` : 'invalid parameters'}` });
    }
    const cancel = new vscode.CancellationTokenSource();
    this.pending.set(req.id, cancel);
    try {
      const value = await handler(params.data, cancel.token);
      reply(cancel.token.isCancellationRequested ? { type: 'reply', id: req.id, ok: false, error: 'cancelled' } : { type: 'reply', id: req.id, ok: true, value });
    } catch (err) {
      reply({ type: 'reply', id: req.id, ok: false, error: errorText(err) });
    } finally {
      this.pending.delete(req.id);
      cancel.dispose();
    }
  }

  reveal(): void {
    this.panel.reveal();
  }
}
