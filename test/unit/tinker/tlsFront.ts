// A TLS front for "the remote server" in the proxy tests: it terminates https with the self-signed
// certificate for tinker-engine.test (test/fixtures/tls) and pipes the bytes to a local port.
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';

export const FRONT_NAME = 'tinker-engine.test';
const TLS_DIR = path.resolve(__dirname, '../../../../test/fixtures/tls');

export interface TlsFront {
  port: number;
  /** the front's certificate (PEM), for a client to trust */
  cert: string;
  close(): Promise<void>;
}

/** `upstreamPort` is read per connection: the engine behind the front starts after it (it must allow the front's host:port). */
export async function startTlsFront(upstreamPort: () => number): Promise<TlsFront> {
  const cert = fs.readFileSync(path.join(TLS_DIR, `${FRONT_NAME}.crt`), 'utf8');
  const sockets = new Set<net.Socket>();
  const front = tls.createServer({ key: fs.readFileSync(path.join(TLS_DIR, `${FRONT_NAME}.key`)), cert }, (s) => {
    const up = net.connect(upstreamPort(), '127.0.0.1');
    for (const x of [s, up]) {
      sockets.add(x);
      x.on('close', () => sockets.delete(x));
      x.on('error', () => undefined);
    }
    s.pipe(up).pipe(s);
    s.on('close', () => up.destroy());
    up.on('close', () => s.destroy());
  });
  front.on('tlsClientError', () => undefined);
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  return {
    port: (front.address() as AddressInfo).port,
    cert,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => front.close(() => r()));
    },
  };
}
