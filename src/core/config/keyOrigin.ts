// Where the API key may go: the official cloud origin, or an origin the user confirmed. Pure: the
// VS Code adapter keeps the confirmed origins (global state) and asks; the CLI treats an explicit
// --base-url or TINKER_BASE_URL as the confirmation.
import { DEFAULT_CLOUD_BASE_URL } from './backendKinds';

export const OFFICIAL_ORIGIN = new URL(DEFAULT_CLOUD_BASE_URL).origin;

export type KeyDestination =
  /** The official Tinker cloud: the key may go there. */
  | { kind: 'official'; origin: string }
  /** An origin the user already confirmed. */
  | { kind: 'trusted'; origin: string }
  /** Another origin: the key goes there only after the user confirms it. */
  | { kind: 'needs-consent'; origin: string }
  /** Never: plain http to a non-loopback host, or not an http(s) URL at all. */
  | { kind: 'refused'; origin: string; reason: string };

/** True for 127.0.0.0/8, ::1 and localhost (names that never leave the machine). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The origin (scheme://host:port) of a base URL, or undefined when it is not an http(s) URL. */
export function originOf(baseUrl: string): string | undefined {
  let u: URL;
  try {
    u = new URL(baseUrl.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  return u.origin;
}

/** Classifies where a request carrying the key to `baseUrl` would go. */
export function classifyKeyDestination(baseUrl: string, trustedOrigins: Iterable<string>): KeyDestination {
  const origin = originOf(baseUrl);
  if (!origin) return { kind: 'refused', origin: baseUrl, reason: `"${baseUrl}" is not an http:// or https:// URL` };
  const url = new URL(origin);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return { kind: 'refused', origin, reason: `${origin} uses plain http://, which is allowed only for this machine (127.0.0.1, localhost, ::1); use https://` };
  }
  if (origin === OFFICIAL_ORIGIN) return { kind: 'official', origin };
  for (const t of trustedOrigins) if (t === origin) return { kind: 'trusted', origin };
  return { kind: 'needs-consent', origin };
}

/** Plain http to a non-loopback host is refused even without a key (the traffic would be readable). */
export function checkTransport(baseUrl: string): string | undefined {
  const d = classifyKeyDestination(baseUrl, []);
  return d.kind === 'refused' ? d.reason : undefined;
}
