// A version's checkpoint expiry, as the embedded engine says: a checkpoint saved with a TTL is
// recorded with its expiry, a production one is flagged in MODELS.md with the Clear TTL command, and
// after the TTL is cleared on the server the flag goes.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { refreshExpiry } from '../../../src/core/models/expiry';
import { registerFromPath } from '../../../src/core/models/lifecycle';
import { updateRegistry } from '../../../src/core/models/store';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { useEngineClient } from '../tinker/engineFixtures';

describe('model registry: checkpoint expiry from the server', function () {
  this.timeout(120_000);
  const engine = useEngineClient('tinker-registry-expiry-');
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-registry-expiry-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('records a TTL checkpoint\'s expiry, flags it in production with Clear TTL, and drops the flag once cleared', async () => {
    const client = engine.client;
    const t = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
    const sampler = (await (await t.saveWeightsForSampler('ship', { ttlSeconds: 3600 })).result()).path!;
    const state = (await (await t.saveState('ship', { ttlSeconds: 7200 })).result()).path!;
    const reg = path.join(dir, 'tinker-models.json');
    await registerFromPath(reg, { name: 'm', samplerPath: sampler, statePath: state, baseModel: RANDOM_MODEL, by: { os_user: 'tester' } });
    const v = await refreshExpiry(reg, 'm@v1', client);
    const left = Date.parse(v.expires_at!) - Date.parse(v.registered_at);
    assert.ok(left > 3000_000 && left <= 3700_000, `the earlier of the two expiries (the sampler's, an hour): ${v.expires_at}`);
    await updateRegistry(reg, (r) => {
      r.versions[0]!.status = 'production';
    });
    const md = fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8');
    assert.ok(md.includes(`> **Warning:** the production checkpoint expires at ${v.expires_at}: clear its TTL (tinker-studio checkpoints ttl ${state} ${sampler} --clear)`), md);
    await client.setCheckpointTtl(sampler, null);
    await client.setCheckpointTtl(state, null);
    const after = await refreshExpiry(reg, 'm@v1', client);
    assert.strictEqual(after.expires_at, undefined);
    assert.ok(!fs.readFileSync(path.join(dir, 'MODELS.md'), 'utf8').includes('Warning'));
  });
});
