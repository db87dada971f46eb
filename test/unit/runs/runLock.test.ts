// One writer per run directory: a second writer (another process, or this one) is refused with an
// error naming the holder; a lock left by a process that died is taken over.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readDirectoryState, summarizeRun } from '../../../src/core/runs/runDirectory';
import { RUN_LOCK_FILE, RunDirectoryLockedError, lockRunDirectory, runLockState } from '../../../src/core/runs/runLock';
import { RunWriter } from '../../../src/core/runs/runWriter';
import { holdInChild, killHolder } from './lockHolder';

/** readDirectoryState (no metrics.jsonl read: the Compare Runs panel's status) agrees with summarizeRun (the Runs view's). */
async function sameState(dir: string): Promise<void> {
  const s = await summarizeRun(dir);
  assert.deepStrictEqual(await readDirectoryState(dir), { finished: s.finished, interrupted: s.interrupted, stoppedEarly: s.stoppedEarly, locked: s.locked });
}

describe('run directory lock', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-runlock-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('refuses a run directory another live process writes, naming it; takes it over once that process died', async () => {
    const w = RunWriter.create(root, 'run');
    w.writeConfig({});
    w.close();
    const child = await holdInChild(w.dir);
    try {
      assert.throws(
        () => RunWriter.open(w.dir),
        (err: unknown) => err instanceof RunDirectoryLockedError && err.holder.pid === child.pid && err.message.includes(`process ${child.pid}`) && err.message.includes(RUN_LOCK_FILE),
      );
    } finally {
      await killHolder(child);
    }
    const again = RunWriter.open(w.dir);
    again.appendMetrics(0, { a: 1 });
    assert.strictEqual(JSON.parse(fs.readFileSync(path.join(w.dir, RUN_LOCK_FILE), 'utf8')).pid, process.pid);
    again.close();
    assert.ok(!fs.existsSync(path.join(w.dir, RUN_LOCK_FILE)), 'close() removes the lock');
  });

  it('a run whose writer died holding the directory (a window reloaded mid-run) reads as interrupted', async () => {
    const w = RunWriter.create(root, 'run');
    w.writeConfig({});
    w.appendMetrics(0, { 'env/all/reward/total': 0.5 });
    w.close();
    assert.strictEqual(runLockState(w.dir), 'free');
    assert.strictEqual((await summarizeRun(w.dir)).interrupted, false, 'a run that let go of its directory is not interrupted');
    const child = await holdInChild(w.dir);
    try {
      assert.strictEqual(runLockState(w.dir), 'held');
      assert.strictEqual((await summarizeRun(w.dir)).interrupted, false, 'a run still being written is not interrupted');
      assert.strictEqual((await summarizeRun(w.dir)).locked, true);
      await sameState(w.dir);
    } finally {
      await killHolder(child);
    }
    assert.strictEqual(runLockState(w.dir), 'stale');
    const s = await summarizeRun(w.dir);
    assert.strictEqual(s.interrupted, true);
    assert.strictEqual(s.locked, false);
    assert.strictEqual(s.finished, false);
    await sameState(w.dir);
    // resuming takes the directory over, and a run with a final checkpoint is never interrupted
    const again = RunWriter.open(w.dir);
    assert.strictEqual(runLockState(w.dir), 'held');
    again.appendCheckpoint({ name: 'final', batch: 1, state_path: 'tinker://m/weights/final' });
    again.close();
    assert.strictEqual((await summarizeRun(w.dir)).interrupted, false);
    await sameState(w.dir);
    assert.strictEqual((await readDirectoryState(w.dir)).finished, true);
    // the state never reads metrics.jsonl (the Compare Runs panel has its columns from the cache): a metrics "file" that cannot be read does not matter
    fs.rmSync(path.join(w.dir, 'metrics.jsonl'));
    fs.mkdirSync(path.join(w.dir, 'metrics.jsonl'));
    assert.deepStrictEqual(await readDirectoryState(w.dir), { finished: true, interrupted: false, stoppedEarly: false, locked: false });
  });

  it('a run stopped because its process is going away (window reload, VS Code deactivating) reads as interrupted; one stopped otherwise does not', async () => {
    const runLockModule = path.resolve(__dirname, '../../../src/core/runs/runLock.js');
    const shutdownModule = path.resolve(__dirname, '../../../src/core/runs/shutdown.js');
    // a writer that releases its lock the normal way and exits, with or without saying it is going away first
    const writeAndExit = (dir: string, goingAway: boolean) => {
      const script = `const lock = require(${JSON.stringify(runLockModule)}).lockRunDirectory(${JSON.stringify(dir)});${goingAway ? `require(${JSON.stringify(shutdownModule)}).leaveLocksAtShutdown();` : ''} lock.release();`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      assert.strictEqual(r.status, 0, r.stderr);
    };
    const runs = ['away', 'stopped'].map((name) => {
      const w = RunWriter.create(root, name);
      w.writeConfig({});
      w.appendMetrics(0, { a: 1 });
      w.close();
      return w.dir;
    });
    writeAndExit(runs[0]!, true);
    writeAndExit(runs[1]!, false);
    assert.strictEqual(runLockState(runs[0]!), 'stale');
    assert.strictEqual((await summarizeRun(runs[0]!)).interrupted, true);
    assert.strictEqual(runLockState(runs[1]!), 'free');
    assert.strictEqual((await summarizeRun(runs[1]!)).interrupted, false);
    // and the interrupted one is resumed as any other
    RunWriter.open(runs[0]!).close();
    assert.strictEqual(runLockState(runs[0]!), 'free');
  });

  it('refuses a second writer in the same process until the first is closed', () => {
    const w = RunWriter.create(root, 'run');
    w.writeConfig({});
    assert.throws(() => RunWriter.open(w.dir), RunDirectoryLockedError);
    w.close();
    RunWriter.open(w.dir).close();
  });

  it('takes over a lock of this process that nobody holds any more, and an unreadable lock', () => {
    const dir = path.join(root, 'd');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, RUN_LOCK_FILE), JSON.stringify({ pid: process.pid, host: os.hostname(), since: 'earlier' }));
    const a = lockRunDirectory(dir);
    assert.strictEqual(a.tookOver, true);
    a.release();
    fs.writeFileSync(path.join(dir, RUN_LOCK_FILE), '{"pid":');
    const b = lockRunDirectory(dir);
    assert.strictEqual(b.tookOver, true);
    b.release();
  });

  it('does not take over a lock held on another machine (its pid cannot be checked)', () => {
    const dir = path.join(root, 'd');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, RUN_LOCK_FILE), JSON.stringify({ pid: 1, host: `${os.hostname()}-other`, since: 'earlier' }));
    assert.throws(() => lockRunDirectory(dir), /in use by another run \(process 1 on .*-other/);
  });
});
