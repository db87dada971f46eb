// Export from a tinker:// path: the CLI's runExport asks the service for the archive link through a
// stand-in of the service's archive URL route (503 while the archive is built, retried; then 302 with
// Location and Expires), downloads the tar of a fixture checkpoint from the stand-in's storage, and
// writes the PEFT adapter. Then a base model fetched from a stand-in of the Hugging Face hub.
// Everything else goes to the real embedded engine (the service client connects to it).
import * as assert from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runExport } from '../../../src/cli/export';
import { downloadHubModel } from '../../../src/core/export/hubModel';
import { ServiceClient } from '../../../src/core/tinker/client';
import { startEngine } from '../tinker/engineFixtures';
import { FIXTURES, tensorHashes } from './merge.test';

/** A ustar archive of the files (name → bytes). */
function tar(files: Record<string, Buffer>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, data] of Object.entries(files)) {
    const h = Buffer.alloc(512);
    h.write(name, 0, 'ascii');
    h.write('0000644\0', 100, 'ascii');
    h.write('0000000\0', 108, 'ascii');
    h.write('0000000\0', 116, 'ascii');
    h.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    h.write(`${'0'.repeat(11)}\0`, 136, 'ascii');
    h.write('        ', 148, 'ascii');
    h.write('0', 156, 'ascii');
    h.write('ustar\0', 257, 'ascii');
    h.write('00', 263, 'ascii');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    parts.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

async function shut(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

describe('export: from a tinker:// path and a hub base (stand-ins of the archive route and the hub)', function () {
  this.timeout(60_000);
  let dir: string;
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let front: http.Server;
  let client: ServiceClient;
  const seen: string[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'export-download-'));
    engine = await startEngine(path.join(dir, 'engine'));
    const enginePort = Number(new URL(engine.server.url).port);
    const ckpt = path.join(FIXTURES, 'qwen3', 'checkpoint');
    const archive = tar(Object.fromEntries(fs.readdirSync(ckpt).map((f) => [f, fs.readFileSync(path.join(ckpt, f))])));
    let asked = 0;
    // stand-in of the service's archive URL route (and its storage); every other request goes to the engine
    front = http.createServer((req, res) => {
      if (/\/archive$/.test(req.url ?? '')) {
        asked++;
        seen.push(asked === 1 ? '503' : '302');
        if (asked === 1) return void res.writeHead(503, { 'retry-after': '0' }).end();
        return void res.writeHead(302, { location: `http://127.0.0.1:${frontPort}/storage/ckpt.tar`, expires: new Date(Date.now() + 600_000).toUTCString() }).end();
      }
      if (req.url === '/storage/ckpt.tar') return void res.writeHead(200, { 'content-length': archive.length }).end(archive);
      const up = http.request({ host: '127.0.0.1', port: enginePort, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${enginePort}` } }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    const frontPort = await listen(front);
    client = await ServiceClient.connect({ baseUrl: `http://127.0.0.1:${frontPort}`, clientVersion: 'test' });
  });
  after(async () => {
    client?.close();
    if (front) await shut(front);
    await engine?.server.close();
    await engine?.backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('CLI export merge of a tinker:// path: waits out a 503, follows the 302, merges the downloaded checkpoint', async () => {
    let out = '';
    let err = '';
    const code = await runExport(
      { command: 'export', kind: 'merge', checkpoint: 'tinker://run-x/sampler_weights/final', output: path.join(dir, 'merged'), base: path.join(FIXTURES, 'qwen3', 'base') },
      { out: (t) => (out += t), err: (t) => (err += t), connect: async () => client },
    );
    assert.strictEqual(code, 0, err);
    assert.deepStrictEqual(seen, ['503', '302']);
    assert.match(out, /merged model of Qwen\/Qwen3-8B/);
    const golden = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'goldens.json'), 'utf8')).families.qwen3.bases.base.tensors;
    assert.deepStrictEqual(await tensorHashes(path.join(dir, 'merged')), golden);
    assert.match(fs.readFileSync(path.join(dir, 'merged', 'README.md'), 'utf8'), /tinker_path: tinker:\/\/run-x\/sampler_weights\/final/);
  });

  it('fetches a base model from a hub stand-in (file list, then each file) into a folder named for the repo', async () => {
    const base = path.join(FIXTURES, 'llama_tied', 'base');
    const files = fs.readdirSync(base);
    const hub = http.createServer((req, res) => {
      if (req.url === '/api/models/meta-llama/Llama-3.2-1B') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ siblings: [...files, 'original/consolidated.pth', 'LICENSE'].map((rfilename) => ({ rfilename })) }));
      }
      const m = /^\/meta-llama\/Llama-3\.2-1B\/resolve\/main\/(.+)$/.exec(req.url ?? '');
      if (m && files.includes(m[1]!)) return void res.writeHead(200).end(fs.readFileSync(path.join(base, m[1]!)));
      res.writeHead(404).end();
    });
    const port = await listen(hub);
    try {
      const got = await downloadHubModel({ repo: 'meta-llama/Llama-3.2-1B', destDir: path.join(dir, 'hub'), endpoint: `http://127.0.0.1:${port}`, network: { env: {} } });
      assert.strictEqual(got.dir, path.join(dir, 'hub', 'meta-llama--Llama-3.2-1B'));
      assert.deepStrictEqual(fs.readdirSync(got.dir).sort(), [...files].sort());
      const ac = new AbortController();
      await assert.rejects(
        downloadHubModel({ repo: 'meta-llama/Llama-3.2-1B', destDir: path.join(dir, 'hub2'), endpoint: `http://127.0.0.1:${port}`, network: { env: {} }, signal: ac.signal, onProgress: () => ac.abort() }),
        (e: Error) => e.name === 'AbortError',
      );
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, 'hub2')), [], 'a cancelled download leaves nothing');
    } finally {
      await shut(hub);
    }
  });
});
