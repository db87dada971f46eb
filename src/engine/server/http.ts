// A small router over node:http for the engine: exact and parameterised paths, bodies read with a
// size limit, JSON answers, and errors as FastAPI-style {"detail": ...} bodies like SkyRL's server.
import * as http from 'node:http';
import * as zlib from 'node:zlib';
import * as z from 'zod';
import { describeZodError } from '../../core/tinker/wire';
import { errorMessage } from '../../core/errors';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface Request {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type Reply =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { status?: number; bytes: Uint8Array; contentType: string; headers?: Record<string, string> }
  | { status: number; empty: true; headers?: Record<string, string> }
  /** server-sent events: each value a `data: <json>` event, then `data: [DONE]` (the OpenAI stream format) */
  | { status?: number; events: AsyncIterable<unknown>; headers?: Record<string, string> };

/** The OpenAI-compatible routes: under /v1/ (the engine's own) and /oai/api/v1/ (the cloud's layout). */
export function isOpenAiPath(p: string): boolean {
  return p.startsWith('/v1/') || p.startsWith('/oai/api/v1/');
}

/** An error of the OpenAI-compatible routes, with the OpenAI body's type, param and code. */
export class OpenAiError extends HttpError {
  constructor(
    status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(status, message);
  }
}

type Handler = (req: Request) => Promise<Reply> | Reply;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

/** The largest request body, and the largest a zstd body may decompress to (64 MiB). */
export const MAX_BODY = 64 << 20;

export class Router {
  private readonly routes: Route[] = [];

  /** `guard` runs before a body is read (given the request's path) and throws an HttpError to refuse the request. */
  constructor(private readonly guard: (req: http.IncomingMessage, path: string) => void = () => undefined) {}

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  private match(method: string, path: string): { route: Route; params: Record<string, string> } | 'method' | undefined {
    const segs = path.split('/').filter(Boolean).map(decodeSegment);
    let methodMismatch = false;
    for (const route of this.routes) {
      const params: Record<string, string> = {};
      let ok = true;
      let i = 0;
      for (let j = 0; j < route.parts.length; j++) {
        const p = route.parts[j]!;
        if (p.startsWith('{') && p.endsWith('}*')) {
          // greedy parameter: the rest of the path up to the number of fixed parts that follow
          const after = route.parts.length - j - 1;
          const take = segs.length - i - after;
          if (take < 1) {
            ok = false;
            break;
          }
          params[p.slice(1, -2)] = segs.slice(i, i + take).join('/');
          i += take;
        } else if (p.startsWith('{') && p.endsWith('}')) {
          if (i >= segs.length) {
            ok = false;
            break;
          }
          params[p.slice(1, -1)] = segs[i++]!;
        } else if (segs[i++] !== p) {
          ok = false;
          break;
        }
      }
      if (!ok || i !== segs.length) continue;
      if (route.method !== method) {
        methodMismatch = true;
        continue;
      }
      return { route, params };
    }
    return methodMismatch ? 'method' : undefined;
  }

  /** Answers every request, however malformed; never rejects (a throw here would end the engine). */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let path = '/';
    let reply: Reply;
    let bodyTaken = false;
    try {
      const url = requestTarget(req.url);
      path = url.pathname;
      this.guard(req, path);
      const m = this.match(req.method ?? 'GET', path);
      if (m === undefined) throw new HttpError(404, `no such endpoint: ${req.method} ${path}`);
      if (m === 'method') throw new HttpError(405, `${req.method} is not allowed on ${path}`);
      bodyTaken = true;
      const body = await readBody(req);
      reply = await m.route.handler({
        method: req.method ?? 'GET',
        path,
        params: m.params,
        query: url.searchParams,
        headers: req.headers,
        body,
      });
    } catch (err) {
      reply = isOpenAiPath(path) ? openAiErrorReply(err) : errorReply(err);
      // refused before its body was read (no such route, a bad key): read the body first, as closing on
      // unread bytes resets the connection and the client can lose the answer
      if (!bodyTaken) await dropBody(req);
    }
    try {
      if ('events' in reply) await sendEvents(res, reply);
      else send(res, reply);
    } catch {
      // the answer cannot be written (the client went away, or a header was refused): drop the connection
      res.destroy();
    }
  }
}

/** The request's URL; a target no URL can be made of (`http://:80/`, `http://[`) is the client's error. */
function requestTarget(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://engine');
  } catch {
    throw new HttpError(400, `malformed request target ${JSON.stringify((target ?? '').slice(0, 200))}`);
  }
}

function decodeSegment(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw new HttpError(400, `malformed percent-encoding in the path segment ${JSON.stringify(seg.slice(0, 200))}`);
  }
}

/** OpenAI's error body: {"error": {"message", "type", "param", "code"}}. */
function openAiErrorReply(err: unknown): Reply {
  const status = err instanceof HttpError ? err.status : err instanceof z.ZodError ? 400 : 500;
  const message = err instanceof HttpError ? err.message : err instanceof z.ZodError ? describeZodError(err) : `internal error: ${errorMessage(err)}`;
  const fallbackType =
    status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 404 ? 'not_found_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  const e = err instanceof OpenAiError ? err : undefined;
  return {
    status: status === 422 ? 400 : status,
    json: { error: { message, type: e?.type ?? fallbackType, param: e?.param ?? null, code: e?.code ?? (status === 401 ? 'invalid_api_key' : null) } },
    headers: err instanceof HttpError ? err.headers : {},
  };
}

async function sendEvents(res: http.ServerResponse, reply: Extract<Reply, { events: AsyncIterable<unknown> }>): Promise<void> {
  res.writeHead(reply.status ?? 200, { ...(reply.headers ?? {}), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let gone = false;
  res.once('close', () => (gone = true));
  try {
    for await (const ev of reply.events) {
      if (gone) break; // the client went away: stop producing
      res.write(`data: ${JSON.stringify(ev)}\n\n`);
    }
    if (!gone) res.write('data: [DONE]\n\n');
  } catch (err) {
    // the status line is sent: the error goes in the stream, as OpenAI's servers do
    if (!gone) res.write(`data: ${JSON.stringify({ error: { message: errorMessage(err), type: 'server_error', param: null, code: null } })}\n\n`);
  }
  res.end();
}

function errorReply(err: unknown): Reply {
  if (err instanceof HttpError) return { status: err.status, json: { detail: err.message }, headers: err.headers };
  if (err instanceof z.ZodError) return { status: 422, json: { detail: describeZodError(err) } };
  return { status: 500, json: { detail: `internal error: ${errorMessage(err)}` } };
}

function send(res: http.ServerResponse, reply: Exclude<Reply, { events: AsyncIterable<unknown> }>): void {
  const headers: Record<string, string> = { ...(reply.headers ?? {}) };
  if ('json' in reply) {
    const text = JSON.stringify(reply.json);
    headers['content-type'] = 'application/json';
    res.writeHead(reply.status ?? 200, headers);
    res.end(text);
  } else if ('bytes' in reply) {
    headers['content-type'] = reply.contentType;
    res.writeHead(reply.status ?? 200, headers);
    res.end(reply.bytes);
  } else {
    res.writeHead(reply.status, headers);
    res.end();
  }
}

/** Reads and drops what is left of a request's body, up to the body limit (past it the answer goes out regardless). */
function dropBody(req: http.IncomingMessage): Promise<void> {
  if (req.complete) return Promise.resolve();
  return new Promise((resolve) => {
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) resolve();
    });
    req.on('end', () => resolve());
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.resume();
  });
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        // answer 413 and let the rest drain unread (destroying the socket would lose the answer)
        req.removeAllListeners('data');
        req.resume();
        reject(new HttpError(413, 'request body larger than 64 MiB', { connection: 'close' }));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Node's zstd, when this runtime has it (Node ≥ 22.15 / 23.8). */
export const zstdDecompress: ((b: Buffer, opts?: { maxOutputLength?: number }) => Buffer) | undefined = (
  zlib as unknown as { zstdDecompressSync?: (b: Buffer, opts?: { maxOutputLength?: number }) => Buffer }
).zstdDecompressSync;

/** The request body, decompressed when it says Content-Encoding: zstd. */
export function decodedBody(req: Request): Buffer {
  const enc = String(req.headers['content-encoding'] ?? '').toLowerCase();
  if (!enc || enc === 'identity') return req.body;
  if (enc === 'zstd') {
    if (!zstdDecompress) throw new HttpError(415, 'this engine runs on a Node.js without zstd; send the body uncompressed');
    try {
      return zstdDecompress(req.body, { maxOutputLength: MAX_BODY });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new HttpError(413, 'zstd body decompresses to more than 64 MiB');
      throw new HttpError(400, `zstd body: ${errorMessage(err)}`);
    }
  }
  throw new HttpError(415, `unsupported Content-Encoding "${enc}"`);
}

/** Parses a JSON body with a schema; errors are 422 with the field named. */
export function parseJson<T extends z.ZodType>(req: Request, schema: T): z.output<T> {
  let value: unknown;
  try {
    value = req.body.length ? JSON.parse(req.body.toString('utf8')) : {};
  } catch (err) {
    throw new HttpError(400, `the body is not JSON: ${errorMessage(err)}`);
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(422, `${req.path}: ${describeZodError(r.error)}`);
  return r.data;
}

export function wantsProtobuf(req: Request): boolean {
  return String(req.headers.accept ?? '').includes('application/x-protobuf');
}
