// A STAND-IN for the Tinker service's billing route (the service cannot run here, and the engine keeps
// no billing): a local HTTP server answering POST /api/v1/client/config and
// GET /api/v1/billing/usage/events as tinker-protocol.md §9.9 describes it — a window must be
// hour-aligned RFC 3339 and at most 14 days (else 400), the answer is the events whose bucket lies in
// the window. Modes: 'ok', 'forbidden' (403 on the billing route), 'tooOld' (400 for every window).
// Every request is recorded with its X-API-Key.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInEvent {
  bucket_start: string;
  bucket_end: string;
  session_id?: string;
  base_model?: string;
  event_info: Record<string, unknown>;
}

export class BillingStandIn {
  readonly requests: Array<{ method: string; path: string; query: Record<string, string>; apiKey?: string }> = [];
  mode: 'ok' | 'forbidden' | 'tooOld' = 'ok';
  events: StandInEvent[] = [];
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The billing windows asked for, as [start, end) in ms. */
  windows(): Array<[number, number]> {
    return this.requests.filter((r) => r.path === '/api/v1/billing/usage/events').map((r) => [Date.parse(r.query.starting_on!), Date.parse(r.query.ending_before!)]);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const key = req.headers['x-api-key'];
    this.requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), ...(typeof key === 'string' ? { apiKey: key } : {}) });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    req.resume();
    req.on('end', () => {
      const route = `${req.method} ${url.pathname}`;
      if (route === 'POST /api/v1/client/config') return send(200, {});
      if (route !== 'GET /api/v1/billing/usage/events') return send(404, { detail: `no route ${route}` });
      if (this.mode === 'forbidden') return send(403, { detail: 'billing access required' });
      if (this.mode === 'tooOld') return send(400, { detail: 'starting_on is older than the retained usage' });
      const from = url.searchParams.get('starting_on') ?? '';
      const to = url.searchParams.get('ending_before') ?? '';
      const hourly = (s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/.test(s);
      if (!hourly(from) || !hourly(to)) return send(400, { detail: 'starting_on and ending_before must be RFC 3339 on the hour' });
      const a = Date.parse(from);
      const b = Date.parse(to);
      if (!(a < b) || b - a > 14 * 24 * 3_600_000) return send(400, { detail: 'the window must be at most 14 days' });
      const data = this.events.filter((e) => Date.parse(e.bucket_start) >= a && Date.parse(e.bucket_start) < b);
      const sessions = Object.fromEntries(data.flatMap((e) => (e.session_id ? [[e.session_id, { user_metadata: {} }]] : [])));
      return send(200, { data, sessions });
    });
  }
}
