// HTTP for the Tinker client: URL joining, the SDK's headers, the HTTP-layer retry policy (protocol
// §6.6 A) with one idempotency key per logical call, timeouts, cancellation, and redaction of the
// credential from anything that becomes an error message. Sleep and randomness are injectable so the
// policies can be tested without waiting.
import { randomUUID } from 'node:crypto';
import { Dispatcher, request } from 'undici';
import * as z from 'zod';
import { CancelledError, ConnectionError, ResponseShapeError, TinkerApiError, errorForStatus } from './errors';
import { NetworkOptions, Route, createDispatcher, proxySecrets, viaProxy } from './proxy';
import { describeZodError } from './wire';
import { errorMessage } from '../errors';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface TransportOptions {
  baseUrl: string;
  /** returns the credential for X-API-Key (API key or JWT); may change over time (JWT refresh) */
  credential: () => string | Promise<string>;
  userAgent: string;
  sleep?: Sleep;
  random?: () => number;
  /** HTTP-layer retries (SDK: 10) */
  maxRetries?: number;
  /** default per-request timeout (SDK: 60 s) */
  timeoutMs?: number;
  /** extra headers on every request (e.g. Cloudflare Access) */
  headers?: Record<string, string>;
  dispatcher?: Dispatcher;
  /** proxy, certificate and NO_PROXY settings (ignored when `dispatcher` is given) */
  network?: NetworkOptions;
  /** secrets to scrub from error text */
  secrets?: () => string[];
}

export interface CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** endpoint path starting with /api/v1/ */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** false: no HTTP-layer retries (retrieve_future, asample, save weights, heartbeats) */
  retry?: boolean;
  /** false: a 409 answer is final rather than a transient conflict to retry */
  retryConflicts?: boolean;
  signal?: AbortSignal;
  /** do not follow redirects (archive URLs) and return 3xx as a result */
  acceptRedirect?: boolean;
  /** return every HTTP answer, whatever its status (retrieve_future handles each status itself) */
  acceptAnyStatus?: boolean;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const RETRYABLE_STATUS = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;

export class Transport {
  private readonly sleep: Sleep;
  private readonly random: () => number;
  readonly baseUrl: string;
  private readonly dispatcher: Dispatcher;
  /** how requests reach the server: directly or through which proxy */
  readonly route: Route | undefined;
  private readonly routeSecrets: string[];

  constructor(private readonly opts: TransportOptions) {
    this.sleep = opts.sleep ?? realSleep;
    this.random = opts.random ?? Math.random;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '') + '/';
    if (opts.dispatcher) {
      this.dispatcher = opts.dispatcher;
      this.routeSecrets = [];
    } else {
      const made = createDispatcher(this.baseUrl, opts.network);
      this.dispatcher = made.dispatcher;
      this.route = made.route;
      this.routeSecrets = proxySecrets(made.route);
    }
  }

  url(path: string, query?: CallOptions['query']): string {
    const u = new URL(path.replace(/^\/+/, ''), this.baseUrl);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.opts.secrets?.() ?? []) if (s && s.length >= 8) out = out.split(s).join('«redacted»');
    // a proxy password may be shorter than a key
    for (const s of this.routeSecrets) if (s.length >= 4) out = out.split(s).join('«redacted»');
    return out;
  }

  /** One logical call: HTTP-layer retries (unless disabled) with a stable idempotency key. */
  async call(o: CallOptions): Promise<HttpResult> {
    const maxRetries = o.retry === false ? 0 : (this.opts.maxRetries ?? 10);
    const idempotencyKey = o.method !== 'GET' ? `tinker-studio-retry-${randomUUID()}` : undefined;
    for (let attempt = 0; ; attempt++) {
      if (o.signal?.aborted) throw new CancelledError(`${o.method} ${o.path}`);
      let res: HttpResult | undefined;
      let failure: Error | undefined;
      try {
        res = await this.once(o, attempt, idempotencyKey);
      } catch (err) {
        if (err instanceof CancelledError) throw err;
        failure = err as Error;
      }
      if (res && (res.status < 300 || (o.acceptRedirect && res.status < 400) || o.acceptAnyStatus)) return res;
      const status = res?.status;
      const shouldRetryHeader = res?.headers['x-should-retry'];
      const retryable =
        shouldRetryHeader === 'true' ||
        (shouldRetryHeader !== 'false' &&
          (failure !== undefined ||
            (status !== undefined && ((RETRYABLE_STATUS(status) && !(status === 409 && o.retryConflicts === false)) || isProxyEmpty400(res!)))));
      if (!retryable || attempt >= maxRetries) {
        if (failure) throw failure;
        throw errorForStatus(status!, `${o.method} ${o.path}`, this.redact(res!.body.toString('utf8')));
      }
      await this.sleep(this.retryDelayMs(attempt, res), o.signal);
    }
  }

  /** SDK HTTP-layer delay: Retry-After if 0 < d ≤ 60 s, else min(0.5·2^k, 10) s minus up to 25 % jitter. */
  retryDelayMs(retriesTaken: number, res?: HttpResult): number {
    const ms = res ? retryAfterMs(res.headers) : undefined;
    if (ms !== undefined && ms > 0 && ms <= 60_000) return ms;
    const base = Math.min(0.5 * 2 ** retriesTaken, 10);
    return base * (1 - 0.25 * this.random()) * 1000;
  }

  private async once(o: CallOptions, attempt: number, idempotencyKey: string | undefined): Promise<HttpResult> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.opts.userAgent,
      'x-stainless-retry-count': String(attempt),
      ...(this.opts.headers ?? {}),
      ...(o.headers ?? {}),
    };
    const timeoutMs = o.timeoutMs ?? this.opts.timeoutMs ?? 60_000;
    headers['x-stainless-read-timeout'] = String(Math.round(timeoutMs / 1000));
    // a call that names its own credential (the JWT exchange sends the API key) keeps it
    if (headers['x-api-key'] === undefined) {
      const credential = await this.opts.credential();
      if (credential) headers['x-api-key'] = credential;
    }
    if (idempotencyKey) headers['x-idempotency-key'] = idempotencyKey;
    let body: string | Uint8Array | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] = 'application/json';
    } else if (o.body) {
      body = o.body;
      headers['content-type'] = o.contentType ?? 'application/octet-stream';
    }
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Error('timeout')), timeoutMs);
    const onAbort = () => ac.abort(new CancelledError());
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const endpoint = `${o.method} ${o.path}`;
    try {
      const r = await request(this.url(o.path, o.query), {
        method: o.method,
        headers,
        body,
        signal: ac.signal,
        dispatcher: this.dispatcher,
      });
      const buf = Buffer.from(await r.body.arrayBuffer());
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) h[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      return { status: r.statusCode, headers: h, body: buf };
    } catch (err) {
      if (o.signal?.aborted) throw new CancelledError(endpoint);
      const timedOut = ac.signal.aborted;
      const msg = timedOut ? `no answer within ${timeoutMs / 1000} s` : errorMessage(err);
      throw new ConnectionError(`${endpoint}: ${this.redact(msg)} (${this.baseUrl}${this.route ? viaProxy(this.route) : ''})`, endpoint, err);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A JSON call parsed with `schema`; a mismatch names the endpoint and the field. */
  async json<T extends z.ZodType>(schema: T, o: CallOptions): Promise<z.output<T>> {
    const res = await this.call(o);
    return parseJsonBody(schema, res.body, `${o.method} ${o.path}`);
  }

  close(): Promise<void> {
    return this.opts.dispatcher ? Promise.resolve() : this.dispatcher.close();
  }
}

export function parseJsonBody<T extends z.ZodType>(schema: T, body: Buffer, endpoint: string): z.output<T> {
  let value: unknown;
  try {
    value = body.length ? JSON.parse(body.toString('utf8')) : {};
  } catch {
    throw new ResponseShapeError(`${endpoint}: the answer is not JSON: ${body.toString('utf8').slice(0, 200)}`);
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new ResponseShapeError(`${endpoint}: unexpected answer: ${describeZodError(r.error)}`);
  return r.data;
}

function isProxyEmpty400(res: HttpResult): boolean {
  return res.status === 400 && res.body.length === 0 && (res.headers['content-length'] ?? '0') === '0';
}

function retryAfterMs(h: Record<string, string>): number | undefined {
  const ms = h['retry-after-ms'];
  if (ms !== undefined && Number.isFinite(Number(ms))) return Number(ms);
  const ra = h['retry-after'];
  if (ra === undefined) return undefined;
  if (Number.isFinite(Number(ra))) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : date - Date.now();
}

/**
 * The SDK's submission layer (§6.6 B): retries timeouts, connection errors and HTTP 408/409/429/5xx
 * with delays min(2^attempt, 30) s until 300 s have passed since the first attempt; 402 pauses 5 s at
 * a time within the billing window.
 */
export async function withSubmissionRetries<T>(
  fn: () => Promise<T>,
  o: {
    sleep: Sleep;
    signal?: AbortSignal;
    now?: () => number;
    budgetMs?: number;
    billingPauseMs?: number;
    onRetry?: (err: Error, delayMs: number) => void;
    /** false: a 409 is final (publish/unpublish, where it means "already public/private") */
    retryConflicts?: boolean;
  },
): Promise<T> {
  const now = o.now ?? Date.now;
  const start = now();
  const budget = o.budgetMs ?? 300_000;
  const billingBudget = o.billingPauseMs ?? 3_600_000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof CancelledError) throw err;
      const e = err as Error;
      if (e instanceof TinkerApiError && e.status === 402 && now() - start < billingBudget) {
        o.onRetry?.(e, 5000);
        await o.sleep(5000, o.signal);
        attempt--;
        continue;
      }
      const retryable =
        e instanceof ConnectionError || (e instanceof TinkerApiError && RETRYABLE_STATUS(e.status) && !(e.status === 409 && o.retryConflicts === false));
      const delay = Math.min(2 ** attempt, 30) * 1000;
      if (!retryable || now() - start + delay > budget) throw e;
      o.onRetry?.(e, delay);
      await o.sleep(delay, o.signal);
    }
  }
}
