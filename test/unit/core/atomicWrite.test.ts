// Atomic whole-file writes: the target is replaced or left as it was, and no temp file survives a
// failure; on Windows a transiently refused rename (EPERM) is retried.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { writeFileAtomic, writeFileAtomicSync } from '../../../src/core/fs/atomic';

describe('atomic file writes', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-atomic-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A target the rename cannot replace: a non-empty directory. */
  function unreplaceable(): string {
    const target = path.join(dir, 'target.json');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'inside'), 'x');
    return target;
  }

  it('sync: a failed rename leaves no temp file and the target untouched', () => {
    const target = unreplaceable();
    assert.throws(() => writeFileAtomicSync(target, 'new'));
    assert.deepStrictEqual(fs.readdirSync(dir), ['target.json']);
    assert.deepStrictEqual(fs.readdirSync(target), ['inside']);
  });

  it('async: a failed rename leaves no temp file and the target untouched', async () => {
    const target = unreplaceable();
    await assert.rejects(writeFileAtomic(target, 'new'));
    assert.deepStrictEqual(fs.readdirSync(dir), ['target.json']);
  });

  it('a failed write (the folder is gone) throws and leaves nothing behind', async () => {
    const gone = path.join(dir, 'gone', 'f.json');
    assert.throws(() => writeFileAtomicSync(gone, 'x'), /ENOENT/);
    await assert.rejects(writeFileAtomic(gone, 'x'), /ENOENT/);
    assert.deepStrictEqual(fs.readdirSync(dir), []);
  });

  it('retries a rename refused with EPERM (Windows) and succeeds once it is let through', async () => {
    const target = path.join(dir, 'f.json');
    fs.writeFileSync(target, 'old');
    let refusals = 2;
    const eperm = () => Object.assign(new Error('EPERM: operation not permitted, rename'), { code: 'EPERM' });
    writeFileAtomicSync(target, 'sync', {
      retryRename: true,
      rename: (a, b) => {
        if (refusals-- > 0) throw eperm();
        fs.renameSync(a, b);
      },
    });
    assert.strictEqual(fs.readFileSync(target, 'utf8'), 'sync');
    refusals = 3;
    await writeFileAtomic(target, 'async', {
      retryRename: true,
      renameAsync: async (a, b) => {
        if (refusals-- > 0) throw eperm();
        await fs.promises.rename(a, b);
      },
    });
    assert.strictEqual(fs.readFileSync(target, 'utf8'), 'async');
    assert.deepStrictEqual(fs.readdirSync(dir), ['f.json']);
  });

  it('gives up on a rename that keeps being refused, cleaning up, and does not retry other errors', () => {
    const target = path.join(dir, 'f.json');
    fs.writeFileSync(target, 'old');
    let calls = 0;
    const fail = (code: string) => () => {
      calls++;
      throw Object.assign(new Error(code), { code });
    };
    assert.throws(() => writeFileAtomicSync(target, 'new', { retryRename: true, rename: fail('EPERM') }), /EPERM/);
    assert.ok(calls > 1, 'EPERM was retried');
    calls = 0;
    assert.throws(() => writeFileAtomicSync(target, 'new', { retryRename: true, rename: fail('ENOSPC') }), /ENOSPC/);
    assert.strictEqual(calls, 1, 'ENOSPC is not retried');
    assert.deepStrictEqual(fs.readdirSync(dir), ['f.json']);
    assert.strictEqual(fs.readFileSync(target, 'utf8'), 'old');
  });
});
