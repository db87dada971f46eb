// The archive unpacker on tar files written by Python's tarfile (ustar, pax and GNU long names):
// regular files and folders land inside the destination; an entry that would escape it is refused.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TarFormatError, extractTar } from '../../../src/core/checkpoints/tar';

function pythonTar(file: string, format: 'USTAR' | 'PAX' | 'GNU', members: Array<[string, string | null]>): void {
  const script = `
import io, sys, tarfile, json
members = json.loads(sys.argv[2])
with tarfile.open(sys.argv[1], "w", format=getattr(tarfile, sys.argv[3] + "_FORMAT")) as t:
    for name, text in members:
        info = tarfile.TarInfo(name)
        if text is None:
            info.type = tarfile.DIRTYPE
            t.addfile(info)
        else:
            data = text.encode()
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
`;
  const r = spawnSync('python3', ['-c', script, file, JSON.stringify(members), format], { encoding: 'utf8' });
  assert.strictEqual(r.status, 0, r.stderr);
}

describe('Checkpoint archive unpacking (tar)', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-tar-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const format of ['USTAR', 'PAX', 'GNU'] as const) {
    it(`unpacks files and folders of a ${format} archive, long names included`, async () => {
      const long = `${'d'.repeat(120)}/weights.bin`;
      const tar = path.join(dir, 'a.tar');
      pythonTar(tar, format, [
        ['adapter_config.json', '{"r": 8}'],
        ['sub', null],
        ['sub/empty.txt', ''],
        ...(format === 'USTAR' ? [] : [[long, 'x'.repeat(3000)] as [string, string]]),
      ]);
      const files = await extractTar(tar, path.join(dir, 'out'));
      assert.deepStrictEqual(files.sort(), ['adapter_config.json', 'sub/empty.txt', ...(format === 'USTAR' ? [] : [long])].sort());
      assert.strictEqual(fs.readFileSync(path.join(dir, 'out', 'adapter_config.json'), 'utf8'), '{"r": 8}');
      if (format !== 'USTAR') assert.strictEqual(fs.statSync(path.join(dir, 'out', long)).size, 3000);
    });
  }

  it('refuses an entry that would be written outside the folder', async () => {
    const tar = path.join(dir, 'evil.tar');
    pythonTar(tar, 'PAX', [['../evil.txt', 'gotcha']]);
    await assert.rejects(extractTar(tar, path.join(dir, 'out')), (e: unknown) => e instanceof TarFormatError && /outside the download folder/.test(e.message));
    assert.ok(!fs.existsSync(path.join(dir, 'evil.txt')));
  });

  it('refuses a damaged header and a cut-off archive', async () => {
    const tar = path.join(dir, 'a.tar');
    pythonTar(tar, 'USTAR', [['a.txt', 'y'.repeat(2000)]]);
    const bytes = fs.readFileSync(tar);
    const damaged = Buffer.from(bytes);
    damaged[10] = damaged[10]! ^ 0xff;
    fs.writeFileSync(path.join(dir, 'damaged.tar'), damaged);
    await assert.rejects(extractTar(path.join(dir, 'damaged.tar'), path.join(dir, 'o1')), /checksum mismatch/);
    fs.writeFileSync(path.join(dir, 'cut.tar'), bytes.subarray(0, 1024));
    await assert.rejects(extractTar(path.join(dir, 'cut.tar'), path.join(dir, 'o2')), /ends in the middle of "a.txt"/);
  });
});
