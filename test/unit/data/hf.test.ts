// Hugging Face datasets through the datasets-server API, against a stand-in of the datasets-server
// API on 127.0.0.1 (the real one is on the internet, which tests never reach): pagination, config
// discovery, the on-disk cache, retries and the errors a person sees.
import * as assert from 'assert';
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { fetchHfRows } from '../../../src/core/data/hf';
import { loadPromptPool } from '../../../src/core/data/pool';
import { DatasetSpec } from '../../../src/core/grpo/spec';

type Rows = Array<Record<string, unknown>>;

/** A stand-in of the datasets-server API: /splits and /rows over an in-memory table, logging requests. */
class DatasetsServerStandIn {
  readonly requests: URL[] = [];
  /** answers to give before the real one, by path ("/rows"): status and body */
  readonly failures: Array<{ path: string; status: number; body: string; headers?: Record<string, string> }> = [];
  /** cells reported as truncated, by "<offset-independent row index>" */
  readonly truncated = new Map<number, string[]>();
  private server = http.createServer((req, res) => this.answer(req, res));
  url = '';

  constructor(readonly data: Record<string, Record<string, Record<string, Rows>>>) {}

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    this.requests.push(url);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const failure = this.failures.findIndex((f) => f.path === url.pathname);
    if (failure >= 0) {
      const [f] = this.failures.splice(failure, 1);
      return send(f!.status, f!.body, f!.headers);
    }
    const q = (k: string) => url.searchParams.get(k) ?? '';
    const dataset = this.data[q('dataset')];
    if (!dataset) return send(404, { error: 'The dataset does not exist, or is not accessible without authentication (private or gated).' });
    if (url.pathname === '/splits')
      return send(200, {
        splits: Object.entries(dataset).flatMap(([config, splits]) => Object.keys(splits).map((split) => ({ dataset: q('dataset'), config, split }))),
        pending: [],
        failed: [],
      });
    if (url.pathname === '/rows') {
      const rows = dataset[q('config')]?.[q('split')];
      if (!rows) return send(404, { error: 'Not found.' });
      const offset = Number(q('offset'));
      const length = Math.min(Number(q('length')), 100);
      return send(200, {
        features: [],
        rows: rows.slice(offset, offset + length).map((row, k) => ({ row_idx: offset + k, row, truncated_cells: this.truncated.get(offset + k) ?? [] })),
        num_rows_total: rows.length,
        num_rows_per_page: 100,
        partial: false,
      });
    }
    send(404, { error: 'Not found.' });
  }
}

const problems = (n: number): Rows => Array.from({ length: n }, (_, i) => ({ question: `What is ${i} + 1?`, answer: String(i + 1) }));

describe('Hugging Face datasets, through a stand-in of the datasets-server API', () => {
  let server: DatasetsServerStandIn;
  let cacheDir: string;
  beforeEach(async () => {
    server = new DatasetsServerStandIn({
      'acme/sums': { default: { train: problems(250), test: problems(20) } },
      'acme/two-configs': { main: { train: problems(3) }, socratic: { train: problems(3) } },
      'acme/big-rows': { default: { train: problems(3) } },
    });
    await server.start();
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-hf-'));
  });
  afterEach(async () => {
    await server.stop();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  const load = (dataset: unknown, extra: { seed?: number; signal?: AbortSignal } = {}) =>
    loadPromptPool(DatasetSpec.parse(dataset), { specDir: cacheDir, seed: extra.seed ?? 0, cacheDir, hubEndpoint: server.url, ...(extra.signal ? { signal: extra.signal } : {}) });

  it('reads every row, 100 at a time, after finding the config from /splits', async () => {
    const progress: Array<[number, number]> = [];
    const { rows, config } = await fetchHfRows(
      { dataset: 'acme/sums', split: 'train' },
      { cacheDir, endpoint: server.url, onProgress: (done, total) => progress.push([done, total]) },
    );
    assert.strictEqual(config, 'default');
    assert.deepStrictEqual(
      rows.map((r) => r.rowIdx),
      Array.from({ length: 250 }, (_, i) => i),
    );
    assert.deepStrictEqual(rows[249]!.row, { question: 'What is 249 + 1?', answer: '250' });
    assert.deepStrictEqual(
      server.requests.map((u) => `${u.pathname} ${u.searchParams.get('offset') ?? ''} ${u.searchParams.get('length') ?? ''}`.trim()).sort(),
      ['/rows 0 100', '/rows 100 100', '/rows 200 100', '/splits'],
    );
    assert.ok(server.requests.filter((u) => u.pathname === '/rows').every((u) => u.searchParams.get('config') === 'default' && u.searchParams.get('split') === 'train'));
    assert.deepStrictEqual(progress.at(-1), [250, 250]);
  });

  it('a second load reads the cache and makes no request', async () => {
    const first = await load({ hf: { dataset: 'acme/sums' } });
    const before = server.requests.length;
    assert.ok(before > 0);
    const second = await load({ hf: { dataset: 'acme/sums' } });
    assert.strictEqual(server.requests.length, before);
    assert.deepStrictEqual(second, first);
    const cached = fs.readdirSync(path.join(cacheDir, 'hf-datasets'), { recursive: true }).map(String);
    assert.ok(!cached.some((f) => f.endsWith('.tmp')), 'no temporary file is left behind');
  });

  it('a damaged cache file is fetched again', async () => {
    await fetchHfRows({ dataset: 'acme/sums', config: 'default', split: 'test' }, { cacheDir, endpoint: server.url });
    const file = path.join(cacheDir, 'hf-datasets', 'acme%2Fsums', 'default', 'test.json');
    fs.writeFileSync(file, '{"version": 1, "rows": [');
    const before = server.requests.length;
    const { rows } = await fetchHfRows({ dataset: 'acme/sums', config: 'default', split: 'test' }, { cacheDir, endpoint: server.url });
    assert.strictEqual(rows.length, 20);
    assert.strictEqual(server.requests.length, before + 1);
  });

  it('turns rows into problems with ids "<dataset>/<config>/<split>:<row>", split and shuffled by seed', async () => {
    const pool = await load({ hf: { dataset: 'acme/sums', split: 'test' }, holdout: { fraction: 0.25 }, system_prompt: 'Add.' }, { seed: 5 });
    assert.strictEqual(pool.holdout.length, 5);
    assert.strictEqual(pool.train.length, 15);
    assert.ok([...pool.train, ...pool.holdout].every((p) => /^acme\/sums\/default\/test:\d+$/.test(p.id)));
    const p = [...pool.train, ...pool.holdout].find((x) => x.id.endsWith(':3'))!;
    assert.deepStrictEqual(p.messages, [
      { role: 'system', content: 'Add.' },
      { role: 'user', content: 'What is 3 + 1?' },
    ]);
    assert.strictEqual(p.groundTruth, '4');
    const again = await load({ hf: { dataset: 'acme/sums', split: 'test' }, holdout: { fraction: 0.25 }, system_prompt: 'Add.' }, { seed: 5 });
    assert.deepStrictEqual(again, pool);
  });

  it('an unknown dataset is a 404 in the server’s own words', async () => {
    await assert.rejects(load({ hf: { dataset: 'acme/nope' } }), {
      message:
        'dataset.hf: the datasets-server answered 404 for acme/nope: The dataset does not exist, or is not accessible without authentication (private or gated). (check the dataset id, config and split)',
    });
  });

  it('a missing split lists the splits there are', async () => {
    await assert.rejects(load({ hf: { dataset: 'acme/sums', split: 'validation' } }), {
      message: 'dataset.hf.split: acme/sums has no split "validation" (its splits: train, test)',
    });
  });

  it('several configs must be chosen between', async () => {
    await assert.rejects(load({ hf: { dataset: 'acme/two-configs' } }), {
      message: 'dataset.hf.config: acme/two-configs has several configs with a "train" split (main, socratic); name one',
    });
    const pool = await load({ hf: { dataset: 'acme/two-configs', config: 'socratic' } });
    assert.ok(pool.train.every((p) => p.id.startsWith('acme/two-configs/socratic/train:')));
  });

  it('a payload of the wrong shape is reported, not used', async () => {
    server.failures.push({ path: '/rows', status: 200, body: JSON.stringify({ rows: [{ row_idx: 'zero', row: {} }], num_rows_total: 1 }) });
    await assert.rejects(load({ hf: { dataset: 'acme/sums', config: 'default' } }), {
      message: 'dataset.hf: unexpected answer from the datasets-server for acme/sums (config default, split train): rows[0].row_idx: must be a number, not "zero"',
    });
    server.failures.push({ path: '/rows', status: 200, body: '<html>maintenance</html>' });
    await assert.rejects(load({ hf: { dataset: 'acme/sums', config: 'default' } }), {
      message: 'dataset.hf: the datasets-server\'s answer for acme/sums (config default, split train) is not JSON: "<html>maintenance</html>"',
    });
    assert.ok(!fs.existsSync(path.join(cacheDir, 'hf-datasets', 'acme%2Fsums', 'default', 'train.json')), 'nothing was cached');
  });

  it('a busy server (503, 429 with Retry-After) is asked again', async () => {
    server.failures.push({ path: '/rows', status: 503, body: '{"error": "busy"}' });
    server.failures.push({ path: '/rows', status: 429, body: '{"error": "slow down"}', headers: { 'retry-after': '0' } });
    const { rows } = await fetchHfRows({ dataset: 'acme/sums', config: 'default', split: 'test' }, { cacheDir, endpoint: server.url });
    assert.strictEqual(rows.length, 20);
    assert.strictEqual(server.requests.length, 3);
  });

  it('an unreachable server is named in the error', async () => {
    const url = server.url;
    await server.stop();
    server = new DatasetsServerStandIn({});
    await server.start(); // so afterEach has a server to stop
    await assert.rejects(
      fetchHfRows({ dataset: 'acme/sums', config: 'default', split: 'test' }, { cacheDir, endpoint: url }),
      (err: Error) => err.message === `dataset.hf: cannot reach the Hugging Face datasets-server at ${url} (ECONNREFUSED)`,
    );
  });

  it('sends a token as a header and never puts it in an error', async () => {
    const seen: Array<string | undefined> = [];
    const tokenServer = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Unauthorized' }));
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}`;
      await assert.rejects(fetchHfRows({ dataset: 'acme/gated', config: 'default', split: 'train' }, { cacheDir, endpoint: url, token: 'hf_secret123' }), (err: Error) => {
        assert.ok(!err.message.includes('hf_secret123'));
        assert.strictEqual(err.message, 'dataset.hf: the datasets-server answered 401 for acme/gated (config default, split train): Unauthorized (the dataset may be gated or private: it needs a Hugging Face token)');
        return true;
      });
      assert.deepStrictEqual(seen, ['Bearer hf_secret123']);
    } finally {
      await new Promise<void>((resolve) => tokenServer.close(() => resolve()));
    }
  });

  it('a row whose field the server shortened is a bad row, skipped or fatal by the policy', async () => {
    server.truncated.set(1, ['question']);
    await assert.rejects(load({ hf: { dataset: 'acme/big-rows' } }), {
      message:
        'acme/big-rows/default/train:1: field "question" was shortened by the datasets-server (too long to serve whole) (set dataset.on_invalid_line to "skip" to leave such rows out)',
    });
    const pool = await load({ hf: { dataset: 'acme/big-rows' }, on_invalid_line: 'skip' });
    assert.strictEqual(pool.train.length, 2);
    assert.deepStrictEqual(pool.skipped, [{ where: 'acme/big-rows/default/train:1', reason: 'field "question" was shortened by the datasets-server (too long to serve whole)' }]);
  });

  it('stops when the signal is aborted', async () => {
    const ac = new AbortController();
    ac.abort(new Error('cancelled by the user'));
    await assert.rejects(load({ hf: { dataset: 'acme/sums' } }, { signal: ac.signal }), /cancelled by the user/);
  });
});
