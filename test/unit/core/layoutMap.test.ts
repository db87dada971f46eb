// docs/layout.md's folder map stays current: every folder of src/core and src/vscode is in it.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';

const root = path.join(__dirname, '..', '..', '..', '..');

describe('layout: the folder map of docs/layout.md', () => {
  const doc = fs.readFileSync(path.join(root, 'docs', 'layout.md'), 'utf8');
  const start = doc.indexOf('## The folder map');
  const map = doc.slice(doc.indexOf('```', start) + 3, doc.indexOf('```', doc.indexOf('```', start) + 3));
  const folders = (dir: string) => fs.readdirSync(path.join(root, dir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

  for (const layer of ['src/core', 'src/vscode']) {
    it(`names every folder of ${layer}`, () => {
      const missing = folders(layer).filter((f) => !new RegExp(`(^|\\s)${f}/`, 'm').test(map));
      assert.deepStrictEqual(missing, [], `docs/layout.md's folder map lacks ${missing.map((f) => `${layer}/${f}/`).join(', ')}`);
    });
  }
});
