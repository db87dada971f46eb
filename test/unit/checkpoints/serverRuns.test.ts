// The one listing of the server's training runs that the Runs and Checkpoints views share, against the
// embedded engine over real HTTP: empty, then a page at a time with "Load more", a reset that fetches
// again, every change announced, and a failure as a row.
import * as assert from 'assert';
import { ServerRunList, ServerRunRow } from '../../../src/core/checkpoints/serverRuns';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { useEngineClient } from '../tinker/engineFixtures';

const shape = (rows: ServerRunRow[]) => rows.map((r) => (r.kind === 'serverRun' ? r.run.training_run_id : r.kind === 'loadMore' ? `more@${r.offset}` : `message: ${r.text}`));

describe('server runs listing (Runs and Checkpoints views)', function () {
  this.timeout(120_000);
  const engine = useEngineClient('tinker-server-runs-');

  it('lists the runs a page at a time, appends a page on Load more, fetches again after a reset, and says so each time', async () => {
    let fetches = 0;
    const client = engine.client;
    const list = new ServerRunList(async () => {
      fetches++;
      return client;
    }, { pageSize: 2 });
    let changes = 0;
    const sub = list.onDidChange(() => changes++);
    assert.deepStrictEqual(shape(await list.rows()), ['message: No training runs on this server yet']);

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: i })).modelId);
    assert.deepStrictEqual(shape(await list.rows()), ['message: No training runs on this server yet'], 'what was fetched stays until a reset');
    list.reset();
    assert.strictEqual(changes, 1);
    const first = shape(await list.rows());
    assert.strictEqual(first.length, 3);
    assert.strictEqual(first[2], 'more@2');
    assert.strictEqual(await list.loadMore(), 3);
    assert.strictEqual(changes, 2);
    const all = shape(await list.rows());
    assert.deepStrictEqual([...all].sort(), [...ids].sort(), 'every run once, no Load more after the last page');
    assert.deepStrictEqual(all.slice(0, 2), first.slice(0, 2), 'the next page is appended');
    assert.strictEqual(await list.loadMore(), 3, 'nothing more to load');
    assert.strictEqual(fetches, 3, 'one fetch per page: two views asking share them');
    sub.dispose();
    list.reset();
    assert.strictEqual(changes, 2, 'a disposed listener hears nothing');
  });

  it('a failure to list is one row that names it', async () => {
    const list = new ServerRunList(async () => {
      throw new Error('no connection to a Tinker server');
    });
    const rows = await list.rows();
    assert.deepStrictEqual(rows, [{ kind: 'message', text: 'Could not list the server’s training runs', detail: 'no connection to a Tinker server', error: true }]);
  });
});
