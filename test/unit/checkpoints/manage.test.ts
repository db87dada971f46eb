// Checkpoint management core against the embedded engine over real HTTP: listing (paged runs, a
// run's checkpoints), publish/unpublish, TTL, bulk delete with per-item failures, download (unpacked,
// cancel leaves nothing), weights info, and the messages for expired / not found / no permission.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { forEachBounded } from '../../../src/core/checkpoints/bulk';
import { downloadCheckpoint, downloadFolderName } from '../../../src/core/checkpoints/download';
import { CheckpointError, describeCheckpointError } from '../../../src/core/checkpoints/errors';
import { durationText, expiryText, parseTtl, sizeText } from '../../../src/core/checkpoints/format';
import {
  bulkSummary,
  checkpointWeightsInfo,
  checkpointsByPath,
  deleteCheckpoint,
  forEachCheckpoint,
  listRunCheckpoints,
  listServerRuns,
  publishCheckpoint,
  setCheckpointTtl,
  unpublishCheckpoint,
  weightsInfoLines,
} from '../../../src/core/checkpoints/manage';
import { ServiceClient, TrainingClient } from '../../../src/core/tinker/client';
import { errorForStatus } from '../../../src/core/tinker/errors';
import type { ComputeBackend } from '../../../src/engine/contract';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import type { EngineServer } from '../../../src/engine/server';
import { startEngine } from '../tinker/engineFixtures';

async function until(what: string, check: () => Promise<boolean>, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Checkpoint management core', function () {
  this.timeout(120_000);
  let dir: string;
  let engine: { server: EngineServer; backend: ComputeBackend };
  let client: ServiceClient;
  let tc: TrainingClient;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-ckpt-core-'));
    engine = await startEngine(dir);
    client = await ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test', heartbeatIntervalMs: 200 });
    tc = await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 1 });
  });
  after(async () => {
    client?.close();
    await engine?.server.close();
    await engine?.backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const save = async (name: string, kind: 'state' | 'sampler', ttlSeconds?: number) =>
    (await (kind === 'state' ? tc.saveState(name, { ttlSeconds }) : tc.saveWeightsForSampler(name, { ttlSeconds }))).result().then((r) => r.path!);

  it('pages the server runs and lists a run\'s checkpoints with their facts', async () => {
    const others = [await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2 }), await client.createLoraTrainingClient(RANDOM_MODEL, { rank: 2 })];
    const state = await save('s1', 'state', 3600);
    await save('p1', 'sampler');
    const first = await listServerRuns(client, { limit: 2 });
    assert.strictEqual(first.runs.length, 2);
    assert.strictEqual(first.total, 3);
    assert.strictEqual(first.nextOffset, 2);
    const second = await listServerRuns(client, { offset: first.nextOffset, limit: 2 });
    assert.strictEqual(second.runs.length, 1);
    assert.strictEqual(second.nextOffset, undefined, 'the last page has no next page');
    const ids = [...first.runs, ...second.runs].map((r) => r.training_run_id).sort();
    assert.deepStrictEqual(ids, [tc.modelId, ...others.map((o) => o.modelId)].sort());

    const ckpts = await listRunCheckpoints(client, tc.modelId);
    const s = ckpts.find((c) => c.tinkerPath === state)!;
    assert.strictEqual(s.kind, 'state');
    assert.strictEqual(s.name, 's1');
    assert.strictEqual(s.public, false);
    assert.ok(s.expiresAt && s.expiresAt.getTime() > Date.now(), 'the TTL shows as an expiry');
    assert.ok(s.sizeBytes && s.sizeBytes > 0, 'the engine reports sizes');
    assert.strictEqual(ckpts.find((c) => c.name === 'p1')?.kind, 'sampler');

    const { byPath, errors } = await checkpointsByPath(client, [tc.modelId, 'no-such-run']);
    assert.ok(byPath.has(state));
    assert.match(errors.get('no-such-run')!.message, /not found/);
    for (const o of others) await o.unload();
  });

  it('publishes, unpublishes, sets and clears a TTL', async () => {
    const p = await save('pub', 'sampler');
    const find = async () => (await listRunCheckpoints(client, tc.modelId)).find((c) => c.tinkerPath === p)!;
    await publishCheckpoint(client, p);
    assert.strictEqual((await find()).public, true);
    await assert.rejects(publishCheckpoint(client, p), (e: unknown) => e instanceof CheckpointError && e.problem === 'conflict' && /already public/.test(e.message));
    await unpublishCheckpoint(client, p);
    assert.strictEqual((await find()).public, false);
    await setCheckpointTtl(client, p, 2 * 86_400);
    const exp = (await find()).expiresAt!;
    assert.strictEqual(expiryText(exp, new Date(exp.getTime() - 2 * 86_400_000 + 5000)), 'expires in 2 days');
    assert.ok(exp.getTime() - Date.now() > 86_400_000, 'about two days away');
    await setCheckpointTtl(client, p, null);
    assert.strictEqual((await find()).expiresAt, undefined);
  });

  it('deletes many with bounded concurrency, reporting each failure without stopping', async () => {
    const paths = [await save('d1', 'state'), await save('d2', 'sampler'), `tinker://${tc.modelId}/weights/never-saved`, await save('d3', 'state')];
    const settled: string[] = [];
    const outcomes = await forEachCheckpoint(paths, (p) => deleteCheckpoint(client, p), { concurrency: 2, onSettled: (o) => settled.push(o.item) });
    assert.deepStrictEqual(outcomes.map((o) => o.ok), [true, true, false, true]);
    assert.deepStrictEqual([...settled].sort(), [...paths].sort());
    const failure = outcomes[2]!;
    assert.ok(!failure.ok && failure.error instanceof CheckpointError && failure.error.problem === 'not-found');
    assert.match(bulkSummary('deleted', outcomes), /^3 of 4 deleted; 1 failed: cannot delete tinker:\/\/.*never-saved: the server has no such checkpoint/);
    const left = (await listRunCheckpoints(client, tc.modelId)).map((c) => c.name);
    for (const n of ['d1', 'd2', 'd3']) assert.ok(!left.includes(n), `${n} deleted`);
  });

  it('never has more than the limit in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const run = forEachBounded([1, 2, 3, 4, 5, 6], 3, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
      if (n === 2) throw new Error('two fails');
      return n * 10;
    });
    // release one waiting item at a time, each only once all allowed slots are taken
    for (let released = 0; released < 6; released++) {
      await until('a slot is waiting', async () => gates.length > 0, 5000);
      assert.ok(inFlight <= 3);
      gates.shift()!();
    }
    const out = await run;
    assert.strictEqual(peak, 3);
    assert.deepStrictEqual(out.map((o) => (o.ok ? o.value : o.error.message)), [10, 'two fails', 30, 40, 50, 60]);
  });

  it('reads weights info', async () => {
    const p = await save('wi', 'state');
    const w = await checkpointWeightsInfo(client, p);
    assert.deepStrictEqual(w, { baseModel: RANDOM_MODEL, isLora: true, loraRank: 2, trained: ['attention', 'MLP', 'unembedding'] });
    assert.deepStrictEqual(weightsInfoLines(w), [`base model: ${RANDOM_MODEL}`, 'LoRA rank: 2', 'trained parts: attention, MLP, unembedding']);
  });

  it('downloads an archive unpacked into a chosen folder, with progress', async () => {
    const p = await save('dl', 'sampler');
    const dest = path.join(dir, 'downloads');
    const progress: number[] = [];
    const r = await downloadCheckpoint(client, p, dest, { onProgress: (x) => progress.push(x.received) });
    assert.strictEqual(r.dir, path.join(dest, downloadFolderName(p)));
    assert.deepStrictEqual([...r.files].sort(), ['adapter_config.json', 'adapter_model.tsstate', 'checkpoint_complete']);
    const cfg = JSON.parse(fs.readFileSync(path.join(r.dir, 'adapter_config.json'), 'utf8')) as { base_model_name_or_path: string; tinker_path: string };
    assert.strictEqual(cfg.base_model_name_or_path, RANDOM_MODEL);
    assert.strictEqual(cfg.tinker_path, p);
    assert.ok(fs.statSync(path.join(r.dir, 'adapter_model.tsstate')).size > 0);
    assert.ok(progress.length > 0 && progress[progress.length - 1] === r.bytes);
    assert.deepStrictEqual(fs.readdirSync(dest), [path.basename(r.dir)], 'no temp files left');
    const again = await downloadCheckpoint(client, p, dest);
    assert.strictEqual(again.dir, `${r.dir}-2`, 'an existing folder is never written into');
  });

  it('a cancelled download leaves no file behind', async () => {
    const p = await save('dl-cancel', 'state');
    const dest = path.join(dir, 'cancelled');
    const ac = new AbortController();
    await assert.rejects(
      downloadCheckpoint(client, p, dest, {
        signal: ac.signal,
        onProgress: () => ac.abort(),
      }),
      (e: unknown) => (e as Error).name === 'AbortError',
    );
    assert.deepStrictEqual(fs.existsSync(dest) ? fs.readdirSync(dest) : [], []);
  });

  it('says a checkpoint expired when its TTL passed, not found otherwise', async () => {
    const p = await save('brief', 'sampler', 1);
    const expiresAt = (await listRunCheckpoints(client, tc.modelId)).find((c) => c.tinkerPath === p)!.expiresAt;
    await until('the engine drops the expired checkpoint', async () => !(await listRunCheckpoints(client, tc.modelId)).some((c) => c.tinkerPath === p));
    await assert.rejects(publishCheckpoint(client, p, { expiresAt }), (e: unknown) => e instanceof CheckpointError && e.problem === 'expired' && /expired at .* and the server deleted it/.test(e.message));
    await assert.rejects(downloadCheckpoint(client, p, path.join(dir, 'gone')), (e: unknown) => e instanceof CheckpointError && e.problem === 'not-found');
  });

  it('names a permission problem and an expired answer (410) from their statuses', () => {
    const p = 'tinker://someone-else/weights/x';
    const denied = describeCheckpointError(errorForStatus(403, 'DELETE /x', '{"detail":"forbidden"}'), p, { action: 'delete' });
    assert.strictEqual(denied.problem, 'permission');
    assert.match(denied.message, /^cannot delete tinker:\/\/someone-else\/weights\/x: this API key has no permission/);
    assert.strictEqual(describeCheckpointError(errorForStatus(410, 'GET /x', ''), p, { action: 'download' }).problem, 'expired');
  });

  it('formats durations, sizes and TTLs', () => {
    assert.strictEqual(durationText(2 * 86_400_000 + 3_600_000), '2 days');
    assert.strictEqual(durationText(61_000), '1 minute');
    assert.strictEqual(durationText(2 * 86_400_000 - 5000), '2 days', 'a 2-day TTL a moment later still reads 2 days');
    assert.strictEqual(durationText(999), 'less than a second');
    assert.strictEqual(expiryText(undefined, new Date()), undefined);
    assert.strictEqual(expiryText(new Date(0), new Date(1)), 'expired');
    assert.strictEqual(sizeText(512), '512 B');
    assert.strictEqual(sizeText(3 * 1024 * 1024), '3.0 MiB');
    assert.deepStrictEqual(['3600', '90s', '30m', '12h', '7d', '2w', '1.5h'].map(parseTtl), [3600, 90, 1800, 43_200, 604_800, 1_209_600, 5400]);
    assert.throws(() => parseTtl('0'), /at least one second/);
    assert.throws(() => parseTtl('soon'), /not a duration/);
  });
});
