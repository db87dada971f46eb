import * as assert from 'assert';
import { resolveBackend } from '../../../src/core/config/backend';
import { classifyKeyDestination, isLoopbackHost, OFFICIAL_ORIGIN, originOf } from '../../../src/core/config/keyOrigin';

describe('where the API key may go', () => {
  it('sends it to the official cloud origin, whatever the path', () => {
    assert.strictEqual(classifyKeyDestination('https://tinker.thinkingmachines.dev/services/tinker-prod', []).kind, 'official');
    assert.strictEqual(classifyKeyDestination(`${OFFICIAL_ORIGIN}/other/path`, []).kind, 'official');
  });

  it('asks before any other origin, including look-alikes of the official one', () => {
    for (const url of [
      'https://evil.example',
      'https://tinker.thinkingmachines.dev.evil.example/services/tinker-prod',
      'https://tinker.thinkingmachines.dev:8443/services/tinker-prod',
      'https://user@evil.example/',
      'http://127.0.0.1:9999',
    ]) {
      assert.strictEqual(classifyKeyDestination(url, []).kind, 'needs-consent', url);
    }
  });

  it('sends it to a confirmed origin only (scheme, host and port all count)', () => {
    const trusted = ['https://tinker.mylab.example'];
    assert.strictEqual(classifyKeyDestination('https://tinker.mylab.example/api', trusted).kind, 'trusted');
    assert.strictEqual(classifyKeyDestination('https://tinker.mylab.example:444/api', trusted).kind, 'needs-consent');
    assert.strictEqual(classifyKeyDestination('https://other.mylab.example', trusted).kind, 'needs-consent');
  });

  it('refuses plain http to another machine, even a confirmed one', () => {
    const d = classifyKeyDestination('http://tinker.mylab.example', ['http://tinker.mylab.example']);
    assert.strictEqual(d.kind, 'refused');
    assert.match(d.kind === 'refused' ? d.reason : '', /plain http:\/\/.*only for this machine/);
    assert.strictEqual(classifyKeyDestination('ftp://x', []).kind, 'refused');
    assert.strictEqual(classifyKeyDestination('not a url', []).kind, 'refused');
  });

  it('knows the loopback names', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '[::1]', '::1', 'a.localhost']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['128.0.0.1', '127.0.0.1.evil.example', 'localhost.evil.example', '0.0.0.0', '[::]']) assert.ok(!isLoopbackHost(h), h);
    assert.strictEqual(originOf(' http://LOCALHOST:8000/x '), 'http://localhost:8000');
  });

  it('rejects a backend setting with plain http to another machine', () => {
    assert.throws(() => resolveBackend({ backend: 'custom', customBaseUrl: 'http://tinker.mylab.example:8000' }), /tinker\.customBaseUrl: .*plain http/);
    assert.throws(() => resolveBackend({ backend: 'cloud' }, { TINKER_BASE_URL: 'http://evil.example' }), /tinker\.cloudBaseUrl: .*plain http/);
    assert.deepStrictEqual(resolveBackend({ backend: 'custom', customBaseUrl: 'http://localhost:8000' }), {
      kind: 'custom',
      baseUrl: 'http://localhost:8000',
      needsApiKey: false,
    });
  });
});
