// A fault-injecting HTTP proxy on 127.0.0.1 for the Tinker client's fault tests: a real proxy in
// front of a real engine that, per request, forwards it or answers with a scripted fault — an HTTP
// status (500, 502, 429 with Retry-After, 408, 410 …) instead of or after forwarding, a dropped
// connection before or after forwarding (the engine applied the request, the client never saw the
// answer), or a delayed answer. It can also play a stand-in of the Tinker cloud's auth (the engine
// issues no JWTs): client/config then enables the JWT exchange, /auth/token mints short-lived JWTs
// for the API key, and every other request must carry a valid, unexpired JWT (protocol §1.2).
import { createHmac, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { decodeForwardBackwardRequest } from '../../../src/core/tinker/proto';

const JsonObject = z.record(z.string(), z.unknown());
const Claims = z.object({ exp: z.number() });

export type Fault =
  /** answer `status` without forwarding, or (afterForward) after the engine handled the request */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string; afterForward?: boolean }
  /** close the client's connection without an answer; `then` runs after the drop (e.g. restart the engine) */
  | { kind: 'drop'; afterForward: boolean; then?: () => Promise<void> }
  /** forward, then hold the engine's answer this long before passing it on */
  | { kind: 'delay'; ms: number }
  /** forward, then withhold the engine's answer until the client gives up and closes the connection */
  | { kind: 'hold' };

/** What a rule or a picker sees of a request. */
export interface ProxiedRequest {
  method: string;
  /** path without the query, e.g. /api/v1/optim_step */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** the JSON body, when it is JSON */
  json: Record<string, unknown> | undefined;
  /** seq_id and model_id of training requests (JSON or protobuf forward_backward) */
  seqId: number | undefined;
  modelId: string | undefined;
  /** request_id of retrieve_future polls */
  requestId: string | undefined;
}

/** One request as the proxy saw it, with what it did about it. */
export interface SeenRequest {
  n: number;
  method: string;
  path: string;
  seqId: number | undefined;
  modelId: string | undefined;
  requestId: string | undefined;
  idempotencyKey: string | undefined;
  credential: string | undefined;
  /** e.g. "status 502 after forward", "drop before forward", "delay 300 ms", "auth 401" */
  fault: string | undefined;
  /** the status the client got (undefined when the connection was dropped) */
  status: number | undefined;
}

export interface FaultRule {
  match: (r: ProxiedRequest) => boolean;
  fault: Fault;
  /** how many matching requests get the fault (default 1) */
  times?: number;
}

export interface AuthStandInOptions {
  apiKey: string;
  /** lifetime of a minted JWT in seconds */
  ttlSeconds: number;
  /** the stand-in's clock (ms since the epoch), shared with the client under test */
  now: () => number;
}

/** Stand-in of the Tinker cloud's auth: mints and checks HMAC-signed JWTs for one API key. */
export class CloudAuthStandIn {
  private readonly secret = randomBytes(16);
  private serial = 0;
  /** every exchange, with the credential the client presented */
  readonly exchanges: Array<{ at: number; presented: string | undefined; jwt?: string }> = [];
  /** requests refused with 401 and why */
  readonly refusals: Array<{ path: string; reason: string }> = [];

  constructor(readonly opts: AuthStandInOptions) {}

  mint(): string {
    const iat = Math.floor(this.opts.now() / 1000);
    const header = b64({ alg: 'HS256', typ: 'JWT' });
    const payload = b64({ sub: 'user:auth-stand-in', iss: 'tinker-auth-stand-in', iat, exp: iat + this.opts.ttlSeconds, jti: ++this.serial });
    return `${header}.${payload}.${this.sign(`${header}.${payload}`)}`;
  }

  /** undefined when `token` is a JWT this stand-in minted and it has not expired; else the reason. */
  check(token: string | undefined): string | undefined {
    if (!token) return 'no X-API-Key';
    const [h, p, sig] = token.split('.');
    if (!h || !p || !sig) return 'not a JWT';
    if (this.sign(`${h}.${p}`) !== sig) return 'bad signature';
    const claims = Claims.parse(JSON.parse(Buffer.from(p, 'base64url').toString('utf8')));
    if (claims.exp * 1000 <= this.opts.now()) return 'expired';
    return undefined;
  }

  private sign(data: string): string {
    return createHmac('sha256', this.secret).update(data).digest('base64url');
  }
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

export interface FaultProxyOptions {
  /** the engine's base URL; may be changed later (e.g. after a restart on another port) */
  upstream: string;
  auth?: CloudAuthStandIn;
}

export class FaultProxy extends EventEmitter {
  upstream: string;
  readonly seen: SeenRequest[] = [];
  private readonly rules: Array<FaultRule & { left: number }> = [];
  /** consulted when no rule matches (random faults); undefined = forward untouched */
  picker: ((r: ProxiedRequest) => Fault | undefined) | undefined;
  private server!: http.Server;
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly sockets = new Set<import('node:net').Socket>();
  url = '';

  private constructor(private readonly opts: FaultProxyOptions) {
    super();
    this.upstream = opts.upstream;
  }

  static async start(opts: FaultProxyOptions): Promise<FaultProxy> {
    const p = new FaultProxy(opts);
    p.server = http.createServer((req, res) => void p.handle(req, res));
    p.server.on('connection', (s) => {
      p.sockets.add(s);
      s.on('close', () => p.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      p.server.once('error', reject);
      p.server.listen(0, '127.0.0.1', () => resolve());
    });
    p.url = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
    return p;
  }

  /** Adds a scripted fault for the next `times` requests that match. */
  inject(rule: FaultRule): void {
    this.rules.push({ ...rule, left: rule.times ?? 1 });
  }

  /** Scripted faults not yet used up (a test can assert they all fired). */
  pendingRules(): number {
    return this.rules.filter((r) => r.left > 0).length;
  }

  /** Resolves when a request satisfying `pred` has been seen (or was already). */
  waitFor(pred: (s: SeenRequest) => boolean, timeoutMs = 60_000): Promise<SeenRequest> {
    const hit = this.seen.find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('seen', on);
        reject(new Error(`the proxy did not see the expected request within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const on = (s: SeenRequest) => {
        if (!pred(s)) return;
        clearTimeout(timer);
        this.off('seen', on);
        resolve(s);
      };
      this.on('seen', on);
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readAll(req);
    const url = new URL(req.url ?? '/', 'http://proxy');
    const pr = describe(req, url.pathname, body);
    const entry: SeenRequest = {
      n: this.seen.length + 1,
      method: pr.method,
      path: pr.path,
      seqId: pr.seqId,
      modelId: pr.modelId,
      requestId: pr.requestId,
      idempotencyKey: header(req, 'x-idempotency-key'),
      credential: header(req, 'x-api-key'),
      fault: undefined,
      status: undefined,
    };
    this.seen.push(entry);
    try {
      await this.serve(req, res, pr, url, entry);
    } catch {
      res.destroy();
    } finally {
      this.emit('seen', entry);
    }
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse, pr: ProxiedRequest, url: URL, entry: SeenRequest): Promise<void> {
    // network-level faults come first: they hit a request before the auth service or the engine sees it
    const fault = this.takeRule(pr) ?? this.picker?.(pr);
    if (fault?.kind === 'status' && !fault.afterForward) {
      entry.fault = `status ${fault.status}`;
      return this.answer(res, entry, fault.status, { 'content-type': 'application/json', ...(fault.headers ?? {}) }, Buffer.from(fault.body ?? JSON.stringify({ detail: `fault proxy: ${fault.status}` })));
    }
    if (fault?.kind === 'drop' && !fault.afterForward) {
      entry.fault = 'drop before forward';
      res.destroy();
      await fault.then?.();
      return;
    }
    let up: { status: number; headers: Record<string, string>; body: Buffer };
    const auth = this.opts.auth;
    const credential = entry.credential;
    if (auth && pr.path === '/api/v1/auth/token') {
      // stand-in of the cloud's auth: the exchange takes the API key and mints a JWT
      if (credential !== auth.opts.apiKey) return this.refuse(res, entry, pr.path, 'the exchange needs the API key', `invalid API key "${credential}"`);
      const jwt = auth.mint();
      auth.exchanges.push({ at: auth.opts.now(), presented: credential, jwt });
      up = { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ jwt })) };
    } else {
      // the config handshake takes the API key, everything else a valid JWT; a refusal echoes what
      // was presented (as a careless server might: the client must redact it)
      if (auth && pr.path === '/api/v1/client/config' && credential !== auth.opts.apiKey) {
        return this.refuse(res, entry, pr.path, 'config needs the API key', `invalid API key "${credential}"`);
      }
      const why = auth && pr.path !== '/api/v1/client/config' ? auth.check(credential) : undefined;
      if (why) return this.refuse(res, entry, pr.path, why, `Invalid JWT (${why}): "${credential}"`);
      try {
        up = await this.forward(req, url, pr.body);
      } catch {
        // the engine is down (e.g. restarting): the client sees a dropped connection
        entry.fault = entry.fault ?? 'engine unreachable';
        res.destroy();
        return;
      }
      if (auth && pr.path === '/api/v1/client/config' && up.status === 200) {
        const cfg = JsonObject.parse(JSON.parse(up.body.toString('utf8')));
        up.body = Buffer.from(JSON.stringify({ ...cfg, pjwt_auth_enabled: true }));
      }
    }
    if (fault?.kind === 'drop') {
      entry.fault = 'drop after forward';
      res.destroy();
      await fault.then?.();
      return;
    }
    if (fault?.kind === 'status') {
      entry.fault = `status ${fault.status} after forward`;
      return this.answer(res, entry, fault.status, { 'content-type': 'application/json', ...(fault.headers ?? {}) }, Buffer.from(fault.body ?? JSON.stringify({ detail: `fault proxy: ${fault.status}` })));
    }
    if (fault?.kind === 'delay') {
      entry.fault = `delay ${fault.ms} ms`;
      await new Promise((r) => setTimeout(r, fault.ms));
    }
    if (fault?.kind === 'hold') {
      entry.fault = 'held until the client gave up';
      if (!res.destroyed) await new Promise((r) => res.once('close', r));
      return;
    }
    this.answer(res, entry, up.status, up.headers, up.body);
  }

  private takeRule(pr: ProxiedRequest): Fault | undefined {
    const rule = this.rules.find((r) => r.left > 0 && r.match(pr));
    if (!rule) return undefined;
    rule.left--;
    return rule.fault;
  }

  private refuse(res: http.ServerResponse, entry: SeenRequest, path: string, reason: string, detail: string): void {
    this.opts.auth?.refusals.push({ path, reason });
    entry.fault = `auth 401 (${reason})`;
    this.answer(res, entry, 401, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ detail })));
  }

  private answer(res: http.ServerResponse, entry: SeenRequest, status: number, headers: Record<string, string>, body: Buffer): void {
    entry.status = status;
    if (res.destroyed) return;
    res.writeHead(status, { ...headers, 'content-length': String(body.length) });
    res.end(body);
  }

  private forward(req: http.IncomingMessage, url: URL, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    const target = new URL(url.pathname + url.search, this.upstream);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || HOP_BY_HOP.has(k)) continue;
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    headers['content-length'] = String(body.length);
    return new Promise((resolve, reject) => {
      const up = http.request(target, { method: req.method, headers, agent: this.agent }, (r) => {
        readAll(r).then((b) => {
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) h[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve({ status: r.statusCode ?? 502, headers: h, body: b });
        }, reject);
      });
      up.on('error', reject);
      up.end(body);
    });
  }
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade', 'proxy-connection']);

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
  });
}

function describe(req: http.IncomingMessage, path: string, body: Buffer): ProxiedRequest {
  let json: Record<string, unknown> | undefined;
  let seqId: number | undefined;
  let modelId: string | undefined;
  const ctype = header(req, 'content-type') ?? '';
  if (ctype.includes('application/json') && body.length) {
    try {
      const v = JsonObject.safeParse(JSON.parse(body.toString('utf8')));
      if (v.success) json = v.data;
    } catch {
      /* not JSON after all: forwarded as is */
    }
  } else if (ctype.includes('application/x-protobuf') && path.endsWith('/forward_backward') && !header(req, 'content-encoding')) {
    const fb = decodeForwardBackwardRequest(body);
    seqId = fb.seq_id;
    modelId = fb.model_id;
  }
  if (json) {
    if (typeof json.seq_id === 'number') seqId = json.seq_id;
    if (typeof json.model_id === 'string') modelId = json.model_id;
  }
  const requestId = path.endsWith('/retrieve_future') && typeof json?.request_id === 'string' ? json.request_id : undefined;
  return { method: req.method ?? 'GET', path, headers: req.headers, body, json, seqId, modelId, requestId };
}
