// Who the local engine answers: only its owner. Every request must
//   - name the engine's own loopback address and port in Host (a DNS-rebinding page names its own host),
//   - carry no Origin header (browsers add one to cross-site requests; SDKs and our client do not),
//   - send a body as JSON or protobuf (a cross-site form or text/plain POST is refused before parsing),
//   - carry the per-launch token as its API key (X-API-Key, or Authorization: Bearer), like any Tinker
//     key, so the official Python SDK and our client work unchanged.
// The archive links the engine hands out carry their own one-time token in the path instead.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type * as http from 'node:http';
import { HttpError } from './http';

/** A fresh per-launch token, shaped like a Tinker API key (SDKs check the "tml-" prefix). */
export function newEngineToken(): string {
  return `tml-local-${randomBytes(24).toString('hex')}`;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);
const BODY_TYPES = ['application/json', 'application/x-protobuf', 'application/protobuf'];

export interface AdmissionPolicy {
  /** undefined: no token is required */
  token: string | undefined;
  /** the port the engine listens on (known once it listens) */
  port(): number;
  /** paths that carry their own token (archive downloads) */
  selfAuthorized(path: string): boolean;
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function credential(req: http.IncomingMessage): string | undefined {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string' && key) return key;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m?.[1];
}

/** Throws the HttpError that refuses `req`, or returns when it may be served. */
export function admit(req: http.IncomingMessage, path: string, policy: AdmissionPolicy): void {
  const host = req.headers.host ?? '';
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  if (!m || !LOOPBACK_NAMES.has(m[1]!.toLowerCase()) || Number(m[2]) !== policy.port()) {
    throw new HttpError(403, `Host "${host}" refused: the local engine answers only requests addressed to 127.0.0.1:${policy.port()}`);
  }
  if (req.headers.origin !== undefined) {
    throw new HttpError(403, `requests from web pages are refused (Origin: ${String(req.headers.origin)})`);
  }
  const method = req.method ?? 'GET';
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if ((method === 'POST' || method === 'PUT' || method === 'PATCH') && hasBody) {
    const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!BODY_TYPES.includes(type)) throw new HttpError(415, `Content-Type "${type || '(none)'}" refused: send application/json or application/x-protobuf`);
  }
  if (policy.token === undefined || policy.selfAuthorized(path)) return;
  const given = credential(req);
  if (!given || !sameToken(given, policy.token)) {
    throw new HttpError(401, given ? 'wrong API key for this local engine: use the token it was started with' : 'missing API key: the local engine needs the token it was started with (X-API-Key)');
  }
}
