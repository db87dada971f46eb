// The service client: the bootstrap handshake, the optional JWT exchange, a session with
// heartbeats and the REST calls; it creates the training and sampling clients of that session.
// It speaks tinker-protocol.md as the Python SDK 0.25 does, so it works against the Tinker cloud,
// SkyRL and the embedded engine alike.
import { NotFoundError, TinkerApiError, TinkerError } from './errors';
import { APIFuture, PollContext, QueueStateEvent, RequestType, ResultDecoder } from './futures';
import { SamplingClient } from './samplingClient';
import { splitTinkerPath } from './tinkerPath';
import { TrainingClient } from './trainingClient';
import type { UsageMeter } from './usage';
import type { NetworkOptions } from './proxy';
import { Sleep, Transport, realSleep, withSubmissionRetries } from './transport';
import * as W from './wire';
import type { z } from 'zod';

export const SDK_COMPAT_VERSION = '0.25.0';
export const DEFAULT_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

export interface ServiceClientOptions {
  baseUrl?: string;
  /** API key (tml-…) or a JWT; omitted for servers without auth (the engine, SkyRL) */
  apiKey?: string;
  /** "Tinker Studio" version for the User-Agent */
  clientVersion?: string;
  tags?: string[];
  userMetadata?: Record<string, unknown>;
  projectId?: string;
  /** protobuf (SDK 0.25) or JSON forward_backward bodies (for servers that want JSON) */
  forwardBackwardFormat?: 'protobuf' | 'json';
  heartbeatIntervalMs?: number;
  /** client-side timeout of a retrieve_future poll (default 320 s, above SkyRL's 300 s hold) */
  pollTimeoutMs?: number;
  requestTimeoutMs?: number;
  maxRetries?: number;
  /** for tests: injectable waiting and randomness */
  sleep?: Sleep;
  random?: () => number;
  /** for tests: the clock JWT expiry is judged by (ms since the epoch; default Date.now) */
  now?: () => number;
  /** for tests: the submission-retry budget (default 300 s) */
  submissionBudgetMs?: number;
  onQueueState?: (e: QueueStateEvent) => void;
  onWarning?: (message: string) => void;
  /** proxy and certificate settings (default: HTTPS_PROXY / HTTP_PROXY / NO_PROXY from the environment) */
  network?: NetworkOptions;
  /** REST-only use: skip creating a session */
  withoutSession?: boolean;
}

export interface LoraOptions {
  rank?: number;
  seed?: number;
  trainMlp?: boolean;
  trainAttn?: boolean;
  trainUnembed?: boolean;
  userMetadata?: Record<string, unknown>;
}

/** Decodes the `exp` claim (Unix seconds) of a JWT without checking its signature. */
export function jwtExpiry(jwt: string): number | undefined {
  const part = jwt.split('.')[1];
  if (!part) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}
export class ServiceClient {
  readonly transport: Transport;
  readonly sleep: Sleep;
  config!: W.ClientConfigResponse;
  sessionId: string | undefined;
  private jwt: string | undefined;
  /** earlier JWTs of this client, still redacted from error text */
  private readonly pastJwts: string[] = [];
  private jwtRefresh: NodeJS.Timeout | undefined;
  /** the one exchange in flight: the background and the on-demand refresh share it */
  private refreshing: Promise<void> | undefined;
  private readonly now: () => number;
  private heartbeat: NodeJS.Timeout | undefined;
  private lastHeartbeatOk = Date.now();
  private modelSeq = 0;
  /** a run's meter: the training and sampling clients this session creates count their tokens into it */
  usage: UsageMeter | undefined;
  private samplingSeq = 0;
  private closed = false;
  readonly pollContext: PollContext;

  private constructor(readonly opts: ServiceClientOptions) {
    this.sleep = opts.sleep ?? realSleep;
    this.now = opts.now ?? Date.now;
    const version = opts.clientVersion ?? '0.0.0';
    this.transport = new Transport({
      baseUrl: opts.baseUrl ?? process.env.TINKER_BASE_URL ?? DEFAULT_BASE_URL,
      credential: () => this.credential(),
      userAgent: `TinkerStudio/${version} (node ${process.versions.node}; tinker-protocol ${SDK_COMPAT_VERSION})`,
      sleep: this.sleep,
      random: opts.random,
      maxRetries: opts.maxRetries,
      timeoutMs: opts.requestTimeoutMs,
      network: opts.network,
      secrets: () => [opts.apiKey ?? '', this.jwt ?? '', ...this.pastJwts],
      headers: {
        'x-stainless-package-version': SDK_COMPAT_VERSION,
        ...(process.env.CLOUDFLARE_ACCESS_CLIENT_ID ? { 'cf-access-client-id': process.env.CLOUDFLARE_ACCESS_CLIENT_ID } : {}),
        ...(process.env.CLOUDFLARE_ACCESS_CLIENT_SECRET ? { 'cf-access-client-secret': process.env.CLOUDFLARE_ACCESS_CLIENT_SECRET } : {}),
      },
    });
    this.pollContext = {
      transport: this.transport,
      sleep: this.sleep,
      pollTimeoutMs: opts.pollTimeoutMs ?? 320_000,
      onQueueState: opts.onQueueState,
    };
  }

  /** Handshake (client/config), JWT exchange when the server wants it, then a session with heartbeats. */
  static async connect(opts: ServiceClientOptions): Promise<ServiceClient> {
    if (opts.apiKey && !opts.apiKey.startsWith('tml-') && !opts.apiKey.startsWith('eyJ')) {
      throw new TinkerError('The API key does not look like a Tinker key (they start with "tml-"); check "Tinker: Set API Key".');
    }
    const c = new ServiceClient(opts);
    try {
      await c.bootstrap();
    } catch (err) {
      c.close();
      throw err;
    }
    return c;
  }

  /**
   * The credential of the next request: the exchanged JWT when there is one. With 60 s or less left
   * on it, it is refreshed first (as the SDK does before each request); if that fails the old one is
   * sent anyway.
   */
  private async credential(): Promise<string> {
    const exp = this.jwt ? jwtExpiry(this.jwt) : undefined;
    if (exp !== undefined && exp * 1000 - this.now() <= 60_000 && !this.closed) await this.refreshJwt().catch(() => undefined);
    return this.jwt ?? this.opts.apiKey ?? '';
  }

  submissionRetries<T>(fn: () => Promise<T>, signal?: AbortSignal, retryConflicts = true): Promise<T> {
    return withSubmissionRetries(fn, { sleep: this.sleep, signal, budgetMs: this.opts.submissionBudgetMs, retryConflicts });
  }

  private async bootstrap(): Promise<void> {
    try {
      this.config = await this.submissionRetries(() =>
        this.transport.json(W.ClientConfigResponse, { method: 'POST', path: '/api/v1/client/config', json: { sdk_version: SDK_COMPAT_VERSION } }),
      );
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      this.config = W.ClientConfigResponse.parse({});
    }
    if (this.config.pjwt_auth_enabled && this.opts.apiKey && !this.opts.apiKey.startsWith('eyJ')) {
      await this.submissionRetries(() => this.exchangeJwt());
    }
    if (this.opts.withoutSession) return;
    const s = await this.transport.json(W.CreateSessionResponse, {
      method: 'POST',
      path: '/api/v1/create_session',
      json: {
        tags: [...new Set(this.opts.tags ?? (process.env.TINKER_TAGS ? process.env.TINKER_TAGS.split(',') : []))],
        user_metadata: this.opts.userMetadata ?? {},
        sdk_version: SDK_COMPAT_VERSION,
        ...(this.opts.projectId ?? process.env.TINKER_PROJECT_ID ? { project_id: this.opts.projectId ?? process.env.TINKER_PROJECT_ID } : {}),
        type: 'create_session',
      },
    });
    this.sessionId = s.session_id;
    for (const m of [s.warning_message, s.error_message]) if (m) this.opts.onWarning?.(m);
    this.startHeartbeat();
  }

  /** One JWT refresh at a time: callers arriving meanwhile wait for the exchange in flight. */
  private refreshJwt(): Promise<void> {
    this.refreshing ??= this.exchangeJwt().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** POST /auth/token with the API key (never with the current JWT), then schedules the background refresh. */
  private async exchangeJwt(): Promise<void> {
    const r = await this.transport.json(W.AuthTokenResponse, {
      method: 'POST',
      path: '/api/v1/auth/token',
      json: {},
      headers: { 'x-api-key': this.opts.apiKey ?? '' },
    });
    if (this.jwt && this.jwt !== r.jwt) {
      this.pastJwts.push(this.jwt);
      if (this.pastJwts.length > 4) this.pastJwts.shift();
    }
    this.jwt = r.jwt;
    this.scheduleJwtRefresh(jwtExpiry(r.jwt));
  }

  /** Background refresh 300 s before expiry; a failed one is retried after 60 s (the old token is used meanwhile). */
  private scheduleJwtRefresh(exp: number | undefined, delayMs?: number): void {
    clearTimeout(this.jwtRefresh);
    const inMs = delayMs ?? (exp === undefined ? undefined : Math.max(exp * 1000 - this.now() - 300_000, 1000));
    if (this.closed || inMs === undefined) return;
    this.jwtRefresh = setTimeout(() => {
      this.refreshJwt().catch(() => this.scheduleJwtRefresh(undefined, 60_000));
    }, inMs);
    this.jwtRefresh.unref();
  }

  private startHeartbeat(): void {
    const interval = this.opts.heartbeatIntervalMs ?? 10_000;
    const beat = async () => {
      if (this.closed || !this.sessionId) return;
      try {
        await this.transport.call({
          method: 'POST',
          path: '/api/v1/session_heartbeat',
          json: { session_id: this.sessionId, type: 'session_heartbeat' },
          timeoutMs: 10_000,
          retry: false,
        });
        this.lastHeartbeatOk = Date.now();
      } catch {
        if (Date.now() - this.lastHeartbeatOk > 120_000) {
          this.opts.onWarning?.(`no successful session heartbeat for ${Math.round((Date.now() - this.lastHeartbeatOk) / 1000)} s: the session will be terminated if this persists`);
        }
      }
      if (!this.closed) {
        this.heartbeat = setTimeout(() => void beat(), interval);
        this.heartbeat.unref();
      }
    };
    this.heartbeat = setTimeout(() => void beat(), interval);
    this.heartbeat.unref();
  }

  private requireSession(): string {
    if (!this.sessionId) throw new TinkerError('this client was created without a session (REST only)');
    return this.sessionId;
  }

  nextSamplingSeq(): number {
    return this.samplingSeq++;
  }

  future<T>(requestId: string, type: RequestType, decoder: ResultDecoder<T>, roundtripSeconds = 0): APIFuture<T> {
    return new APIFuture(this.pollContext, requestId, type, decoder, roundtripSeconds);
  }

  // ---------- models ----------

  async capabilities(signal?: AbortSignal): Promise<W.ServerCapabilities> {
    return this.submissionRetries(() => this.transport.json(W.ServerCapabilities, { method: 'GET', path: '/api/v1/get_server_capabilities', signal }), signal);
  }

  private contextLengths: Promise<Map<string, number>> | undefined;

  /** max_context_length of `baseModel` from the server's capabilities (asked once per client), if it gives one. */
  async contextLength(baseModel: string, signal?: AbortSignal): Promise<number | undefined> {
    this.contextLengths ??= this.capabilities(signal).then(
      (caps) => new Map(caps.supported_models.flatMap((m) => (m.model_name && m.max_context_length ? [[m.model_name, m.max_context_length] as const] : []))),
    );
    const lengths = this.contextLengths;
    try {
      return (await lengths).get(baseModel);
    } catch (e) {
      if (this.contextLengths === lengths) this.contextLengths = undefined; // asked again next time
      throw e;
    }
  }

  /** The base model of a sampler; undefined where the server does not know the sampler or the route. */
  async samplerBaseModel(samplerId: string, signal?: AbortSignal): Promise<string | undefined> {
    try {
      return (await this.samplerInfo(samplerId, signal)).base_model;
    } catch (e) {
      if (e instanceof NotFoundError || (e instanceof TinkerApiError && e.status === 405)) return undefined;
      throw e;
    }
  }

  async healthz(signal?: AbortSignal): Promise<{ status: string }> {
    return this.transport.json(W.HealthzResponse, { method: 'GET', path: '/api/v1/healthz', signal });
  }

  async createLoraTrainingClient(baseModel: string, o: LoraOptions = {}, signal?: AbortSignal): Promise<TrainingClient> {
    const sessionId = this.requireSession();
    const lora = { rank: o.rank ?? 32, seed: o.seed, train_unembed: o.trainUnembed ?? true, train_mlp: o.trainMlp ?? true, train_attn: o.trainAttn ?? true };
    if (!lora.train_attn && !lora.train_mlp && !lora.train_unembed) throw new TinkerError('at least one of trainAttn, trainMlp, trainUnembed must be true');
    const modelSeqId = this.modelSeq++;
    const t0 = Date.now();
    const handle = await this.transport.json(W.FutureHandle, {
      method: 'POST',
      path: '/api/v1/create_model',
      json: {
        session_id: sessionId,
        model_seq_id: modelSeqId,
        base_model: baseModel,
        ...(o.userMetadata ? { user_metadata: o.userMetadata } : {}),
        lora_config: lora.seed === undefined ? { ...lora, seed: undefined } : lora,
        type: 'create_model',
      },
      signal,
    });
    const created = await this.future(handle.request_id, 'CreateModel', { kind: 'json', schema: W.CreateModelResult }, (Date.now() - t0) / 1000).result(signal);
    return new TrainingClient(this, created.model_id, baseModel);
  }

  /** A training client with the weights (and, when asked, the optimizer state) of a checkpoint. */
  async createTrainingClientFromState(path: string, o: { withOptimizer?: boolean; userMetadata?: Record<string, unknown> } = {}, signal?: AbortSignal): Promise<TrainingClient> {
    const sessionId = this.requireSession();
    if (this.config.create_model_via_load_weights) {
      const modelSeqId = this.modelSeq++;
      const handle = await this.submissionRetries(
        () =>
          this.transport.json(W.FutureHandle, {
            method: 'POST',
            path: '/api/v1/load_weights',
            json: { session_id: sessionId, model_seq_id: modelSeqId, path, optimizer: o.withOptimizer ?? false, ...(o.userMetadata ? { user_metadata: o.userMetadata } : {}), type: 'load_weights' },
            signal,
          }),
        signal,
      );
      const r = await this.future(handle.request_id, 'LoadWeights', { kind: 'json', schema: W.LoadWeightsResult }).result(signal);
      const info = await this.weightsInfo(path, signal);
      return new TrainingClient(this, r.model_id ?? `${sessionId}:train:${modelSeqId}`, info.base_model);
    }
    const info = await this.weightsInfo(path, signal);
    const tc = await this.createLoraTrainingClient(
      info.base_model,
      { rank: info.lora_rank ?? 32, trainAttn: info.train_attn ?? true, trainMlp: info.train_mlp ?? true, trainUnembed: info.train_unembed ?? true, userMetadata: o.userMetadata },
      signal,
    );
    await (await tc.loadState(path, o.withOptimizer ?? false, signal)).result(signal);
    return tc;
  }

  /** A sampling client over a sampler checkpoint (its base model, when the caller knows it) or a base model. */
  async createSamplingClient(source: { modelPath: string; baseModel?: string } | { baseModel: string }, signal?: AbortSignal): Promise<SamplingClient> {
    const sessionId = this.requireSession();
    if ('modelPath' in source && !source.modelPath.startsWith('tinker://')) throw new TinkerError(`a sampler path starts with tinker:// (got "${source.modelPath}")`);
    const seq = this.nextSamplingSeq();
    const r = await this.transport.json(W.CreateSamplingSessionResponse, {
      method: 'POST',
      path: '/api/v1/create_sampling_session',
      json: {
        session_id: sessionId,
        sampling_session_seq_id: seq,
        ...('modelPath' in source ? { model_path: source.modelPath } : { base_model: source.baseModel }),
        type: 'create_sampling_session',
      },
      signal,
    });
    return new SamplingClient(this, r.sampling_session_id, undefined, source.baseModel);
  }

  // ---------- REST ----------

  private rest<T extends z.ZodType>(schema: T, method: 'GET' | 'POST', path: string, extra: { query?: Record<string, string | number | undefined>; json?: unknown; signal?: AbortSignal } = {}) {
    return this.submissionRetries(() => this.transport.json(schema, { method, path, ...extra }), extra.signal);
  }

  /**
   * A REST call without an answer body. Publish/unpublish answer 409 for "already public/private":
   * unlike the Python SDK, that is final here rather than retried for five minutes.
   */
  private async restEmpty(method: 'POST' | 'PUT' | 'DELETE', path: string, json?: unknown, signal?: AbortSignal, retryConflicts = true): Promise<void> {
    await this.submissionRetries(() => this.transport.call({ method, path, json, signal, retryConflicts }), signal, retryConflicts);
  }

  weightsInfo(tinkerPath: string, signal?: AbortSignal) {
    return this.rest(W.WeightsInfoResponse, 'POST', '/api/v1/weights_info', { json: { tinker_path: tinkerPath }, signal });
  }

  samplerInfo(samplerId: string, signal?: AbortSignal) {
    return this.rest(W.SamplerInfo, 'GET', `/api/v1/samplers/${encodeURIComponent(samplerId)}`, { signal });
  }

  listTrainingRuns(o: { limit?: number; offset?: number; accessScope?: 'owned' | 'accessible'; projectId?: string } = {}, signal?: AbortSignal) {
    return this.rest(W.TrainingRunsResponse, 'GET', '/api/v1/training_runs', {
      query: { limit: o.limit ?? 20, offset: o.offset ?? 0, access_scope: o.accessScope ?? 'owned', project_id: o.projectId },
      signal,
    });
  }

  /** Every training run, following offset/limit pages until total_count. */
  async allTrainingRuns(signal?: AbortSignal): Promise<W.TrainingRun[]> {
    const out: W.TrainingRun[] = [];
    for (let offset = 0; ; ) {
      const page = await this.listTrainingRuns({ limit: 100, offset }, signal);
      for (const x of page.training_runs) out.push(x);
      offset += page.training_runs.length;
      if (!page.cursor || page.training_runs.length === 0 || offset >= page.cursor.total_count) return out;
    }
  }

  /** The caller's sessions (SDK list_sessions): ids, a page at a time. */
  listSessions(o: { limit?: number; offset?: number } = {}, signal?: AbortSignal) {
    return this.rest(W.SessionsResponse, 'GET', '/api/v1/sessions', { query: { limit: o.limit ?? 20, offset: o.offset ?? 0, access_scope: 'owned' }, signal });
  }

  /** A session's training runs and samplers (SDK get_session). */
  getSession(sessionId: string, signal?: AbortSignal) {
    return this.rest(W.SessionInfoResponse, 'GET', `/api/v1/sessions/${encodeURIComponent(sessionId)}`, { query: { access_scope: 'owned' }, signal });
  }

  getTrainingRun(runId: string, signal?: AbortSignal) {
    return this.rest(W.TrainingRunSchema, 'GET', `/api/v1/training_runs/${encodeURIComponent(runId)}`, { query: { access_scope: 'owned' }, signal });
  }

  listCheckpoints(runId: string, signal?: AbortSignal) {
    return this.rest(W.CheckpointsResponse, 'GET', `/api/v1/training_runs/${encodeURIComponent(runId)}/checkpoints`, { signal });
  }

  listUserCheckpoints(o: { limit?: number; offset?: number } = {}, signal?: AbortSignal) {
    return this.rest(W.CheckpointsResponse, 'GET', '/api/v1/checkpoints', { query: { limit: o.limit ?? 100, offset: o.offset ?? 0 }, signal });
  }

  deleteCheckpoint(tinkerPath: string, signal?: AbortSignal) {
    const { runId, checkpointId } = splitTinkerPath(tinkerPath);
    return this.restEmpty('DELETE', `/api/v1/training_runs/${encodeURIComponent(runId)}/checkpoints/${checkpointId}`, undefined, signal);
  }

  publishCheckpoint(tinkerPath: string, signal?: AbortSignal) {
    const { runId, checkpointId } = splitTinkerPath(tinkerPath);
    return this.restEmpty('POST', `/api/v1/training_runs/${encodeURIComponent(runId)}/checkpoints/${checkpointId}/publish`, undefined, signal, false);
  }

  unpublishCheckpoint(tinkerPath: string, signal?: AbortSignal) {
    const { runId, checkpointId } = splitTinkerPath(tinkerPath);
    return this.restEmpty('DELETE', `/api/v1/training_runs/${encodeURIComponent(runId)}/checkpoints/${checkpointId}/publish`, undefined, signal, false);
  }

  /** Sets the checkpoint to expire in `ttlSeconds`, or removes the expiry with null. */
  setCheckpointTtl(tinkerPath: string, ttlSeconds: number | null, signal?: AbortSignal) {
    if (ttlSeconds !== null && !(ttlSeconds > 0)) throw new TinkerError('ttlSeconds must be positive, or null to remove the expiry');
    const { runId, checkpointId } = splitTinkerPath(tinkerPath);
    return this.restEmpty('PUT', `/api/v1/training_runs/${encodeURIComponent(runId)}/checkpoints/${checkpointId}/ttl`, { ttl_seconds: ttlSeconds }, signal);
  }

  /** A signed download URL of the checkpoint's archive (302 Location or 200 {url}); waits while it is built (503). */
  async checkpointArchiveUrl(tinkerPath: string, signal?: AbortSignal): Promise<{ url: string; expires: Date }> {
    const { runId, checkpointId } = splitTinkerPath(tinkerPath);
    for (let attempt = 0; ; attempt++) {
      const res = await this.submissionRetries(
        () =>
          this.transport.call({
            method: 'GET',
            path: `/api/v1/training_runs/${encodeURIComponent(runId)}/checkpoints/${checkpointId}/archive`,
            acceptRedirect: true,
            signal,
          }).catch((err: unknown) => {
            if (err instanceof TinkerApiError && err.status === 503) return { status: 503, headers: {} as Record<string, string>, body: Buffer.alloc(0) };
            throw err;
          }),
        signal,
      );
      if (res.status === 503) {
        if (attempt >= 5) throw new TinkerError(`the archive of ${tinkerPath} is still being prepared; try again later`);
        await this.sleep(30_000, signal);
        continue;
      }
      if (res.status >= 300 && res.status < 400) {
        const location = res.headers.location;
        if (!location) throw new TinkerError(`the archive answer for ${tinkerPath} is a redirect without a Location`);
        const exp = Date.parse(res.headers.expires ?? '');
        return { url: location, expires: new Date(Number.isNaN(exp) ? Date.now() + 15 * 60_000 : exp) };
      }
      const body = W.ArchiveUrlResponse.parse(JSON.parse(res.body.toString('utf8')));
      const exp = Date.parse(body.expires ?? '');
      return { url: body.url, expires: new Date(Number.isNaN(exp) ? Date.now() + 15 * 60_000 : exp) };
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.heartbeat);
    clearTimeout(this.jwtRefresh);
    void this.transport.close();
  }
}
