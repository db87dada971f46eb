// The engine serves the SDK's list_sessions and get_session over real HTTP: the sessions alive on it
// and the training runs and samplers one of them created; an unknown session is a 404.
import * as assert from 'assert';
import { NotFoundError } from '../../../src/core/tinker/errors';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, startEngineClient } from '../grpo/engineFixture';

describe('engine: sessions (list_sessions, get_session)', function () {
  this.timeout(60_000);
  let ec: EngineClient;
  before(async () => {
    ec = await startEngineClient('tinker-sessions-');
  });
  after(() => ec?.close());

  it('lists the live sessions and what each created', async () => {
    const other = await ServiceClient.connect({ baseUrl: ec.engine.server.url, clientVersion: 'test' });
    try {
      const tc = await ec.service.createLoraTrainingClient(RANDOM_MODEL, { rank: 2 });
      const sc = await ec.service.createSamplingClient({ baseModel: RANDOM_MODEL });
      const list = await ec.service.listSessions();
      assert.deepStrictEqual(new Set(list.sessions), new Set([ec.service.sessionId, other.sessionId]));
      const mine = await ec.service.getSession(ec.service.sessionId!);
      assert.deepStrictEqual(mine.training_run_ids, [tc.modelId]);
      assert.strictEqual(mine.sampler_ids.length, 1);
      assert.ok(sc);
      const theirs = await other.getSession(other.sessionId!);
      assert.deepStrictEqual([theirs.training_run_ids, theirs.sampler_ids], [[], []]);
      const paged = await ec.service.listSessions({ limit: 1, offset: 1 });
      assert.strictEqual(paged.sessions.length, 1);
      await assert.rejects(ec.service.getSession('sess-nope'), NotFoundError);
    } finally {
      other.close();
    }
  });
});
