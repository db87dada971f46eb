// How the Tinker client reaches a server: directly, or through an HTTP proxy (VS Code's `http.proxy`,
// else HTTPS_PROXY / HTTP_PROXY), with NO_PROXY / `http.noProxy` exceptions, `http.proxyStrictSSL`
// and extra CA certificates. undici's own Agent ignores all of these, so the transport builds its
// dispatcher here. This machine (the local engine) is never reached through a proxy.
import * as tls from 'node:tls';
import { Agent, Dispatcher, ProxyAgent } from 'undici';
import { isLoopbackHost } from '../config/keyOrigin';

export interface NetworkOptions {
  /** VS Code's `http.proxy`; empty or absent: the environment's HTTPS_PROXY / HTTP_PROXY */
  proxy?: string;
  /** VS Code's `http.noProxy`: hosts reached directly, besides the environment's NO_PROXY */
  noProxy?: string[];
  /** VS Code's `http.proxyStrictSSL`: false stops verifying TLS certificates (default true) */
  strictSSL?: boolean;
  /** VS Code's `http.systemCertificates`: also trust the OS certificate store, where this Node can read it */
  systemCertificates?: boolean;
  /** extra trusted CA certificates (PEM) */
  ca?: string[];
  /** where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read (default process.env) */
  env?: Record<string, string | undefined>;
}

export type Route =
  | { kind: 'direct'; why: 'loopback' | 'no-proxy' | 'no proxy configured' }
  | { kind: 'proxy'; proxy: string; source: 'http.proxy' | 'HTTPS_PROXY' | 'HTTP_PROXY' };

export class ProxyConfigError extends Error {
  override name = 'ProxyConfigError';
}

/** Which way a request to `target` goes. Pure. */
export function chooseRoute(target: string, o: NetworkOptions = {}): Route {
  const url = new URL(target);
  if (isLoopbackHost(url.hostname)) return { kind: 'direct', why: 'loopback' };
  const env = o.env ?? process.env;
  const fromEnv = (name: string) => (env[name.toLowerCase()] ?? env[name])?.trim() || undefined;
  const setting = o.proxy?.trim();
  let route: Extract<Route, { kind: 'proxy' }> | undefined;
  if (setting) route = { kind: 'proxy', proxy: setting, source: 'http.proxy' };
  else if (url.protocol === 'https:' && fromEnv('HTTPS_PROXY')) route = { kind: 'proxy', proxy: fromEnv('HTTPS_PROXY')!, source: 'HTTPS_PROXY' };
  else if (fromEnv('HTTP_PROXY')) route = { kind: 'proxy', proxy: fromEnv('HTTP_PROXY')!, source: 'HTTP_PROXY' };
  if (!route) return { kind: 'direct', why: 'no proxy configured' };
  let proxyUrl: URL | undefined;
  try {
    proxyUrl = new URL(route.proxy);
  } catch {
    proxyUrl = undefined;
  }
  if (!proxyUrl || (proxyUrl.protocol !== 'http:' && proxyUrl.protocol !== 'https:')) {
    // the value may hold a password: it is not repeated
    throw new ProxyConfigError(`${route.source} is not a proxy URL: write it as http://host:port (or http://user:password@host:port)`);
  }
  const exceptions = [...(o.noProxy ?? []), ...(fromEnv('NO_PROXY') ?? '').split(/[\s,]+/)];
  return bypassed(url, exceptions) ? { kind: 'direct', why: 'no-proxy' } : route;
}

/**
 * NO_PROXY as curl reads it: `*` is every host; an entry is a host name (matching it and its
 * subdomains; a leading `.` or `*.` is ignored) or an IP address, optionally with `:port`.
 */
function bypassed(url: URL, entries: string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    // [v6]:port, a bare v6 address (several colons), or name:port
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? (entry.split(':').length > 2 ? [entry, entry, undefined] : /^([^:]+)(?::(\d+))?$/.exec(entry));
    if (!m) continue;
    const name = m[1]!.replace(/^\*?\./, '');
    if (m[2] !== undefined && Number(m[2]) !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** The proxy URL without its credentials, for log lines and error text. */
export function describeProxy(proxy: string): string {
  try {
    const u = new URL(proxy);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable proxy URL)';
  }
}

export function describeRoute(r: Route): string {
  return r.kind === 'direct' ? `direct (${r.why})` : `through the proxy ${describeProxy(r.proxy)} (${r.source})`;
}

/** The proxy's password (and user), to be scrubbed from error text. */
export function proxySecrets(r: Route): string[] {
  if (r.kind !== 'proxy') return [];
  try {
    const u = new URL(r.proxy);
    return [decodeURIComponent(u.password), u.password].filter((s) => s.length > 0);
  } catch {
    return [];
  }
}

type CaReader = (type: 'default' | 'system') => string[];
const getCACertificates: CaReader | undefined = (tls as unknown as { getCACertificates?: CaReader }).getCACertificates;

/** The CA list to trust, or undefined for Node's default (its bundle plus NODE_EXTRA_CA_CERTS). */
function trustedCas(o: NetworkOptions): string[] | undefined {
  const extra = o.ca ?? [];
  const system = o.systemCertificates !== false && getCACertificates ? getCACertificates('system') : [];
  if (!extra.length && !system.length) return undefined;
  // setting `ca` replaces Node's bundle, so the bundle goes in first
  const bundle = getCACertificates ? getCACertificates('default') : [...tls.rootCertificates];
  return [...bundle, ...system, ...extra];
}

const AGENT_DEFAULTS = { connections: 1000, keepAliveTimeout: 20_000 } as const;

/** The dispatcher of a transport to `baseUrl`, and the route it takes. */
export function createDispatcher(baseUrl: string, o: NetworkOptions = {}): { dispatcher: Dispatcher; route: Route } {
  const route = chooseRoute(baseUrl, o);
  const ca = trustedCas(o);
  const tlsOptions = { ...(ca ? { ca } : {}), ...(o.strictSSL === false ? { rejectUnauthorized: false } : {}) };
  if (route.kind === 'direct') {
    return { route, dispatcher: new Agent({ ...AGENT_DEFAULTS, connect: { timeout: 5_000, ...tlsOptions } }) };
  }
  const dispatcher = new ProxyAgent({
    ...AGENT_DEFAULTS,
    uri: route.proxy,
    connect: { timeout: 5_000 },
    requestTls: tlsOptions,
    proxyTls: tlsOptions,
  });
  return { route, dispatcher };
}

/**
 * Runs `use` with a dispatcher routed for `url` as the client's own (proxy, NO_PROXY, loopback
 * direct, certificates), closed afterwards. For the other downloads: tokenizer files, dataset pages,
 * checkpoint archives.
 */
export async function withDispatcher<T>(url: string, o: NetworkOptions, use: (dispatcher: Dispatcher, route: Route) => Promise<T>): Promise<T> {
  const { dispatcher, route } = createDispatcher(url, o);
  try {
    return await use(dispatcher, route);
  } finally {
    // every body `use` needed is read by now; destroy (not close) so an unread one cannot hold it open
    await dispatcher.destroy().catch(() => undefined);
  }
}

/** ", through the proxy …" for error text when a request went through a proxy, else "". */
export function viaProxy(r: Route): string {
  return r.kind === 'proxy' ? `, ${describeRoute(r)}` : '';
}
