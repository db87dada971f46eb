// The Tinker client: a ServiceClient (bootstrap handshake, optional JWT exchange, a session with
// heartbeats, REST calls) that creates TrainingClients (strict seq_id ordering, chunked protobuf
// forward_backward, optimizer steps, checkpoints) and SamplingClients (asample with the SDK's retry
// handling, compute_logprobs, a concurrency limit). It speaks tinker-protocol.md as the Python SDK
// 0.25 does, so it works against the Tinker cloud, SkyRL and the embedded engine alike.
import * as zlib from 'node:zlib';
import { ConflictError, ConnectionError, NotFoundError, PromiseExpiredError, RateLimitError, ServerError, TinkerApiError, TinkerError, TrainingSequenceError } from './errors';
import { APIFuture, CombinedFuture, PollContext, QueueStateEvent, RequestType, ResultDecoder } from './futures';
import { encodeForwardBackwardRequest } from './proto';
import type { NetworkOptions } from './proxy';
import { Sleep, Transport, realSleep, withSubmissionRetries } from './transport';
import {
  AdamParams,
  DEFAULT_ADAM,
  Datum,
  ForwardBackwardOutput,
  LossFnType,
  ModelInput,
  SampleResponse,
  SamplingParams,
  TensorData,
  modelInputLength,
} from './types';
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

type ZstdCompress = (b: Uint8Array) => Buffer;
const zstdCompress: ZstdCompress | undefined = (zlib as unknown as { zstdCompressSync?: ZstdCompress }).zstdCompressSync;

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

/** Limits how many async tasks run at once. */
class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
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

  /** A sampling client over a sampler checkpoint or a base model. */
  async createSamplingClient(source: { modelPath: string } | { baseModel: string }, signal?: AbortSignal): Promise<SamplingClient> {
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
    return new SamplingClient(this, r.sampling_session_id);
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
      out.push(...page.training_runs);
      offset += page.training_runs.length;
      if (!page.cursor || page.training_runs.length === 0 || offset >= page.cursor.total_count) return out;
    }
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

/** tinker://<run>/<weights|sampler_weights>/<name> → the run id and the two-segment checkpoint id. */
export function splitTinkerPath(p: string): { runId: string; checkpointId: string; kind: 'weights' | 'sampler_weights'; name: string } {
  if (!p.startsWith('tinker://')) throw new TinkerError(`"${p}" is not a tinker:// path`);
  const parts = p.slice('tinker://'.length).split('/');
  if (parts.length !== 3 || (parts[1] !== 'weights' && parts[1] !== 'sampler_weights') || !parts[0] || !parts[2]) {
    throw new TinkerError(`"${p}" is not of the form tinker://<run>/weights/<name> or tinker://<run>/sampler_weights/<name>`);
  }
  return { runId: parts[0], checkpointId: `${parts[1]}/${encodeURIComponent(parts[2])}`, kind: parts[1], name: parts[2] };
}

// ---------- training ----------

function estimateDatumBytes(d: Datum): number {
  let n = modelInputLength(d.model_input) * 4;
  for (const t of Object.values(d.loss_fn_inputs)) n += t.data.length * (t.dtype === 'int64' ? 8 : 4) + ((t.sparse_crow_indices?.length ?? 0) + (t.sparse_col_indices?.length ?? 0)) * 8;
  return n;
}

/** Splits datums into chunks of at most `maxLen` datums and about `maxBytes` bytes (an over-size datum is its own chunk). */
export function chunkDatums(data: Datum[], maxLen: number, maxBytes: number): Datum[][] {
  const chunks: Datum[][] = [];
  let cur: Datum[] = [];
  let bytes = 0;
  for (const d of data) {
    const b = estimateDatumBytes(d);
    if (cur.length && (cur.length >= maxLen || bytes + b > maxBytes)) {
      chunks.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(d);
    bytes += b;
  }
  if (cur.length) chunks.push(cur);
  return chunks;
}

/** Combines chunk metrics by their reduction suffix (§4.7); unknown reductions are dropped. */
export function combineMetrics(parts: Array<{ metrics: Record<string, number>; datums: number }>): Record<string, number> {
  if (parts.length === 1) return { ...parts[0]!.metrics };
  const out: Record<string, number> = {};
  const keys = new Set(parts.flatMap((p) => Object.keys(p.metrics)));
  const total = parts.reduce((a, p) => a + p.datums, 0);
  for (const key of keys) {
    if (!parts.every((p) => key in p.metrics)) continue;
    const vals = parts.map((p) => p.metrics[key]!);
    const red = key.split(':').pop();
    const mean = () => parts.reduce((a, p) => a + p.metrics[key]! * p.datums, 0) / (total || 1);
    if (red === 'sum') out[key] = vals.reduce((a, b) => a + b, 0);
    else if (red === 'mean') out[key] = mean();
    else if (red === 'min') out[key] = Math.min(...vals);
    else if (red === 'max') out[key] = Math.max(...vals);
    else if (red === 'slack') out[key] = Math.max(...vals) - mean();
    else if (red === 'unique') vals.forEach((v, i) => (out[i === 0 ? key : `${key}_${i + 1}`] = v));
  }
  return out;
}

export class TrainingClient {
  private requestCounter = 0;
  /** submissions of this model happen one after another, in seq_id order */
  private submitChain: Promise<unknown> = Promise.resolve();
  /** set when a submission failed for good: its seq_id is missing on the server */
  private broken: TrainingSequenceError | undefined;

  constructor(
    readonly service: ServiceClient,
    readonly modelId: string,
    readonly baseModel: string,
  ) {}

  private nextSeqId(): number {
    return ++this.requestCounter;
  }

  /**
   * Runs `submit` after every earlier submission of this model has returned. Once a submission has
   * failed for good (retries exhausted, cancelled), its seq_id is a gap the server waits on forever,
   * so later submissions fail at once with a TrainingSequenceError instead of hanging.
   */
  private ordered<T>(submit: () => Promise<T>): Promise<T> {
    const guarded = async (): Promise<T> => {
      if (this.broken) throw this.broken;
      const firstSeq = this.requestCounter + 1;
      try {
        return await submit();
      } catch (err) {
        if (this.requestCounter >= firstSeq) this.broken = new TrainingSequenceError(this.modelId, firstSeq, (err as Error).message);
        throw err;
      }
    };
    const run = this.submitChain.then(guarded, guarded);
    this.submitChain = run.catch(() => undefined);
    return run;
  }

  private async submitJson(path: string, body: Record<string, unknown>, signal?: AbortSignal, httpRetry = true): Promise<{ id: string; seconds: number }> {
    const t0 = Date.now();
    const h = await this.service.submissionRetries(
      () => this.service.transport.json(W.FutureHandle, { method: 'POST', path, json: body, signal, retry: httpRetry }),
      signal,
    );
    return { id: h.request_id, seconds: (Date.now() - t0) / 1000 };
  }

  private async submitForwardBackwardChunk(chunk: Datum[], seqId: number, lossFn: LossFnType, config: Record<string, number> | undefined, forwardOnly: boolean, signal?: AbortSignal): Promise<APIFuture<ForwardBackwardOutput>> {
    const s = this.service;
    const t0 = Date.now();
    let handle: W.FutureHandle;
    if (s.opts.forwardBackwardFormat === 'json') {
      const input = { data: chunk.map(jsonDatum), loss_fn: lossFn, ...(config ? { loss_fn_config: config } : {}) };
      const path = forwardOnly ? '/api/v1/forward' : '/api/v1/forward_backward';
      const body = forwardOnly ? { forward_input: input, model_id: this.modelId, seq_id: seqId } : { forward_backward_input: input, model_id: this.modelId, seq_id: seqId };
      handle = await s.submissionRetries(() => s.transport.json(W.FutureHandle, { method: 'POST', path, json: body, signal }), signal);
    } else {
      let bytes: Uint8Array = encodeForwardBackwardRequest({ model_id: this.modelId, seq_id: seqId, data: chunk, loss_fn: lossFn, loss_fn_config: config ?? null, forward_only: forwardOnly });
      const headers: Record<string, string> = {};
      if (s.config.proto_compress_fwdbwd && zstdCompress) {
        bytes = zstdCompress(bytes);
        headers['content-encoding'] = 'zstd';
      }
      handle = await s.submissionRetries(
        () => s.transport.json(W.FutureHandle, { method: 'POST', path: '/api/v1/forward_backward', body: bytes, contentType: 'application/x-protobuf', headers, signal }),
        signal,
      );
    }
    return s.future(handle.request_id, forwardOnly ? 'Forward' : 'ForwardBackward', { kind: 'forward_backward', map: (o) => o }, (Date.now() - t0) / 1000);
  }

  private async forwardImpl(data: Datum[], lossFn: LossFnType, config: Record<string, number> | undefined, forwardOnly: boolean, signal?: AbortSignal) {
    if (data.length === 0) throw new TinkerError('forward_backward needs at least one datum');
    const cfg = this.service.config;
    const chunks = chunkDatums(data, cfg.fwdbwd_max_chunk_len, cfg.fwdbwd_max_chunk_bytes_count);
    const futures = await this.ordered(async () => {
      const seqIds = chunks.map(() => this.nextSeqId());
      const submit = (i: number) => this.submitForwardBackwardChunk(chunks[i]!, seqIds[i]!, lossFn, config, forwardOnly, signal);
      if (chunks.length === 1 || !cfg.parallel_fwdbwd_chunks) {
        const out: APIFuture<ForwardBackwardOutput>[] = [];
        for (let i = 0; i < chunks.length; i++) out.push(await submit(i));
        return out;
      }
      // later chunks concurrently, the first one last (the server waits for it: seq_id order)
      const rest = await Promise.all(chunks.slice(1).map((_, j) => submit(j + 1)));
      return [await submit(0), ...rest];
    });
    return new CombinedFuture<ForwardBackwardOutput>(futures, (results) => {
      const outs = results as ForwardBackwardOutput[];
      return {
        loss_fn_output_type: outs[0]?.loss_fn_output_type ?? 'ArrayRecord',
        loss_fn_outputs: outs.flatMap((o) => o.loss_fn_outputs),
        metrics: combineMetrics(outs.map((o, i) => ({ metrics: o.metrics, datums: chunks[i]!.length }))),
      };
    });
  }

  /** Submits forward+backward (gradients accumulate until optimStep); resolves once submitted. */
  forwardBackward(data: Datum[], lossFn: LossFnType, config?: Record<string, number>, signal?: AbortSignal) {
    return this.forwardImpl(data, lossFn, config, false, signal);
  }

  /** Submits a forward pass only (no gradients). */
  forward(data: Datum[], lossFn: LossFnType, config?: Record<string, number>, signal?: AbortSignal) {
    return this.forwardImpl(data, lossFn, config, true, signal);
  }

  optimStep(adam: Partial<AdamParams> = {}, signal?: AbortSignal): Promise<APIFuture<z.output<typeof W.OptimStepResult>>> {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson('/api/v1/optim_step', { adam_params: { ...DEFAULT_ADAM, ...adam }, model_id: this.modelId, seq_id: seq, type: 'optim_step' }, signal);
      return this.service.future(h.id, 'OptimStep', { kind: 'json', schema: W.OptimStepResult }, h.seconds);
    });
  }

  /** Saves weights and optimizer state as tinker://<run>/weights/<name>. */
  saveState(name: string, o: { ttlSeconds?: number; overwrite?: boolean } = {}, signal?: AbortSignal) {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson(
        '/api/v1/save_weights',
        { model_id: this.modelId, path: name, seq_id: seq, ...(o.ttlSeconds ? { ttl_seconds: o.ttlSeconds } : {}), overwrite: o.overwrite ?? false, type: 'save_weights' },
        signal,
        false,
      );
      return this.service.future(h.id, 'SaveWeights', { kind: 'json', schema: W.SaveWeightsResult }, h.seconds);
    });
  }

  /** Saves sampler weights as tinker://<run>/sampler_weights/<name>. */
  saveWeightsForSampler(name: string, o: { ttlSeconds?: number } = {}, signal?: AbortSignal) {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson(
        '/api/v1/save_weights_for_sampler',
        { model_id: this.modelId, path: name, seq_id: seq, ...(o.ttlSeconds ? { ttl_seconds: o.ttlSeconds } : {}), type: 'save_weights_for_sampler' },
        signal,
        false,
      );
      return this.service.future(h.id, 'SaveWeightsForSampler', { kind: 'json', schema: W.SaveWeightsForSamplerResult }, h.seconds);
    });
  }

  /** An ephemeral snapshot of the current weights, ready to sample from (not persisted). */
  async saveWeightsAndGetSamplingClient(signal?: AbortSignal): Promise<SamplingClient> {
    const fut = await this.ordered(async () => {
      const seq = this.nextSeqId();
      const samplingSeq = this.service.nextSamplingSeq();
      const h = await this.submitJson(
        '/api/v1/save_weights_for_sampler',
        { model_id: this.modelId, seq_id: seq, sampling_session_seq_id: samplingSeq, type: 'save_weights_for_sampler' },
        signal,
        false,
      );
      return this.service.future(h.id, 'SaveWeightsForSampler', { kind: 'json', schema: W.SaveWeightsForSamplerResult }, h.seconds);
    });
    const r = await fut.result(signal);
    if (r.sampling_session_id) return new SamplingClient(this.service, r.sampling_session_id);
    if (r.path) return this.service.createSamplingClient({ modelPath: r.path }, signal);
    throw new TinkerError('save_weights_for_sampler returned neither a sampler id nor a path');
  }

  /** Loads a training-state checkpoint; must be the model's first request. */
  loadState(path: string, withOptimizer: boolean, signal?: AbortSignal) {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson('/api/v1/load_weights', { model_id: this.modelId, seq_id: seq, path, optimizer: withOptimizer, type: 'load_weights' }, signal);
      return this.service.future(h.id, 'LoadWeights', { kind: 'json', schema: W.LoadWeightsResult }, h.seconds);
    });
  }

  async getInfo(signal?: AbortSignal): Promise<W.GetInfoResponse> {
    return this.service.submissionRetries(
      () => this.service.transport.json(W.GetInfoResponse, { method: 'POST', path: '/api/v1/get_info', json: { model_id: this.modelId, type: 'get_info' }, signal }),
      signal,
    );
  }

  async unload(signal?: AbortSignal): Promise<void> {
    const h = await this.service.transport.json(W.FutureHandle, { method: 'POST', path: '/api/v1/unload_model', json: { model_id: this.modelId, type: 'unload_model' }, signal });
    await this.service.future(h.request_id, 'UnloadModel', { kind: 'json', schema: W.UnloadModelResult }).result(signal);
  }
}

function jsonTensor(t: TensorData) {
  return { ...t, data: Array.from(t.data) };
}

function jsonDatum(d: Datum) {
  return {
    model_input: { chunks: d.model_input.chunks.map((c) => (c.type === 'encoded_text' ? { type: c.type, tokens: Array.from(c.tokens) } : c)) },
    loss_fn_inputs: Object.fromEntries(Object.entries(d.loss_fn_inputs).map(([k, t]) => [k, jsonTensor(t)])),
  };
}

// ---------- sampling ----------

export interface SampleOptions {
  numSamples?: number;
  promptLogprobs?: boolean;
  topkPromptLogprobs?: number;
  signal?: AbortSignal;
}

export class SamplingClient {
  private seq = 0;
  private readonly limit: Semaphore;
  private backoffUntil = 0;

  constructor(
    readonly service: ServiceClient,
    readonly samplerId: string,
    maxConcurrent?: number,
  ) {
    this.limit = new Semaphore(maxConcurrent ?? service.config.sample_max_concurrent_requests);
  }

  /**
   * Samples from the prompt. Retries like the SDK's sampling handler: 429 backpressure waits and
   * resubmits with the same seq_id; an expired promise (410), timeouts, connection errors and
   * 408/409/5xx resubmit with a new seq_id after min(0.5·2^n, 10) s ± 25 %.
   */
  sample(prompt: ModelInput, params: SamplingParams, o: SampleOptions = {}): Promise<SampleResponse> {
    return this.limit.run(async () => {
      const s = this.service;
      const noRetries = s.config.sample_no_retries;
      for (let attempt = 0; ; attempt++) {
        const seqId = this.seq++;
        try {
          const fut = await this.submit(prompt, params, o, seqId);
          return await fut.result(o.signal);
        } catch (err) {
          const e = err as Error;
          const retryable =
            e instanceof PromiseExpiredError || e instanceof ConnectionError || (e instanceof TinkerApiError && (e.status === 408 || e instanceof ConflictError || e instanceof ServerError));
          if (noRetries || !retryable) throw e;
          const base = Math.min(0.5 * 2 ** attempt, 10);
          const jitter = base * 0.25 * (2 * (s.opts.random ?? Math.random)() - 1);
          await s.sleep(Math.max(0, Math.min(10, base + jitter)) * 1000, o.signal);
        }
      }
    });
  }

  private async submit(prompt: ModelInput, params: SamplingParams, o: SampleOptions, seqId: number): Promise<APIFuture<SampleResponse>> {
    const s = this.service;
    const body = {
      num_samples: o.numSamples ?? 1,
      prompt: { chunks: prompt.chunks.map((c) => (c.type === 'encoded_text' ? { type: c.type, tokens: Array.from(c.tokens) } : c)) },
      sampling_params: params,
      sampling_session_id: this.samplerId,
      seq_id: seqId,
      prompt_logprobs: o.promptLogprobs ?? false,
      topk_prompt_logprobs: o.topkPromptLogprobs ?? 0,
      type: 'sample',
    };
    for (;;) {
      const wait = this.backoffUntil - Date.now();
      if (wait > 0) await s.sleep(wait, o.signal);
      const t0 = Date.now();
      try {
        const h = await s.transport.json(W.FutureHandle, {
          method: 'POST',
          path: '/api/v1/asample',
          json: body,
          headers: { 'x-tinker-sampling-backpressure': '1' },
          retry: false,
          signal: o.signal,
        });
        return s.future(h.request_id, 'Sample', { kind: 'sample', map: (r) => r }, (Date.now() - t0) / 1000);
      } catch (err) {
        if (err instanceof RateLimitError) {
          // backpressure: slow down, then resubmit the same request (same seq_id)
          const bytes = modelInputLength(prompt) * 10;
          this.backoffUntil = Date.now() + (bytes <= 128 * 1024 ? 1000 : 5000);
          continue;
        }
        throw err;
      }
    }
  }

  /** Log-probabilities of each prompt token under the sampler's weights (null for the first). */
  async computeLogprobs(prompt: ModelInput, signal?: AbortSignal): Promise<Array<number | null>> {
    const r = await this.sample(prompt, { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 }, { promptLogprobs: true, signal });
    if (!r.prompt_logprobs) throw new TinkerError('the server did not return prompt log-probabilities');
    return r.prompt_logprobs;
  }
}
