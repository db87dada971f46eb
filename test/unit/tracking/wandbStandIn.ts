// A STAND-IN for W&B's servers (they cannot run here): a local HTTP server that answers the calls the
// pinned @wandb/sdk 0.5.1 makes — recorded from its real traffic: POST /graphql `query Viewer` (the
// default entity), POST /graphql `mutation UpsertBucket` (the run: name = run id, displayName,
// config as a JSON string), then POST /files/<entity>/<project>/<run id>/file_stream with
// {"files": {"wandb-history.jsonl": {content: [row json …], offset}, "wandb-summary.json": …}} and at
// the end {"complete": true, "exitcode": 0} — and records every request with its Authorization.
// Faults: 'status500', 'status401' (every call answered so), 'hang' (never answers), 'close'
// (destroys the connection).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export type StandInMode = 'ok' | 'status500' | 'status401' | 'hang' | 'close';

export interface Recorded {
  method: string;
  path: string;
  authorization?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class WandbStandIn {
  readonly requests: Recorded[] = [];
  mode: StandInMode = 'ok';
  private server = http.createServer((req, res) => this.handle(req, res));
  private hanging: http.ServerResponse[] = [];

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Lets the process exit while the stand-in still listens (the UI tests' runner, whose steps may stop early). */
  unref(): void {
    this.server.unref();
  }

  async close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The UpsertBucket calls' variables, in order. */
  upserts(): Record<string, unknown>[] {
    return this.graphql().filter((q) => /mutation UpsertBucket/.test(q.query)).map((q) => q.variables);
  }

  /** The history rows sent for a run id (parsed, in order). */
  history(runId: string): Record<string, unknown>[] {
    return this.fileStream(runId).flatMap((b) => (b.files?.['wandb-history.jsonl']?.content ?? []).map((l) => JSON.parse(l) as Record<string, unknown>));
  }

  /** The last summary sent for a run id. */
  summary(runId: string): Record<string, unknown> | undefined {
    const s = this.fileStream(runId).map((b) => b.files?.['wandb-summary.json']?.content?.[0]).filter((c): c is string => c !== undefined);
    return s.length ? (JSON.parse(s[s.length - 1]) as Record<string, unknown>) : undefined;
  }

  completed(runId: string): boolean {
    return this.fileStream(runId).some((b) => b.complete === true);
  }

  private graphql(): { query: string; variables: Record<string, unknown> }[] {
    return this.requests.filter((r) => r.path === '/graphql').map((r) => JSON.parse(r.body) as { query: string; variables: Record<string, unknown> });
  }

  private fileStream(runId: string): { files?: Record<string, { content?: string[] }>; complete?: boolean }[] {
    return this.requests.filter((r) => r.path.endsWith(`/${runId}/file_stream`)).map((r) => JSON.parse(r.body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      this.requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, headers: req.headers, body });
      if (this.mode === 'hang') return void this.hanging.push(res);
      if (this.mode === 'close') return void req.socket.destroy();
      if (this.mode === 'status500') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"stand-in 500"}');
      if (this.mode === 'status401') return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"message":"stand-in: invalid API key"}]}');
      res.setHeader('content-type', 'application/json');
      if (req.url === '/graphql') {
        const q = JSON.parse(body) as { query: string; variables: Record<string, string> };
        if (/query Viewer/.test(q.query)) return void res.end(JSON.stringify({ data: { viewer: { id: 'v1', entity: 'stand-in-user', flags: '{}', teams: { edges: [] } } } }));
        if (/mutation UpsertBucket/.test(q.query)) {
          const v = q.variables;
          return void res.end(JSON.stringify({ data: { upsertBucket: { inserted: true, bucket: { id: 'b1', name: v.name, displayName: v.displayName ?? v.name, description: null, config: v.config, sweepName: null, project: { id: 'p1', name: v.project, entity: { id: 'e1', name: v.entity || 'stand-in-user' } } } } } }));
        }
        return void res.writeHead(400).end('{"errors":[{"message":"stand-in: unknown query"}]}');
      }
      res.end('{}');
    });
  }
}
