// The one local checkpoint store (src/engine/storeDir.ts, store.ts, storeLock.ts): two engines on one
// store folder see each other's checkpoints (a sampler saved by one samples from the other), saves by
// two engines, and by two processes, at once lose nothing, the store's lock names its holder, a
// missing checkpoint's error says where it was looked for, and the extension's old store moves in.
import * as assert from 'assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceClient } from '../../../src/core/tinker/client';
import { textInput } from '../../../src/core/tinker/types';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';
import { EngineStore } from '../../../src/engine/server/store';
import { runRecord } from './storeFixtures';
import { STORE_LOCK_FILE, StoreLockedError, withStoreLock } from '../../../src/engine/server/storeLock';
import { migrateEngineStore } from '../../../src/engine/server/storeMigrate';
import { startEngine } from '../tinker/engineFixtures';

/** Waits for a child process to end; its exit code and output. */
function finished(child: ReturnType<typeof spawn>): Promise<{ code: number | null; out: string }> {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('one local checkpoint store shared by several engines', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-shared-store-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a sampler checkpoint saved by one engine samples from a second engine on the same store, and both list both engines\' checkpoints', async () => {
    // both engines: <dir>/data (startEngine's layout), i.e. one store folder
    const a = await startEngine(dir);
    const b = await startEngine(dir);
    const ca = await ServiceClient.connect({ baseUrl: a.server.url, clientVersion: 'test' });
    const cb = await ServiceClient.connect({ baseUrl: b.server.url, clientVersion: 'test' });
    try {
      // engine b has read the (empty) index before engine a saves anything
      assert.deepStrictEqual((await cb.listUserCheckpoints()).checkpoints, []);
      const ta = await ca.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 3 });
      const savedPath = (await (await ta.saveWeightsForSampler('from-a')).result()).path;
      assert.ok(savedPath);
      const saved = { path: savedPath };
      const prompt = textInput(encodeChat('<|im_start|>user\n2+2<|im_end|>\n'));
      const params = { max_tokens: 4, temperature: 0 };
      const onA = await (await ca.createSamplingClient({ modelPath: saved.path })).sample(prompt, params, {});
      const onB = await (await cb.createSamplingClient({ modelPath: saved.path })).sample(prompt, params, {});
      assert.deepStrictEqual(onB.sequences[0]!.tokens, onA.sequences[0]!.tokens, 'the same weights answer the same greedy completion');

      // each engine saves while the other has a stale view: neither save erases the other's
      const tb = await cb.createLoraTrainingClient(RANDOM_MODEL, { rank: 2, seed: 4 });
      await (await tb.saveWeightsForSampler('from-b')).result();
      await (await ta.saveWeightsForSampler('from-a-2')).result();
      for (const c of [ca, cb]) {
        const paths = (await c.listUserCheckpoints()).checkpoints.map((x) => x.tinker_path).sort();
        assert.deepStrictEqual(paths, [saved.path, `tinker://${tb.modelId}/sampler_weights/from-b`, `tinker://${ta.modelId}/sampler_weights/from-a-2`].sort());
      }
      // a checkpoint deleted through one engine is gone for the other
      await ca.deleteCheckpoint(`tinker://${tb.modelId}/sampler_weights/from-b`);
      await assert.rejects(cb.createSamplingClient({ modelPath: `tinker://${tb.modelId}/sampler_weights/from-b` }), /not found/);
      const reopened = await EngineStore.open(path.join(dir, 'data'));
      assert.deepStrictEqual(reopened.allRuns().flatMap((r) => r.checkpoints.map((c) => c.checkpoint_id)).sort(), ['sampler_weights/from-a', 'sampler_weights/from-a-2']);
      assert.ok(!fs.existsSync(path.join(dir, 'data', STORE_LOCK_FILE)), 'no lock is left behind');
    } finally {
      ca.close();
      cb.close();
      for (const e of [a, b]) {
        await e.server.close();
        await e.backend.close();
      }
    }
  });

  it('concurrent saves by two stores in this process and a third in another process lose no checkpoint', async () => {
    const storeDir = path.join(dir, 'store');
    const n = 12;
    const storeModule = path.resolve(__dirname, '../../../src/engine/server/store.js');
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const { EngineStore } = require(${JSON.stringify(storeModule)});
         (async () => {
           const s = await EngineStore.open(${JSON.stringify(storeDir)});
           const t = new Date(0).toISOString();
           await Promise.all(Array.from({ length: ${n} }, async (_, i) => {
             const run = { training_run_id: 'child-' + i, base_model: 'm', model_owner: 'x', is_lora: true, corrupted: false, lora_rank: 2,
               train_mlp: true, train_attn: true, train_unembed: true, created: t, last_request_time: t, user_metadata: null, checkpoints: [] };
             await s.putRun(run);
             await s.writeCheckpoint(run, 'sampler_weights', 'c' + i, new Uint8Array([i]), null);
           }));
         })().catch((e) => { console.error(e); process.exit(1); });`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const childDone = finished(child);
    const [s1, s2] = await Promise.all([EngineStore.open(storeDir), EngineStore.open(storeDir)]);
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        for (const [name, s] of [['one', s1], ['two', s2]] as const) {
          const run = runRecord(`${name}-${i}`);
          await s!.putRun(run);
          await s!.writeCheckpoint(run, 'weights', `w${i}`, new Uint8Array([i, 1]), null);
        }
      }),
    );
    const { code, out } = await childDone;
    assert.strictEqual(code, 0, out);
    const fresh = await EngineStore.open(storeDir);
    const ids = fresh.allRuns().map((r) => `${r.training_run_id}:${r.checkpoints.map((c) => c.checkpoint_id).join(',')}`).sort();
    const want = Array.from({ length: n }, (_, i) => [`child-${i}:sampler_weights/c${i}`, `one-${i}:weights/w${i}`, `two-${i}:weights/w${i}`]).flat().sort();
    assert.deepStrictEqual(ids, want);
    // every record's weights file is there and holds what was written
    for (const run of fresh.allRuns()) for (const c of run.checkpoints) assert.strictEqual((await fresh.readCheckpoint(c))[0], Number(run.training_run_id.split('-')[1]));
    // and the stores that were open take in the others' records on their next refresh
    await s1!.refresh();
    assert.strictEqual(s1!.allRuns().length, 3 * n);
    assert.deepStrictEqual(fs.readdirSync(storeDir).sort(), ['checkpoints', 'engine-store.json'], 'no lock or temp file left');
  });

  it('waits for a held lock and then names its holder; takes over a lock whose process is gone', async () => {
    const lock = path.join(dir, STORE_LOCK_FILE);
    fs.writeFileSync(lock, JSON.stringify({ pid: 4242, host: 'another-machine', since: '2026-01-01T00:00:00.000Z' }));
    await assert.rejects(
      withStoreLock(dir, async () => 'never', { waitMs: 50 }),
      (e: unknown) =>
        e instanceof StoreLockedError &&
        e.message ===
          `the engine's checkpoint store ${dir} is locked by process 4242 on another-machine (since 2026-01-01T00:00:00.000Z); if no such process is running, delete ${lock}`,
    );
    // a process of this machine that has ended: its lock is stale
    const gone = spawn(process.execPath, ['-e', '0']);
    await finished(gone);
    fs.writeFileSync(lock, JSON.stringify({ pid: gone.pid, host: os.hostname(), since: '2026-01-01T00:00:00.000Z' }));
    assert.strictEqual(await withStoreLock(dir, async () => fs.readFileSync(lock, 'utf8').includes(`"pid":${process.pid}`)), true, 'this process holds it while fn runs');
    assert.ok(!fs.existsSync(lock), 'and lets go after');
  });

  it('says where it looked for a missing checkpoint and where such a path lives', async () => {
    const e = await startEngine(dir);
    const c = await ServiceClient.connect({ baseUrl: e.server.url, clientVersion: 'test' });
    try {
      const store = path.join(dir, 'data');
      await assert.rejects(c.createSamplingClient({ modelPath: 'tinker://sess-0123abcd:train:0/sampler_weights/000010' }), (err: Error) => {
        assert.ok(
          err.message.includes(
            `checkpoint tinker://sess-0123abcd:train:0/sampler_weights/000010 not found: no training run sess-0123abcd:train:0; ` +
              `looked in the embedded engine's checkpoint store ${store} (shared by the CLI, the MCP server and the extension; TINKER_STUDIO_CACHE_DIR moves it); ` +
              `it was saved by an embedded engine using another store (another TINKER_STUDIO_CACHE_DIR or --data-dir)`,
          ),
          err.message,
        );
        return true;
      });
      await assert.rejects(c.createSamplingClient({ modelPath: 'tinker://4f9c2d1e-77aa-4b1b-9a52-2b1f0e6c9d11:train:0/sampler_weights/final' }), (err: Error) => {
        assert.match(err.message, /this is not a path of the embedded engine: it lives on the Tinker service; switch the backend to Tinker to use it/);
        return true;
      });
    } finally {
      c.close();
      await e.server.close();
      await e.backend.close();
    }
  });

  it("moves the extension's old store into the shared one, keeping every checkpoint's bytes and tinker:// path", async () => {
    const oldDir = path.join(dir, 'globalStorage', 'engine');
    const storeDir = path.join(dir, 'cache', 'engine');
    const old = await EngineStore.open(oldDir);
    const run = runRecord('sess-aa:train:0');
    await old.putRun(run);
    const c1 = await old.writeCheckpoint(run, 'sampler_weights', '000005', new Uint8Array([5, 5]), null);
    const shared = await EngineStore.open(storeDir);
    const other = runRecord('sess-bb:train:0');
    await shared.putRun(other);
    await shared.writeCheckpoint(other, 'weights', 'x', new Uint8Array([9]), null);

    const logs: string[] = [];
    assert.deepStrictEqual(await migrateEngineStore(oldDir, storeDir, (l) => logs.push(l)), { runs: 1, checkpoints: 1 });
    const after = await EngineStore.open(storeDir);
    const moved = after.run('sess-aa:train:0')!.checkpoints[0]!;
    assert.strictEqual(moved.tinker_path, c1.tinker_path);
    assert.deepStrictEqual([...(await after.readCheckpoint(moved))], [5, 5]);
    assert.ok(after.run('sess-bb:train:0'), "the shared store's own runs stay");
    assert.match(fs.readFileSync(path.join(oldDir, 'MOVED.txt'), 'utf8'), new RegExp(`moved to the one checkpoint store ${storeDir.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}`));
    assert.ok(!fs.existsSync(path.join(oldDir, 'checkpoints')));
    assert.deepStrictEqual(logs, [`moved 1 checkpoint(s) of 1 new training run(s) from ${oldDir} to the shared store ${storeDir}`]);
    // a second start finds nothing left to move
    assert.deepStrictEqual(await migrateEngineStore(oldDir, storeDir), { runs: 0, checkpoints: 0 });
  });
});
