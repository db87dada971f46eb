import * as assert from 'assert';
import { BackendConfigError, DEFAULT_CLOUD_BASE_URL, resolveBackend } from '../../../src/core/config/backend';

describe('backend settings', () => {
  it('defaults to the local engine', () => {
    assert.deepStrictEqual(resolveBackend({}), { kind: 'local' });
    assert.deepStrictEqual(resolveBackend(undefined), { kind: 'local' });
  });

  it('uses the cloud base URL, TINKER_BASE_URL overriding it like the Python SDK', () => {
    assert.deepStrictEqual(resolveBackend({ backend: 'cloud' }), { kind: 'cloud', baseUrl: DEFAULT_CLOUD_BASE_URL, needsApiKey: true });
    assert.deepStrictEqual(resolveBackend({ backend: 'cloud' }, { TINKER_BASE_URL: 'https://example.test/tinker/' }), {
      kind: 'cloud',
      baseUrl: 'https://example.test/tinker',
      needsApiKey: true,
    });
  });

  it('needs a URL for a custom server and says which setting is wrong', () => {
    assert.deepStrictEqual(resolveBackend({ backend: 'custom', customBaseUrl: ' http://127.0.0.1:8000/ ' }), {
      kind: 'custom',
      baseUrl: 'http://127.0.0.1:8000',
      needsApiKey: false,
    });
    assert.throws(
      () => resolveBackend({ backend: 'custom', customBaseUrl: '' }),
      (e: unknown) => e instanceof BackendConfigError && e.setting === 'tinker.customBaseUrl' && /is empty/.test(e.message),
    );
    assert.throws(
      () => resolveBackend({ backend: 'custom', customBaseUrl: 'ftp://x' }),
      (e: unknown) => e instanceof BackendConfigError && /tinker\.customBaseUrl.*http/.test(e.message),
    );
  });

  it('rejects an unknown backend naming the setting', () => {
    assert.throws(
      () => resolveBackend({ backend: 'gpu-farm' }),
      (e: unknown) => e instanceof BackendConfigError && e.setting === 'tinker.backend' && e.message.startsWith('Setting tinker.backend:'),
    );
  });
});
