// Files parsed once and kept by path (the spec CodeLens's run configs): a refresh with nothing changed
// reads no file; a changed, replaced or removed file is read (or forgotten) again.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ParsedFileCache } from '../../../src/core/fs/parsedFileCache';

describe('parsed file cache', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-file-cache-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function counted() {
    const reads: string[] = [];
    const parses: string[] = [];
    const cache = new ParsedFileCache(
      (text: string) => {
        parses.push(text);
        return text.toUpperCase();
      },
      async (file) => {
        reads.push(file);
        return fs.promises.readFile(file, 'utf8');
      },
    );
    return { cache, reads, parses };
  }

  it('reads and parses a file once while it does not change', async () => {
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, 'a');
    const { cache, reads, parses } = counted();
    for (let i = 0; i < 5; i++) assert.strictEqual(await cache.get(file), 'A');
    assert.deepStrictEqual(reads, [file]);
    assert.deepStrictEqual(parses, ['a']);
  });

  it('reads again when the file is rewritten with another size, replaced by a rename, or given another modification time', async () => {
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, 'a');
    const { cache, reads } = counted();
    assert.strictEqual(await cache.get(file), 'A');
    fs.writeFileSync(file, 'bb');
    assert.strictEqual(await cache.get(file), 'BB');
    const tmp = path.join(dir, 'tmp');
    fs.writeFileSync(tmp, 'cc');
    fs.renameSync(tmp, file);
    assert.strictEqual(await cache.get(file), 'CC');
    fs.writeFileSync(file, 'dd');
    const t = new Date(Date.UTC(2020, 0, 1));
    fs.utimesSync(file, t, t);
    assert.strictEqual(await cache.get(file), 'DD');
    assert.strictEqual(await cache.get(file), 'DD');
    assert.strictEqual(reads.length, 4);
  });

  it('a missing file is undefined and read again once it appears; pruned entries are read again', async () => {
    const file = path.join(dir, 'config.json');
    const { cache, reads } = counted();
    assert.strictEqual(await cache.get(file), undefined);
    assert.strictEqual(reads.length, 0, 'a missing file is not read');
    fs.writeFileSync(file, 'a');
    assert.strictEqual(await cache.get(file), 'A');
    fs.rmSync(file);
    assert.strictEqual(await cache.get(file), undefined);
    fs.writeFileSync(file, 'a');
    assert.strictEqual(await cache.get(file), 'A');
    cache.prune(() => true);
    assert.strictEqual(await cache.get(file), 'A');
    assert.strictEqual(reads.length, 2);
    cache.prune(() => false);
    assert.strictEqual(await cache.get(file), 'A');
    assert.strictEqual(reads.length, 3);
  });
});
