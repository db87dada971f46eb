// What the engine fuzz and robustness tests share: the engine as the extension runs it (its own
// process, a client connected), raw HTTP/1.1 over a TCP socket (so a request line or header no HTTP
// client would send can be sent), the engine's route table read from its sources (a new route is
// fuzzed without editing the test), and the awkward values a client may send.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceClient } from '../../../src/core/tinker/client';
import { EngineProcess, startEngineProcess } from '../../../src/engine/launcher';

const root = path.resolve(__dirname, '../../../..');

/** The built engine (dist/engine.js, `npm run build` first) in its own process, over a temporary data folder. */
export interface SpawnedEngine {
  proc: EngineProcess;
  service: ServiceClient;
  /** the process's log lines, for failure messages */
  log: string[];
  /** closes the client, stops the process and removes the folder */
  close(): Promise<void>;
}

/** Starts the built engine in a new temporary folder named `prefix…` and connects a client to it. */
export async function spawnBuiltEngine(prefix: string): Promise<SpawnedEngine> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const log: string[] = [];
  let proc: EngineProcess | undefined;
  let service: ServiceClient | undefined;
  const close = async () => {
    service?.close();
    await proc?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    proc = await startEngineProcess({ entry: path.join(root, 'dist/engine.js'), dataDir: path.join(dir, 'data'), onLog: (l) => log.push(l) });
    service = await ServiceClient.connect({ baseUrl: proc.url, apiKey: proc.apiKey, clientVersion: 'test' });
  } catch (err) {
    await close();
    throw err;
  }
  return { proc, service, log, close };
}

export interface RawAnswer {
  /** the status of the answer's status line, or undefined when the socket closed without one */
  status: number | undefined;
  /** the answer's first bytes (head and the start of the body), for failure messages */
  text: string;
  ms: number;
}

/**
 * Sends `bytes` to 127.0.0.1:`port` and collects what comes back until the server closes the
 * connection (the requests say Connection: close) or `hangMs` passes, which rejects. `halfClose`
 * ends the client's side after the bytes (a request cut short).
 */
export function rawExchange(port: number, bytes: Buffer, hangMs: number, halfClose = false): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    const socket = net.connect(port, '127.0.0.1', () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${hangMs / 1000} s`));
    }, hangMs);
    socket.on('data', (c: Buffer) => {
      // keep the head and a little of the body; the rest is read and dropped
      if (size < 4096) chunks.push(c);
      size += c.length;
    });
    // a reset after the answer was written is still an answer
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : undefined, text: text.slice(0, 600), ms: performance.now() - t0 });
    });
  });
}

/** An HTTP/1.1 request as bytes: the request line, Host, the given headers, Content-Length and the body. */
export function requestBytes(o: { method: string; target: string; host: string; headers?: Array<[string, string]>; body?: Buffer | string; noLength?: boolean }): Buffer {
  const body = o.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body, 'utf8');
  const lines = [`${o.method} ${o.target} HTTP/1.1`, `Host: ${o.host}`, 'Connection: close', ...(o.headers ?? []).map(([k, v]) => `${k}: ${v}`)];
  if (!o.noLength) lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

export interface EngineRoute {
  method: string;
  /** the route's pattern as registered: `/api/v1/training_runs/{run}/checkpoints/{ckpt}*` */
  pattern: string;
}

/** Every route the engine's server modules register (`r.add(METHOD, api('…'))`, and the OpenAI prefixes). */
export function engineRoutes(): EngineRoute[] {
  const dir = path.join(root, 'src/engine/server');
  const out: EngineRoute[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const prefixes = /const PREFIXES = \[([^\]]*)\]/.exec(text)?.[1]?.match(/'[^']*'/g)?.map((s) => s.slice(1, -1)) ?? [];
    for (const m of text.matchAll(/\br\.add\(\s*'([A-Z]+)',\s*(?:api\('([^']+)'\)|`\$\{prefix\}([^`]+)`|'([^']+)')/g)) {
      if (m[2] !== undefined) out.push({ method: m[1]!, pattern: `/api/v1/${m[2]}` });
      else if (m[3] !== undefined) for (const p of prefixes) out.push({ method: m[1]!, pattern: `${p}${m[3]}` });
      else out.push({ method: m[1]!, pattern: m[4]! });
    }
  }
  return out;
}

/** Nested arrays `depth` deep, as JSON text (JSON.stringify of such a value would overflow the stack). */
export function deepJson(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** Values of every JSON type a field may wrongly get: wrong types, huge and odd numbers, odd strings. */
export function awkwardValues(): unknown[] {
  return [
    null,
    true,
    '',
    'x',
    [],
    {},
    [[[[]]]],
    { a: { b: { c: {} } } },
    0,
    -1,
    0.5,
    -0,
    1e308,
    -1e308,
    5e-324,
    2 ** 31,
    2 ** 53 + 2,
    9_000_000_000_000,
    1_000_000,
    '9000000000000',
    'NaN',
    '\u0000\u0001\u001f',
    '\ud800', // a lone surrogate
    '😀'.repeat(50),
    'ﷺ\u202e\u200b',
    '../../../../etc/passwd',
    'tinker://../x/weights/..',
    '%E0%A4%A',
    '<|im_start|><|im_end|><|endoftext|>',
    'x'.repeat(1 << 20), // 1 MB
    Array.from({ length: 200_000 }, (_, i) => i % 250),
    Array.from({ length: 1000 }, () => ({})),
  ];
}
