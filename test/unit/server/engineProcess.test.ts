// The engine as the extension runs it: `dist/engine.js` in its own process, started by the launcher,
// answering over HTTP, stopped with SIGTERM. Needs `npm run build` first (npm test does it).
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startEngineProcess } from '../../../src/engine/launcher';

const root = path.resolve(__dirname, '../../../..');

describe('engine process (dist/engine.js)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-engine-proc-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prints its URL, serves the protocol, and stops cleanly on SIGTERM', async () => {
    const lines: string[] = [];
    const proc = await startEngineProcess({ entry: path.join(root, 'dist/engine.js'), dataDir: path.join(dir, 'data'), onLog: (l) => lines.push(l) });
    assert.match(proc.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(lines.some((l) => l === `Tinker engine listening on ${proc.url}`));
    const auth = { headers: { 'x-api-key': proc.apiKey } };
    assert.strictEqual((await fetch(`${proc.url}/api/v1/healthz`)).status, 401, 'no token, no answer');
    const health = (await (await fetch(`${proc.url}/api/v1/healthz`, auth)).json()) as { status: string };
    assert.deepStrictEqual(health, { status: 'ok' });
    const caps = (await (await fetch(`${proc.url}/api/v1/get_server_capabilities`, auth)).json()) as { supported_models: Array<{ model_name: string }> };
    assert.ok(caps.supported_models.some((m) => m.model_name === 'tinker-studio/random-gpt'));
    await proc.stop();
    assert.strictEqual(await proc.exited, 0);
    await assert.rejects(fetch(`${proc.url}/api/v1/healthz`));
  });

  it('reports a start failure in the engine\'s own words', async () => {
    const bad = path.join(dir, 'file-not-dir');
    fs.writeFileSync(bad, 'x');
    await assert.rejects(
      startEngineProcess({ entry: path.join(root, 'dist/engine.js'), dataDir: bad }),
      (e: unknown) => /exited with code 1 before it was ready/.test((e as Error).message) && /engine: /.test((e as Error).message),
    );
  });
});
