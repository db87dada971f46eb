// A stand-in of the Hugging Face datasets-server (the real one is on the internet, which tests never
// reach): /splits and /rows over the small benchmark fixtures in test/fixtures/benchmarks/hub/, written
// for the tests in each dataset's row format. It counts the requests it answers, so a test can tell a
// cached load from a download.
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';

const HUB_FIXTURES = path.resolve(__dirname, '../../../../test/fixtures/benchmarks/hub');

type Rows = Array<Record<string, unknown>>;

export class DatasetsServerStandIn {
  readonly requests: URL[] = [];
  url = '';
  private readonly data = new Map<string, Record<string, Record<string, Rows>>>();
  private readonly server = http.createServer((req, res) => this.answer(req, res));

  constructor() {
    for (const f of fs.readdirSync(HUB_FIXTURES).filter((x) => x.endsWith('.json'))) {
      const d = JSON.parse(fs.readFileSync(path.join(HUB_FIXTURES, f), 'utf8')) as { dataset: string; configs: Record<string, Record<string, Rows>> };
      this.data.set(d.dataset, d.configs);
    }
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    this.requests.push(url);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const q = (k: string) => url.searchParams.get(k) ?? '';
    const dataset = this.data.get(q('dataset'));
    if (!dataset) return send(404, { error: 'The dataset does not exist, or is not accessible without authentication (private or gated).' });
    if (url.pathname === '/splits')
      return send(200, { splits: Object.entries(dataset).flatMap(([config, splits]) => Object.keys(splits).map((split) => ({ dataset: q('dataset'), config, split }))), pending: [], failed: [] });
    if (url.pathname === '/rows') {
      const rows = dataset[q('config')]?.[q('split')];
      if (!rows) return send(404, { error: 'Not found.' });
      const offset = Number(q('offset'));
      const length = Math.min(Number(q('length')), 100);
      return send(200, {
        features: [],
        rows: rows.slice(offset, offset + length).map((row, k) => ({ row_idx: offset + k, row, truncated_cells: [] })),
        num_rows_total: rows.length,
        num_rows_per_page: 100,
        partial: false,
      });
    }
    send(404, { error: 'Not found.' });
  }
}
