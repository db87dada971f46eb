// The engine's store on disk: it keeps writing after a failed write, sets a corrupt metadata file
// aside and keeps what is valid, and reads an applied-steps record with a cut-off line.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EngineStore } from '../../../src/engine/server/store';
import { runRecord } from './storeFixtures';

describe('engine store on disk', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-store-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const storeFile = () => path.join(dir, 'engine-store.json');

  it('keeps writing after a failed write: later saves succeed and a restart sees every checkpoint', async () => {
    const store = await EngineStore.open(dir);
    const run = runRecord('r1');
    await store.putRun(run);
    // the metadata file cannot be replaced while a non-empty folder stands in its place
    fs.rmSync(storeFile());
    fs.mkdirSync(storeFile());
    fs.writeFileSync(path.join(storeFile(), 'x'), '');
    await assert.rejects(store.writeCheckpoint(run, 'weights', '000001', new Uint8Array([1, 2, 3]), null));
    fs.rmSync(storeFile(), { recursive: true });
    await store.writeCheckpoint(run, 'weights', '000002', new Uint8Array([4]), null);
    assert.deepStrictEqual(fs.readdirSync(dir).sort(), ['checkpoints', 'engine-store.json'], 'no temp file left');
    const reopened = await EngineStore.open(dir);
    assert.deepStrictEqual(reopened.run('r1')?.checkpoints.map((c) => c.checkpoint_id), ['weights/000001', 'weights/000002']);
  });

  it('sets a store file that is not JSON aside, says so, and starts empty', async () => {
    fs.writeFileSync(storeFile(), '{"version":1,"runs":[{"training_run');
    const logs: string[] = [];
    const store = await EngineStore.open(dir, (l) => logs.push(l));
    assert.deepStrictEqual(store.allRuns(), []);
    const aside = fs.readdirSync(dir).filter((f) => f.startsWith('engine-store.json.corrupt-'));
    assert.strictEqual(aside.length, 1);
    assert.strictEqual(fs.readFileSync(path.join(dir, aside[0]!), 'utf8'), '{"version":1,"runs":[{"training_run', 'the corrupt file is kept as it was');
    assert.strictEqual(logs.length, 1);
    assert.match(logs[0]!, /engine-store\.json could not be read \(not valid JSON .*\); it was moved to .*engine-store\.json\.corrupt-/);
    assert.deepStrictEqual(JSON.parse(fs.readFileSync(storeFile(), 'utf8')), { version: 1, runs: [] });
  });

  it('keeps the valid runs of a store file with an invalid run record', async () => {
    const bad = { ...runRecord('r2'), lora_rank: 'two' };
    fs.writeFileSync(storeFile(), JSON.stringify({ version: 1, runs: [runRecord('r1'), bad] }));
    const logs: string[] = [];
    const store = await EngineStore.open(dir, (l) => logs.push(l));
    assert.deepStrictEqual(store.allRuns().map((r) => r.training_run_id), ['r1']);
    assert.match(logs[0]!, /runs\.1\.lora_rank: .*Kept 1 training run\(s\), dropped 1 invalid run record\(s\)/);
    assert.deepStrictEqual((await EngineStore.open(dir)).allRuns().map((r) => r.training_run_id), ['r1'], 'the recovered store was written');
  });

  it('skips a cut-off line of the applied-steps record and drops it on open so later steps are whole lines', async () => {
    const store = await EngineStore.open(dir);
    const step = (seq: number) => ({ model_id: 'm', seq_id: seq, type: 'optim_step', request_id: `q${seq}`, time: 't' });
    await store.recordApplied(step(1));
    fs.appendFileSync(store.appliedStepsFile, '{"model_id":"m","seq_');
    assert.deepStrictEqual((await store.appliedSteps()).map((s) => s.seq_id), [1]);
    const logs: string[] = [];
    const reopened = await EngineStore.open(dir, (l) => logs.push(l));
    assert.match(logs[0] ?? '', /dropped a cut-off last line/);
    await reopened.recordApplied(step(2));
    assert.deepStrictEqual((await reopened.appliedSteps()).map((s) => s.seq_id), [1, 2]);
  });
});
