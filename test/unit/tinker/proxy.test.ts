// The client behind an HTTP proxy: `http.proxy`, else HTTPS_PROXY / HTTP_PROXY, NO_PROXY and
// `http.noProxy` exceptions, `http.proxyStrictSSL`, proxy credentials, and the local engine always
// reached directly. A real proxy (test/unit/tinker/connectProxy.ts) sits in front of a TLS front
// (a self-signed certificate for tinker-engine.test, test/fixtures/tls) in front of the embedded engine.
import * as assert from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceClient, ServiceClientOptions } from '../../../src/core/tinker/client';
import { ConnectionError } from '../../../src/core/tinker/errors';
import { ProxyConfigError, chooseRoute, describeProxy } from '../../../src/core/tinker/proxy';
import { RecordingProxy, startRecordingProxy } from './connectProxy';
import { startEngine } from './engineFixtures';
import { FRONT_NAME as NAME, TlsFront, startTlsFront } from './tlsFront';

const TOKEN = `tml-local-proxy-test-${'k'.repeat(24)}`;

describe('tinker client: proxies', function () {
  this.timeout(60_000);

  describe('choosing the route', () => {
    const proxy = 'http://proxy.corp:3128';
    it('the http.proxy setting wins over the environment', () => {
      const r = chooseRoute('https://tinker.example.com/x', { proxy, env: { HTTPS_PROXY: 'http://other:1' } });
      assert.deepStrictEqual(r, { kind: 'proxy', proxy, source: 'http.proxy' });
    });
    it('https targets take HTTPS_PROXY (either case), else HTTP_PROXY; http targets only HTTP_PROXY', () => {
      assert.deepStrictEqual(chooseRoute('https://a.example', { env: { https_proxy: proxy, HTTP_PROXY: 'http://h:1' } }), { kind: 'proxy', proxy, source: 'HTTPS_PROXY' });
      assert.deepStrictEqual(chooseRoute('https://a.example', { env: { HTTP_PROXY: proxy } }), { kind: 'proxy', proxy, source: 'HTTP_PROXY' });
      assert.deepStrictEqual(chooseRoute('http://a.example', { env: { HTTPS_PROXY: proxy } }), { kind: 'direct', why: 'no proxy configured' });
    });
    it('this machine is never reached through the proxy, whatever NO_PROXY says', () => {
      for (const u of ['http://127.0.0.1:8000', 'http://127.3.2.1:1', 'http://localhost:9', 'http://[::1]:9', 'https://engine.localhost']) {
        assert.deepStrictEqual(chooseRoute(u, { proxy, env: { NO_PROXY: '' } }), { kind: 'direct', why: 'loopback' }, u);
      }
    });
    it('NO_PROXY and http.noProxy: names with their subdomains, ports, IPs and *', () => {
      const go = (u: string, noProxy: string, setting: string[] = []) => chooseRoute(u, { proxy, noProxy: setting, env: { NO_PROXY: noProxy } }).kind;
      assert.strictEqual(go('https://a.corp.example', '.corp.example'), 'direct');
      assert.strictEqual(go('https://corp.example', '*.corp.example'), 'direct');
      assert.strictEqual(go('https://xcorp.example', 'corp.example'), 'proxy');
      assert.strictEqual(go('https://a.example:8443', 'a.example:8443'), 'direct');
      assert.strictEqual(go('https://a.example', 'a.example:8443'), 'proxy');
      assert.strictEqual(go('https://a.example', 'a.example:443'), 'direct');
      assert.strictEqual(go('https://10.1.2.3:9', 'foo, 10.1.2.3'), 'direct');
      assert.strictEqual(go('https://[fd00::5]:9', '[fd00::5]'), 'direct');
      assert.strictEqual(go('https://anything.example', '*'), 'direct');
      assert.strictEqual(go('https://a.example', '', ['a.example']), 'direct');
      assert.strictEqual(chooseRoute('https://a.example', { proxy, env: { no_proxy: 'a.example' } }).kind, 'direct');
    });
    it('a proxy value that is not a URL is refused without repeating it (it may hold a password)', () => {
      assert.throws(
        () => chooseRoute('https://a.example', { proxy: 'user:s3cret-pass@proxy' }),
        (e: Error) => e instanceof ProxyConfigError && /http\.proxy/.test(e.message) && !e.message.includes('s3cret'),
      );
      assert.strictEqual(describeProxy('http://u:s3cret-pass@proxy.corp:3128'), 'http://proxy.corp:3128');
    });
  });

  describe('through a real proxy', () => {
    let dir: string;
    let engine: Awaited<ReturnType<typeof startEngine>>;
    let front: TlsFront;
    let frontPort: number;
    let cert: string;
    let proxy: RecordingProxy;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-proxy-'));
      front = await startTlsFront(() => engine.server.port);
      ({ port: frontPort, cert } = front);
      engine = await startEngine(dir, { apiKey: TOKEN, allowedHosts: [`${NAME}:${frontPort}`] });
    });
    after(async () => {
      await front.close();
      await engine.server.close();
      await engine.backend.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      proxy = await startRecordingProxy({ names: { [NAME]: '127.0.0.1' } });
    });
    afterEach(async () => {
      await proxy.close();
    });

    const remote = () => `https://${NAME}:${frontPort}`;
    const connect = (o: Partial<ServiceClientOptions>) =>
      ServiceClient.connect({ baseUrl: remote(), apiKey: TOKEN, clientVersion: 'test', maxRetries: 0, submissionBudgetMs: 0, requestTimeoutMs: 20_000, ...o });
    const noKeyIn = (text: string, what: string) => assert.ok(!text.includes(TOKEN) && !text.includes(TOKEN.slice(10, 40)), `${what} holds the key: ${text}`);
    const noKeyInRecords = () => {
      for (const r of proxy.records) noKeyIn(JSON.stringify(r), 'a proxy record');
      noKeyIn(proxy.relayed().toString('latin1'), 'the relayed bytes');
    };

    it('http.proxy: the client tunnels to the server through the proxy, which sees neither the key nor the requests', async () => {
      const client = await connect({ network: { proxy: proxy.url, ca: [cert], env: {} } });
      try {
        assert.ok((await client.capabilities()).supported_models.length > 0);
        assert.deepStrictEqual(client.transport.route, { kind: 'proxy', proxy: proxy.url, source: 'http.proxy' });
      } finally {
        client.close();
      }
      assert.ok(proxy.records.length > 0, 'the proxy saw nothing');
      for (const r of proxy.records) {
        assert.strictEqual(r.method, 'CONNECT');
        assert.strictEqual(r.target, `${NAME}:${frontPort}`);
        assert.strictEqual(r.status, 200);
      }
      assert.ok(proxy.relayed().length > 0);
      noKeyInRecords();
      assert.ok(!proxy.relayed().includes('create_session'), 'the proxy could read the requests');
    });

    it('HTTPS_PROXY from the environment (the CLI), and NO_PROXY sends the request around it', async () => {
      const client = await connect({ network: { ca: [cert], env: { HTTPS_PROXY: proxy.url } } });
      try {
        assert.ok((await client.capabilities()).supported_models.length > 0);
        assert.strictEqual(client.transport.route?.kind === 'proxy' && client.transport.route.source, 'HTTPS_PROXY');
      } finally {
        client.close();
      }
      const seen = proxy.records.length;
      assert.ok(seen > 0);
      // bypassing the proxy, the name does not resolve on this machine: the request fails, the proxy never sees it
      await assert.rejects(connect({ network: { ca: [cert], env: { HTTPS_PROXY: proxy.url, NO_PROXY: `localhost,${NAME}` } } }), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        noKeyIn(e.message, 'the error');
        return true;
      });
      assert.strictEqual(proxy.records.length, seen);
    });

    it('the local engine is reached directly even with a proxy set', async () => {
      const client = await ServiceClient.connect({ baseUrl: engine.server.url, apiKey: TOKEN, clientVersion: 'test', network: { proxy: proxy.url, env: { HTTP_PROXY: proxy.url } } });
      try {
        assert.ok((await client.capabilities()).supported_models.length > 0);
        assert.deepStrictEqual(client.transport.route, { kind: 'direct', why: 'loopback' });
      } finally {
        client.close();
      }
      assert.deepStrictEqual(proxy.records, []);
    });

    it('http.proxyStrictSSL: an unknown certificate is refused unless it is false', async () => {
      await assert.rejects(connect({ network: { proxy: proxy.url, env: {} } }), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.match(e.message, /certificate/i);
        assert.match(e.message, /through the proxy http:\/\/127\.0\.0\.1:\d+ \(http\.proxy\)/);
        noKeyIn(e.message, 'the error');
        return true;
      });
      const client = await connect({ network: { proxy: proxy.url, strictSSL: false, env: {} } });
      try {
        assert.ok((await client.capabilities()).supported_models.length > 0);
      } finally {
        client.close();
      }
      noKeyInRecords();
    });

    it('proxy credentials: sent to the proxy, never shown in an error', async () => {
      await proxy.close();
      const password = 'proxy-pass-7f3a9';
      proxy = await startRecordingProxy({ names: { [NAME]: '127.0.0.1' }, credentials: { user: 'alice', password } });
      const wrong = proxy.url.replace(password, 'wrong-pass-1234');
      await assert.rejects(connect({ network: { proxy: wrong, ca: [cert], env: {} } }), (e: Error) => {
        assert.ok(e instanceof ConnectionError, String(e));
        assert.ok(!e.message.includes('wrong-pass-1234'), e.message);
        noKeyIn(e.message, 'the error');
        return true;
      });
      assert.strictEqual(proxy.records.at(-1)?.status, 407);
      const client = await connect({ network: { proxy: proxy.url, ca: [cert], env: {} } });
      try {
        assert.ok((await client.capabilities()).supported_models.length > 0);
      } finally {
        client.close();
      }
      assert.strictEqual(proxy.records.at(-1)?.status, 200);
      noKeyInRecords();
    });
  });
});
