// One Tinker connection per window: resolves the backend from settings (starting the local engine
// when it is "local"), takes the API key from secret storage, and hands out a connected
// ServiceClient. A settings or key change drops the cached client so the next use reconnects.
import type * as vscode from 'vscode';
import type { ServiceClient } from '../../core/tinker/client';
import { ResolvedBackend, describeBackend } from '../../core/config/backendKinds';
import { LocalEngine } from './localEngine';
import { Log } from '../common/log';
import { ApiKeyStore } from './secrets';
import { readNetworkSettings } from '../common/networkSettings';
import { projectIdSetting, readBackend } from '../common/settings';
import type { TrustedServers } from './trustedServers';
import { Disposable, toDisposable } from '../common/lifecycle';
import { openAiBaseUrl } from '../../core/openai/endpoint';

export class TinkerConnection extends Disposable {
  private client: Promise<ServiceClient> | undefined;

  constructor(
    private readonly engine: LocalEngine,
    private readonly apiKeys: Pick<ApiKeyStore, 'get'>,
    private readonly log: Log,
    private readonly version: string,
    private readonly trusted: Pick<TrustedServers, 'mayReceiveKey'>,
  ) {
    super();
    this._register(toDisposable(() => this.reset()));
    // a client of a dead engine is of no use: the next get() starts a new engine
    this._register(engine.onDidExitUnexpectedly(() => this.reset()));
  }

  /** Fires when the local engine dies under the runs using it. */
  get onLocalEngineExit(): vscode.Event<string> {
    return this.engine.onDidExitUnexpectedly;
  }

  /** The connected client (connecting on first use). */
  get(): Promise<ServiceClient> {
    this.client ??= this.connect().catch((err: unknown) => {
      this.client = undefined;
      throw err;
    });
    return this.client;
  }

  private async connect(): Promise<ServiceClient> {
    return this.open(await readBackend());
  }

  /**
   * A new client of its own for `backend` (a GRPO run closes its client when it ends, so it must not
   * get the shared one). Starts the local engine when needed.
   */
  /** A new client of `backend`; its session is created in `projectId` (default: the tinker.projectId setting). */
  async open(backend: ResolvedBackend, projectId: string | undefined = projectIdSetting(), o: { withoutSession?: boolean } = {}): Promise<ServiceClient> {
    let baseUrl: string;
    let apiKey: string | undefined;
    if (backend.kind === 'local') {
      ({ url: baseUrl, apiKey } = await this.engine.ensureStarted());
    } else {
      baseUrl = backend.baseUrl;
      apiKey = await this.keyFor(backend);
    }
    const { ServiceClient } = await import('../../core/tinker/client');
    const { viaProxy } = await import('../../core/tinker/proxy');
    const client = await ServiceClient.connect({
      baseUrl,
      apiKey,
      clientVersion: this.version,
      ...(projectId ? { projectId } : {}),
      // REST-only use (reading usage): no session is created
      ...(o.withoutSession ? { withoutSession: true } : {}),
      network: readNetworkSettings(),
      onWarning: (m) => this.log.warn(m),
      onQueueState: (e) => this.log.info(`${e.requestId ? `request ${e.requestId}` : 'a submission'}${e.requestType ? ` (${e.requestType})` : ''}: queue ${e.queueState}${e.reason ? ` — ${e.reason}` : ''}`),
    });
    const route = client.transport.route ? viaProxy(client.transport.route) : '';
    this.log.info(`connected to ${describeBackend(backend)} at ${baseUrl}${route} (session ${client.sessionId})`);
    return client;
  }

  /** The API key (SecretStorage, else TINKER_API_KEY) `backend` may receive; throws where the cloud cannot work without it. */
  private async keyFor(backend: Exclude<ResolvedBackend, { kind: 'local' }>): Promise<string | undefined> {
    const baseUrl = backend.baseUrl;
    const apiKey = (await this.apiKeys.get())?.key;
    if (backend.kind === 'cloud' && !apiKey) {
      throw new Error('The Tinker cloud needs an API key: run "Tinker: Set API Key" (or set TINKER_API_KEY).');
    }
    if (!apiKey) return undefined;
    const verdict = await this.trusted.mayReceiveKey(baseUrl);
    if (verdict.ok) return apiKey;
    // a custom server may need no key: connect without it; the cloud cannot work without one
    if (backend.kind === 'cloud') throw new Error(`The API key was not sent to ${baseUrl}: ${verdict.reason}.`);
    this.log.warn(`connecting to ${baseUrl} without the API key: ${verdict.reason}`);
    return undefined;
  }

  /**
   * The current backend's OpenAI-compatible endpoint: the local engine's URL + /v1 (starting the
   * engine) with its per-launch key, or the service's base URL + /oai/api/v1 with the API key when
   * `withKey` (and the server may receive it). The key never leaves this object but in a request.
   */
  async openAiEndpoint(o: { withKey: boolean }): Promise<{ backend: ResolvedBackend['kind']; baseUrl: string; apiKey?: string }> {
    const backend = await readBackend();
    if (backend.kind === 'local') {
      const { url, apiKey } = await this.engine.ensureStarted();
      return { backend: 'local', baseUrl: openAiBaseUrl('local', url), ...(o.withKey ? { apiKey } : {}) };
    }
    const apiKey = o.withKey ? await this.keyFor(backend) : undefined;
    return { backend: backend.kind, baseUrl: openAiBaseUrl(backend.kind, backend.baseUrl), ...(apiKey ? { apiKey } : {}) };
  }

  /** Forget the current client (settings or key changed); the next get() reconnects. */
  reset(): void {
    const c = this.client;
    this.client = undefined;
    void c?.then((x) => x.close()).catch(() => undefined);
  }
}
