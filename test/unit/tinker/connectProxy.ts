// A small real HTTP proxy for the network tests: CONNECT tunnels (what clients use for https) and
// plain forwarded requests, optional Basic proxy authentication, its own name table (as a corporate
// proxy resolves internal names), and a record of everything it was asked and everything it relayed.
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxyRecord {
  method: string;
  /** host:port of CONNECT, or the absolute URL of a forwarded request */
  target: string;
  headers: http.IncomingHttpHeaders;
  /** the status the proxy answered (200 tunnel established, 407, 502 …) */
  status: number;
}

export interface RecordingProxy {
  url: string;
  records: ProxyRecord[];
  /** every byte relayed in either direction, to check what a proxy could read */
  relayed(): Buffer;
  close(): Promise<void>;
}

export async function startRecordingProxy(o: { names?: Record<string, string>; credentials?: { user: string; password: string } } = {}): Promise<RecordingProxy> {
  const records: ProxyRecord[] = [];
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const resolve = (host: string) => o.names?.[host.toLowerCase()] ?? host;
  const authorised = (h: http.IncomingHttpHeaders) => {
    if (!o.credentials) return true;
    const want = `Basic ${Buffer.from(`${o.credentials.user}:${o.credentials.password}`).toString('base64')}`;
    return h['proxy-authorization'] === want;
  };
  const relay = (a: net.Socket, b: net.Socket) => {
    a.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    b.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    a.pipe(b);
    b.pipe(a);
    a.on('error', () => b.destroy());
    b.on('error', () => a.destroy());
    a.on('close', () => b.destroy());
    b.on('close', () => a.destroy());
  };

  const server = http.createServer((req, res) => {
    const target = req.url ?? '';
    const record: ProxyRecord = { method: req.method ?? '', target, headers: req.headers, status: 0 };
    records.push(record);
    if (!authorised(req.headers)) {
      record.status = 407;
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    let u: URL;
    try {
      u = new URL(target);
    } catch {
      record.status = 400;
      res.writeHead(400).end('absolute URL expected');
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const up = http.request({ host: resolve(u.hostname), port: u.port || 80, path: u.pathname + u.search, method: req.method, headers }, (r) => {
      record.status = r.statusCode ?? 0;
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
      r.pipe(res);
    });
    up.on('error', () => {
      record.status = 502;
      res.writeHead(502).end();
    });
    req.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    req.pipe(up);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const target = req.url ?? '';
    const record: ProxyRecord = { method: 'CONNECT', target, headers: req.headers, status: 0 };
    records.push(record);
    if (!authorised(req.headers)) {
      record.status = 407;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const m = /^(.+):(\d+)$/.exec(target);
    if (!m) {
      record.status = 400;
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(m[2]), resolve(m[1]!.replace(/^\[|\]$/g, '')), () => {
      record.status = 200;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      relay(client, upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.once('error', () => {
      if (record.status === 0) {
        record.status = 502;
        client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      }
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  const auth = o.credentials ? `${encodeURIComponent(o.credentials.user)}:${encodeURIComponent(o.credentials.password)}@` : '';
  return {
    url: `http://${auth}127.0.0.1:${port}`,
    records,
    relayed: () => Buffer.concat(chunks),
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
