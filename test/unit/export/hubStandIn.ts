// A STAND-IN of the Hugging Face Hub (the real Hub cannot be reached here): the routes @huggingface/hub
// calls to publish, read from its source — POST /api/repos/create, GET /<repo>/resolve/main/<file>,
// POST /api/models/<repo>/preupload/main, POST /<repo>.git/info/lfs/objects/batch (basic PUT for large
// files, multipart above `multipartAbove`), PUT of an LFS object or part, the multipart completion,
// and POST /api/models/<repo>/commit/main (ndjson). It checks what a real Hub checks (the bearer token,
// each LFS object's sha256 and size, that every lfsFile in a commit was uploaded) and can fail on cue.
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInRepo {
  private: boolean;
  files: Map<string, Buffer>;
  commits: string[];
}

export interface HubStandIn {
  url: string;
  repos: Map<string, StandInRepo>;
  /** LFS objects stored, by sha256 */
  lfs: Map<string, Buffer>;
  /** every request: "METHOD path" */
  seen: string[];
  /** fail the n-th LFS PUT (1-based, counted over the stand-in's life) with this status */
  failLfsPut?: { nth: number; status: number };
  lfsPuts: number;
  /** fail this many commit calls (after their LFS objects are stored) with 503 */
  failCommits: number;
  /** echo the Authorization header in error bodies, as a careless proxy might */
  echoAuthInErrors: boolean;
  /** files at or above this many bytes are LFS (the Hub decides in preupload) */
  lfsAbove: number;
  multipartAbove: number;
  chunkSize: number;
  close(): Promise<void>;
}

function body(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

export async function startHubStandIn(o: { token: string }): Promise<HubStandIn> {
  const hub: HubStandIn = {
    url: '',
    repos: new Map(),
    lfs: new Map(),
    seen: [],
    lfsPuts: 0,
    failCommits: 0,
    echoAuthInErrors: false,
    lfsAbove: 1024,
    multipartAbove: 64 * 1024,
    chunkSize: 20 * 1024,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const parts = new Map<string, Buffer[]>();
  const json = (res: http.ServerResponse, status: number, v: unknown, extra: Record<string, string> = {}): void => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...extra });
    res.end(JSON.stringify(v));
  };
  const error = (req: http.IncomingMessage, res: http.ServerResponse, status: number, message: string, code?: string): void =>
    json(res, status, { error: hub.echoAuthInErrors ? `${message} (request had Authorization: ${req.headers.authorization ?? ''})` : message }, code ? { 'X-Error-Code': code } : {});

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', hub.url);
      const p = decodeURIComponent(url.pathname);
      hub.seen.push(`${req.method} ${p}`);
      const data = await body(req);
      const authed = req.headers.authorization === `Bearer ${o.token}`;
      // storage URLs (LFS objects and parts) carry no token, as presigned URLs do not
      let m: RegExpMatchArray | null;
      if (req.method === 'PUT' && (m = /^\/storage\/([0-9a-f]{64})(?:\/part\/(\d+))?$/.exec(p))) {
        hub.lfsPuts++;
        if (hub.failLfsPut && hub.lfsPuts === hub.failLfsPut.nth) return error(req, res, hub.failLfsPut.status, 'storage is unavailable');
        if (m[2]) {
          const list = parts.get(m[1]!) ?? [];
          list[Number(m[2]) - 1] = data;
          parts.set(m[1]!, list);
          res.writeHead(200, { ETag: `"${createHash('md5').update(data).digest('hex')}"` });
          return res.end();
        }
        if (createHash('sha256').update(data).digest('hex') !== m[1]) return error(req, res, 400, 'sha256 mismatch');
        hub.lfs.set(m[1]!, data);
        res.writeHead(200);
        return res.end();
      }
      if (req.method === 'POST' && (m = /^\/storage\/([0-9a-f]{64})\/complete$/.exec(p))) {
        const all = Buffer.concat(parts.get(m[1]!) ?? []);
        if (createHash('sha256').update(all).digest('hex') !== m[1]) return error(req, res, 400, 'multipart sha256 mismatch');
        hub.lfs.set(m[1]!, all);
        return json(res, 200, {});
      }
      if (!authed) return error(req, res, 401, 'Invalid credentials in Authorization header');
      if (req.method === 'POST' && p === '/api/repos/create') {
        const b = JSON.parse(data.toString('utf8')) as { name: string; organization: string; visibility?: string; type: string };
        const id = `${b.organization}/${b.name}`;
        if (b.type !== 'model') return error(req, res, 400, 'only model repos here');
        if (hub.repos.has(id)) return error(req, res, 409, 'You already created this model repo');
        hub.repos.set(id, { private: b.visibility !== 'public', files: new Map(), commits: [] });
        return json(res, 200, { url: `${hub.url}/${id}`, id });
      }
      if (req.method === 'GET' && (m = /^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(p))) {
        const repo = hub.repos.get(m[1]!);
        if (!repo) return error(req, res, 404, 'Repository not found', 'RepoNotFound');
        const f = repo.files.get(m[2]!);
        if (!f) return error(req, res, 404, 'Entry not found', 'EntryNotFound');
        const etag = `"${createHash('sha256').update(f).digest('hex')}"`;
        const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
        if (range) {
          const a = Number(range[1]);
          const z = Math.min(Number(range[2]), f.length - 1);
          res.writeHead(206, { 'Content-Range': `bytes ${a}-${z}/${f.length}`, ETag: etag, 'Content-Type': 'text/plain' });
          return res.end(f.subarray(a, z + 1));
        }
        res.writeHead(200, { ETag: etag, 'Content-Type': 'text/plain' });
        return res.end(f);
      }
      if (req.method === 'POST' && (m = /^\/api\/models\/([^/]+\/[^/]+)\/preupload\/main$/.exec(p))) {
        if (!hub.repos.has(m[1]!)) return error(req, res, 404, 'Repository not found', 'RepoNotFound');
        const b = JSON.parse(data.toString('utf8')) as { files: { path: string; size: number }[] };
        return json(res, 200, { files: b.files.map((f) => ({ path: f.path, uploadMode: f.size >= hub.lfsAbove ? 'lfs' : 'regular' })) });
      }
      if (req.method === 'POST' && (m = /^\/([^/]+\/[^/]+)\.git\/info\/lfs\/objects\/batch$/.exec(p))) {
        if (!hub.repos.has(m[1]!)) return error(req, res, 404, 'Repository not found', 'RepoNotFound');
        const b = JSON.parse(data.toString('utf8')) as { transfers: string[]; objects: { oid: string; size: number }[] };
        const objects = b.objects.map((ob) => {
          if (hub.lfs.has(ob.oid)) return { oid: ob.oid, size: ob.size };
          if (ob.size >= hub.multipartAbove && b.transfers.includes('multipart')) {
            const n = Math.ceil(ob.size / hub.chunkSize);
            const header: Record<string, string> = { chunk_size: String(hub.chunkSize) };
            for (let i = 1; i <= n; i++) header[String(i).padStart(5, '0')] = `${hub.url}/storage/${ob.oid}/part/${i}`;
            return { oid: ob.oid, size: ob.size, actions: { upload: { href: `${hub.url}/storage/${ob.oid}/complete`, header } } };
          }
          return { oid: ob.oid, size: ob.size, actions: { upload: { href: `${hub.url}/storage/${ob.oid}` } } };
        });
        res.writeHead(200, { 'Content-Type': 'application/vnd.git-lfs+json' });
        return res.end(JSON.stringify({ transfer: 'basic', objects }));
      }
      if (req.method === 'POST' && (m = /^\/api\/models\/([^/]+\/[^/]+)\/commit\/main$/.exec(p))) {
        const repo = hub.repos.get(m[1]!);
        if (!repo) return error(req, res, 404, 'Repository not found', 'RepoNotFound');
        if (hub.failCommits > 0) {
          hub.failCommits--;
          return error(req, res, 503, 'the commit service is unavailable');
        }
        const lines = data.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; value: Record<string, unknown> });
        const staged = new Map<string, Buffer>();
        for (const l of lines) {
          if (l.key === 'file') staged.set(String(l.value.path), Buffer.from(String(l.value.content), 'base64'));
          else if (l.key === 'lfsFile') {
            const obj = hub.lfs.get(String(l.value.oid));
            if (!obj || obj.length !== l.value.size) return error(req, res, 422, `LFS object of ${String(l.value.path)} was not uploaded`);
            staged.set(String(l.value.path), obj);
          }
        }
        for (const [k, v] of staged) repo.files.set(k, v);
        const oid = createHash('sha1').update(data).digest('hex');
        repo.commits.push(oid);
        return json(res, 200, { commitOid: oid, commitUrl: `${hub.url}/${m[1]}/commit/${oid}` });
      }
      return error(req, res, 404, `the stand-in has no route ${req.method} ${p}`);
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  hub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return hub;
}
