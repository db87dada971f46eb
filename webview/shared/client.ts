// A webview's typed handle on its host: acquireVsCodeApi once, notifications each way (parsed with
// the panel's schemas), requests with pending replies (cancellable), and the saved state typed by
// the panel's schema. Says `ready` once its handlers are in place.
import * as z from 'zod';
import { Reply, RequestMap } from '../../src/protocol/panelProtocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export interface ClientProtocol<ToWebview, FromWebview, Requests extends RequestMap, State> {
  toWebview: z.ZodType<ToWebview>;
  fromWebview: z.ZodType<FromWebview>;
  requests: Requests;
  state: z.ZodType<State>;
}

export class RequestError extends Error {}

export class PanelClient<ToWebview, FromWebview, Requests extends RequestMap, State> {
  private readonly api = acquireVsCodeApi();
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  private readonly handlers: Array<(message: ToWebview) => void> = [];

  constructor(private readonly protocol: ClientProtocol<ToWebview, FromWebview, Requests, State>) {
    window.addEventListener('message', (e: MessageEvent<unknown>) => this.receive(e.data));
    window.addEventListener('error', (e) => this.reportError(String(e.message)));
  }

  /** Starts the handshake: the host answers with a snapshot notification. */
  ready(): void {
    this.api.postMessage({ type: 'ready' });
  }

  post(message: FromWebview): void {
    this.api.postMessage(message);
  }

  onNotification(handler: (message: ToWebview) => void): void {
    this.handlers.push(handler);
  }

  /** Asks the host; rejects with the host's error text, or when `signal` aborts. */
  request<K extends keyof Requests & string>(method: K, params: z.input<Requests[K]['params']>, signal?: AbortSignal): Promise<z.output<Requests[K]['result']>> {
    const id = this.nextId++;
    const result: Requests[K]['result'] = this.protocol.requests[method].result;
    return new Promise((resolve, reject) => {
      const abort = () => {
        this.pending.delete(id);
        this.api.postMessage({ type: 'cancel', id });
        reject(new RequestError(`${method}: cancelled`));
      };
      if (signal?.aborted) return abort();
      signal?.addEventListener('abort', abort, { once: true });
      this.pending.set(id, {
        resolve: (value) => {
          signal?.removeEventListener('abort', abort);
          const parsed = z.safeParse(result, value);
          if (parsed.success) resolve(parsed.data);
          else reject(new RequestError(`${method}: unexpected reply (${parsed.error.issues[0]?.message ?? 'invalid'})`));
        },
        reject: (err) => {
          signal?.removeEventListener('abort', abort);
          reject(err);
        },
      });
      this.api.postMessage({ type: 'request', id, method, params });
    });
  }

  /** The saved state, or undefined when there is none or it does not parse. */
  getState(): State | undefined {
    const parsed = this.protocol.state.safeParse(this.api.getState());
    return parsed.success ? parsed.data : undefined;
  }

  setState(state: State): void {
    this.api.setState(state);
  }

  private receive(raw: unknown): void {
    const reply = Reply.safeParse(raw);
    if (reply.success) {
      const r = reply.data;
      const p = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (r.ok) p?.resolve(r.value);
      else p?.reject(new RequestError(r.error));
      return;
    }
    const parsed = this.protocol.toWebview.safeParse(raw);
    if (!parsed.success) {
      this.reportError(`unexpected message from the host: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      return;
    }
    for (const h of this.handlers) h(parsed.data);
  }

  private reportError(message: string): void {
    this.api.postMessage({ type: 'webviewError', message: message.slice(0, 4000) });
  }
}
