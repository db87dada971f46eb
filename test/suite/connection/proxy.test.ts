// VS Code's own proxy settings reach the Tinker client: with `http.proxy` set (and
// `http.proxyStrictSSL` off for the test's self-signed front), the window's connection to a custom
// https server goes through a real CONNECT proxy, which sees the server's name but not the key.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { TinkerConnection } from '../../../src/vscode/connection/connection';
import { LocalEngine } from '../../../src/vscode/connection/localEngine';
import { readBackendFor } from '../../../src/vscode/common/settings';
import { TrustedServers } from '../../../src/vscode/connection/trustedServers';
import { startRecordingProxy } from '../../unit/tinker/connectProxy';
import { startEngine } from '../../unit/tinker/engineFixtures';
import { FRONT_NAME as NAME, startTlsFront } from '../../unit/tinker/tlsFront';
import { MemoryMemento, activateExtension } from '../helpers';

const KEY = 'tml-host-proxy-test-secret-0123456789';

suite('VS Code proxy settings', function () {
  this.timeout(120_000);

  test('http.proxy: the connection to a custom server goes through the proxy, which never sees the key', async () => {
    const api = await activateExtension();
    const log = api.runner.s.log;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-host-proxy-'));
    const front = await startTlsFront(() => engine.server.port);
    const frontPort = front.port;
    const engine = await startEngine(dir, { apiKey: KEY, allowedHosts: [`${NAME}:${frontPort}`] });
    const proxy = await startRecordingProxy({ names: { [NAME]: '127.0.0.1' } });
    const http = vscode.workspace.getConfiguration('http');
    await http.update('proxy', proxy.url, vscode.ConfigurationTarget.Global);
    await http.update('proxyStrictSSL', false, vscode.ConfigurationTarget.Global);
    const engineHome = new LocalEngine(os.tmpdir(), vscode.Uri.file(dir), log);
    const connection = new TinkerConnection(engineHome, { get: async () => ({ key: KEY, source: 'secret-storage' }) }, log, '0.0.0-test', new TrustedServers(new MemoryMemento(), async () => true));
    try {
      const client = await connection.open(await readBackendFor('custom', `https://${NAME}:${frontPort}`));
      try {
        assert.ok((await client.capabilities()).supported_models.length > 0);
        assert.deepStrictEqual(client.transport.route, { kind: 'proxy', proxy: proxy.url, source: 'http.proxy' });
      } finally {
        client.close();
      }
      assert.ok(proxy.records.length > 0, 'the proxy saw the connection');
      for (const r of proxy.records) assert.deepStrictEqual([r.method, r.target, r.status], ['CONNECT', `${NAME}:${frontPort}`, 200]);
      assert.ok(!JSON.stringify(proxy.records).includes(KEY) && !proxy.relayed().toString('latin1').includes(KEY), 'the proxy could read the key');
    } finally {
      connection.dispose();
      engineHome.dispose();
      await http.update('proxy', undefined, vscode.ConfigurationTarget.Global);
      await http.update('proxyStrictSSL', undefined, vscode.ConfigurationTarget.Global);
      await proxy.close();
      await front.close();
      await engine.server.close();
      await engine.backend.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
