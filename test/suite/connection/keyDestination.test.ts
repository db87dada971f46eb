// The API key goes only where the user sent it: a workspace's .vscode/settings.json cannot reroute
// the backend (the settings are application-scoped), and a spec's base_url (or a resumed run's
// config.json, read the same way) reaches the key only after the user confirms that origin. A real
// local HTTP server records every credential header it receives.
import * as assert from 'assert';
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { TinkerConnection } from '../../../src/vscode/connection/connection';
import { LocalEngine } from '../../../src/vscode/connection/localEngine';
import { readBackend, readBackendFor } from '../../../src/vscode/common/settings';
import { TrustedServers } from '../../../src/vscode/connection/trustedServers';
import { MemoryMemento, activateExtension, waitFor, workspaceRoot } from '../helpers';

const KEY = 'tml-host-test-secret-0123456789';

interface Recorder {
  url: string;
  requests: { path: string; credential: string }[];
  close(): Promise<void>;
}

async function recordingServer(): Promise<Recorder> {
  const requests: Recorder['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? '', credential: `${req.headers['x-api-key'] ?? ''} ${req.headers.authorization ?? ''}` });
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"not here"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

suite('the API key goes only where the user sent it', function () {
  this.timeout(60_000);
  let rec: Recorder;
  setup(async () => {
    rec = await recordingServer();
  });
  teardown(async () => {
    await rec.close();
  });

  test("a workspace's .vscode/settings.json cannot choose the backend", async () => {
    await activateExtension();
    const dir = path.join(workspaceRoot(), '.vscode');
    const file = path.join(dir, 'settings.json');
    fs.mkdirSync(dir, { recursive: true });
    // editor.tabSize is a window-scoped sentinel that says VS Code has read the file
    fs.writeFileSync(
      file,
      JSON.stringify({ 'tinker.backend': 'custom', 'tinker.customBaseUrl': rec.url, 'tinker.cloudBaseUrl': rec.url, 'editor.tabSize': 7 }),
    );
    try {
      await waitFor('the workspace settings to be read', () => vscode.workspace.getConfiguration('editor').get('tabSize') === 7);
      const c = vscode.workspace.getConfiguration('tinker');
      assert.strictEqual(c.get('backend'), 'local');
      assert.notStrictEqual(c.get('customBaseUrl'), rec.url);
      assert.deepStrictEqual(await readBackend(), { kind: 'local' });
    } finally {
      fs.rmSync(file, { force: true });
      await waitFor('the workspace settings to be dropped', () => vscode.workspace.getConfiguration('editor').get('tabSize') !== 7);
    }
    assert.deepStrictEqual(rec.requests, []);
  });

  test("a spec's base_url gets no key unless the user confirms that server", async () => {
    const api = await activateExtension();
    const log = api.runner.s.log;
    const asked: string[] = [];
    let answer = false;
    const trusted = new TrustedServers(new MemoryMemento(), async (origin) => {
      asked.push(origin);
      return answer;
    });
    const engine = new LocalEngine(os.tmpdir(), vscode.Uri.file(fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-key-'))), log);
    const connection = new TinkerConnection(engine, { get: async () => ({ key: KEY, source: 'secret-storage' }) }, log, '0.0.0-test', trusted);
    const connectTo = async () => {
      // the recording server answers 404: connecting fails after the requests were made
      await connection.open(await readBackendFor('custom', rec.url)).then(
        (c) => c.close(),
        () => undefined,
      );
    };

    await connectTo();
    assert.deepStrictEqual(asked, [rec.url], 'the user was asked about that origin');
    assert.ok(rec.requests.length > 0, 'the client did talk to the server');
    assert.ok(rec.requests.every((r) => !r.credential.includes(KEY)), `no request carried the key: ${JSON.stringify(rec.requests.map((r) => r.path))}`);

    // confirmed once: the key goes there, and the answer is remembered
    answer = true;
    rec.requests.length = 0;
    await connectTo();
    assert.ok(rec.requests.some((r) => r.credential.includes(KEY)), 'after consent the key is sent');
    answer = false;
    rec.requests.length = 0;
    await connectTo();
    assert.deepStrictEqual(asked, [rec.url, rec.url], 'not asked again');
    assert.ok(rec.requests.some((r) => r.credential.includes(KEY)));

    // forgotten: asked again, and no key without consent
    await trusted.forgetAll();
    rec.requests.length = 0;
    await connectTo();
    assert.strictEqual(asked.length, 3);
    assert.ok(rec.requests.every((r) => !r.credential.includes(KEY)));
  });
});
