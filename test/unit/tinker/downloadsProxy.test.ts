// The downloads besides the client's own requests take the client's route: tokenizer files from the
// hub, dataset pages from the datasets-server and checkpoint archives go through the real proxy
// (connectProxy.ts) when one is configured, and straight to this machine when the host is loopback.
// The remote hosts are stand-ins on 127.0.0.1 under names only the proxy resolves (*.test), so a
// request that skipped the proxy could not reach them.
import * as assert from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadCheckpoint } from '../../../src/core/checkpoints/download';
import { fetchHfRows } from '../../../src/core/data/hf';
import { ensureTokenizerFiles } from '../../../src/core/render/hub';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { QWEN3_DIR } from '../render/fixtures';
import { RecordingProxy, startRecordingProxy } from './connectProxy';
import { startEngine } from './engineFixtures';

const HUB = 'hub.test';
const STORAGE = 'storage.test';

/** A stand-in of the hub and the datasets-server: Qwen/Qwen3-8B's tokenizer files and a 3-row dataset. */
function hubStandIn(): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/Qwen\/Qwen3-8B\/resolve\/main\/(tokenizer\.json|tokenizer_config\.json)$/.exec(url.pathname);
    if (file) {
      res.writeHead(200, { 'content-type': 'application/json' });
      fs.createReadStream(path.join(QWEN3_DIR, file[1]!)).pipe(res);
      return;
    }
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/splits') return json({ splits: [{ dataset: 'acme/sums', config: 'default', split: 'train' }] });
    if (url.pathname === '/rows') {
      const rows = [1, 2, 3].map((i) => ({ row_idx: i - 1, row: { question: `${i}+1?`, answer: String(i + 1) }, truncated_cells: [] }));
      return json({ rows, num_rows_total: 3 });
    }
    res.writeHead(404).end();
  });
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

async function shut(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

describe('downloads through the proxy: tokenizer files, dataset pages, checkpoint archives', function () {
  this.timeout(60_000);
  let dir: string;
  let hub: http.Server;
  let hubPort: number;
  let proxy: RecordingProxy;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-downloads-proxy-'));
    hub = hubStandIn();
    hubPort = await listen(hub);
  });
  after(async () => {
    await shut(hub);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    proxy = await startRecordingProxy({ names: { [HUB]: '127.0.0.1', [STORAGE]: '127.0.0.1' } });
  });
  afterEach(async () => {
    await proxy.close();
  });

  const cache = (name: string) => fs.mkdtempSync(path.join(dir, `${name}-`));
  /** every request the proxy was asked went to `hostPort` and was served */
  const allThroughProxyTo = (hostPort: string) => {
    assert.ok(proxy.records.length > 0, 'the proxy saw nothing');
    for (const r of proxy.records) {
      assert.ok(r.target.includes(hostPort), `the proxy was asked for ${r.target}`);
      assert.strictEqual(r.status, 200);
    }
  };

  it('tokenizer files: through http.proxy, and not at all without it (the name resolves only at the proxy)', async () => {
    const endpoint = `http://${HUB}:${hubPort}`;
    const got = await ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir: cache('tok'), endpoint, network: { proxy: proxy.url, env: {} } });
    assert.deepStrictEqual(got.fetched, ['tokenizer.json', 'tokenizer_config.json']);
    assert.strictEqual(fs.readFileSync(path.join(got.dir, 'tokenizer.json'), 'utf8'), fs.readFileSync(path.join(QWEN3_DIR, 'tokenizer.json'), 'utf8'));
    allThroughProxyTo(`${HUB}:${hubPort}`);
    const seen = proxy.records.length;
    await assert.rejects(ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir: cache('tok'), endpoint, network: { env: {} } }), /could not download the tokenizer/);
    assert.strictEqual(proxy.records.length, seen);
  });

  it('tokenizer files: HTTP_PROXY from the environment (the CLI); a loopback hub is reached directly', async () => {
    const viaEnv = await ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir: cache('tok'), endpoint: `http://${HUB}:${hubPort}`, network: { env: { HTTP_PROXY: proxy.url } } });
    assert.strictEqual(viaEnv.fetched.length, 2);
    allThroughProxyTo(`${HUB}:${hubPort}`);
    const seen = proxy.records.length;
    const local = await ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir: cache('tok'), endpoint: `http://127.0.0.1:${hubPort}`, network: { proxy: proxy.url, env: { HTTP_PROXY: proxy.url } } });
    assert.strictEqual(local.fetched.length, 2);
    assert.strictEqual(proxy.records.length, seen, 'a loopback hub went through the proxy');
  });

  it('dataset pages: through the proxy when configured, around it for NO_PROXY, directly for loopback', async () => {
    const endpoint = `http://${HUB}:${hubPort}`;
    const got = await fetchHfRows({ dataset: 'acme/sums', split: 'train' }, { cacheDir: cache('ds'), endpoint, network: { proxy: proxy.url, env: {} } });
    assert.strictEqual(got.config, 'default');
    assert.deepStrictEqual(got.rows.map((r) => r.row.answer), ['2', '3', '4']);
    allThroughProxyTo(`${HUB}:${hubPort}`);
    const seen = proxy.records.length;
    // bypassed by NO_PROXY, the name does not resolve here: the request fails and never reaches the proxy
    await assert.rejects(
      fetchHfRows({ dataset: 'acme/sums', split: 'train' }, { cacheDir: cache('ds'), endpoint, network: { proxy: proxy.url, env: { NO_PROXY: HUB } } }),
      /cannot reach the Hugging Face datasets-server/,
    );
    assert.strictEqual(proxy.records.length, seen);
    const local = await fetchHfRows({ dataset: 'acme/sums', split: 'train' }, { cacheDir: cache('ds'), endpoint: `http://127.0.0.1:${hubPort}`, network: { proxy: proxy.url, env: {} } });
    assert.strictEqual(local.rows.length, 3);
    assert.strictEqual(proxy.records.length, seen, 'a loopback datasets-server went through the proxy');
  });

  describe('checkpoint archives', () => {
    let engine: Awaited<ReturnType<typeof startEngine>>;
    let client: ServiceClient;
    let front: http.Server;
    let frontClient: ServiceClient;
    let checkpoint: string;

    before(async () => {
      engine = await startEngine(path.join(dir, 'engine'));
      const enginePort = Number(new URL(engine.server.url).port);
      // a front before the engine that hands out archive links on a remote storage host, as the cloud does
      front = http.createServer((req, res) => {
        const up = http.request({ host: '127.0.0.1', port: enginePort, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${enginePort}` } }, (r) => {
          const headers = { ...r.headers };
          if (headers.location) headers.location = headers.location.replace(engine.server.url, `http://${STORAGE}:${frontPort}`);
          res.writeHead(r.statusCode ?? 502, headers);
          r.pipe(res);
        });
        up.on('error', () => res.writeHead(502).end());
        req.pipe(up);
      });
      const frontPort = await listen(front);
      client = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' });
      frontClient = await ServiceClient.connect({ baseUrl: `http://127.0.0.1:${frontPort}`, clientVersion: 'test' });
      const tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
      checkpoint = (await (await tc.saveWeightsForSampler('dl')).result()).path!;
    });
    after(async () => {
      client?.close();
      frontClient?.close();
      if (front) await shut(front);
      await engine?.server.close();
      await engine?.backend.close();
    });

    it('a remote archive link is downloaded through the proxy, and fails without it', async () => {
      const r = await downloadCheckpoint(frontClient, checkpoint, cache('dl'), { network: { proxy: proxy.url, env: {} } });
      assert.ok(r.files.includes('adapter_config.json'), r.files.join(', '));
      allThroughProxyTo(`${STORAGE}:`);
      const seen = proxy.records.length;
      await assert.rejects(downloadCheckpoint(frontClient, checkpoint, cache('dl'), { network: { env: {} } }), /could not connect/);
      assert.strictEqual(proxy.records.length, seen);
    });

    it('the local engine\'s archive link is downloaded directly even with a proxy set', async () => {
      const r = await downloadCheckpoint(client, checkpoint, cache('dl'), { network: { proxy: proxy.url, env: { HTTP_PROXY: proxy.url } } });
      assert.ok(r.files.includes('adapter_config.json'));
      assert.deepStrictEqual(proxy.records, []);
    });
  });
});
