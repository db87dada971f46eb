// The embedded engine's HTTP server: the Tinker protocol (tinker-protocol.md) over node:http on
// 127.0.0.1, driving a ComputeBackend. Asynchronous requests answer with a future handle at once and
// are resolved through retrieve_future. Each area's routes live in their own module around a shared
// EngineState; this one creates the server, wires them and decides who gets in.
import { timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { addCheckpointRoutes } from './checkpointRoutes';
import { HttpError, MAX_BODY, Router, isOpenAiPath } from './http';
import { addOpenAiRoutes } from './openaiRoutes';
import { addSamplingRoutes, releaseIdleDirectSamplers } from './samplingRoutes';
import { addSessionRoutes, releaseSession } from './sessionRoutes';
import { EngineServerOptions, EngineState } from './state';
import { EngineStore } from './store';
import { errorMessage } from '../../core/errors';
import { addTrainingRoutes } from './trainingRoutes';

export { MAX_NUM_SAMPLES, MAX_SAMPLING_TOKENS } from './samplingRoutes';

export type { EngineServerOptions };

export interface EngineServer {
  url: string;
  port: number;
  store: EngineStore;
  /** what the engine holds in memory (for tests and diagnostics) */
  stats(): { sessions: number; samplers: number; directSamplers: number; archiveLinks: number; pendingRequests: number; issuedRequests: number };
  close(): Promise<void>;
}

export async function startEngineServer(opts: EngineServerOptions): Promise<EngineServer> {
  const store = await EngineStore.open(opts.dataDir, opts.log);
  const st = new EngineState(opts, store);
  const { futures, sessions, samplers, directSamplers, sessionTimeoutMs } = st;

  let port = 0;
  const r = new Router((req, path) => {
    admit(req, path, { apiKey: opts.apiKey, port: () => port, allowedHosts: (opts.allowedHosts ?? []).map((h) => h.toLowerCase()) });
    st.simulator?.refuseSubmission(req, path);
  });
  addSessionRoutes(r, st);
  addTrainingRoutes(r, st);
  addSamplingRoutes(r, st);
  addOpenAiRoutes(r, st);
  const archiveLinks = addCheckpointRoutes(r, st);

  const server = http.createServer((req, res) => {
    // handle() answers every request itself; this only keeps a bug there from ending the engine
    r.handle(req, res).catch((err: unknown) => {
      opts.log?.(`request ${req.method} failed unanswered: ${errorMessage(err)}`);
      res.destroy();
    });
  });
  // CONNECT is not for this server (node:http would drop the socket unanswered)
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify({ detail: 'CONNECT is not allowed: this is the Tinker engine, not a proxy' });
    socket.on('error', () => undefined);
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  server.keepAliveTimeout = 65_000;
  // the whole request (headers and body) must arrive within this; long polls answer well before
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  port = addr.port;
  st.url = `http://${opts.host ?? '127.0.0.1'}:${addr.port}`;

  const sweep = setInterval(() => {
    const cutoff = Date.now() - sessionTimeoutMs;
    for (const s of [...sessions.values()]) if (s.lastSeen < cutoff) void releaseSession(st, s);
    void releaseIdleDirectSamplers(st, cutoff);
    archiveLinks.prune();
    void store.expire();
  }, Math.min(60_000, Math.max(50, sessionTimeoutMs / 4)));
  sweep.unref();

  return {
    url: st.url,
    port: addr.port,
    store,
    stats: () => ({ sessions: sessions.size, samplers: samplers.size, directSamplers: directSamplers.size, archiveLinks: archiveLinks.count(), pendingRequests: futures.pendingCount(), issuedRequests: futures.issuedCount() }),
    close: async () => {
      st.closed = true;
      clearInterval(sweep);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      while (st.inFlight.size) await Promise.allSettled([...st.inFlight]);
      await store.save();
    },
  };
}

const BODY_TYPES = ['application/json', 'application/x-protobuf'];

/**
 * Only the owner's client gets in: the per-launch token as API key, a Host naming the loopback
 * address and our port (no DNS rebinding), no Origin (no web page), and a JSON or protobuf body (a
 * cross-site "simple" POST is text/plain or a form).
 */
function admit(req: http.IncomingMessage, path: string, o: { apiKey?: string; port: () => number; allowedHosts: string[] }): void {
  if (req.headers.origin !== undefined) throw new HttpError(403, 'requests from web pages (with an Origin header) are refused');
  const host = String(req.headers.host ?? '').toLowerCase();
  const port = o.port();
  if (![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, ...o.allowedHosts].includes(host)) {
    throw new HttpError(421, `Host "${host}" is not this engine (127.0.0.1:${port})`);
  }
  // an archive link carries its own short-lived token, like a presigned URL
  const archiveLink = path.startsWith('/api/v1/_engine/archives/');
  if (o.apiKey !== undefined && !archiveLink) {
    // the OpenAI-compatible routes also take the key as OpenAI clients send it: Authorization: Bearer <key>
    const bearer = isOpenAiPath(path) ? /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''))?.[1] : undefined;
    const given = Buffer.from(bearer ?? String(req.headers['x-api-key'] ?? ''));
    const want = Buffer.from(o.apiKey);
    if (given.length !== want.length || !timingSafeEqual(given, want)) {
      throw new HttpError(401, "missing or wrong API key: use the engine's token (printed when it starts)");
    }
  }
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) throw new HttpError(413, 'request body larger than 64 MiB', { connection: 'close' });
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
    const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const length = Number(req.headers['content-length'] ?? (req.headers['transfer-encoding'] ? NaN : 0));
    if (!BODY_TYPES.includes(type) && !(type === '' && length === 0)) {
      throw new HttpError(415, `Content-Type must be application/json or application/x-protobuf (got "${type || 'none'}")`);
    }
  }
}
