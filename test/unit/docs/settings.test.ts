// docs/settings.md lists every setting package.json contributes, and is exactly what
// `npm run docs:settings` writes from it: a new or changed setting without the page regenerated fails.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '../../../..');

describe('docs: settings page', () => {
  it('lists every contributed setting, and none that is gone', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const conf = pkg.contributes.configuration;
    const contributed = (Array.isArray(conf) ? conf : [conf]).flatMap((c: { properties?: object }) => Object.keys(c.properties ?? {}));
    const page = fs.readFileSync(path.join(root, 'docs', 'settings.md'), 'utf8');
    const listed = [...page.matchAll(/^\| `([\w.]+)` \|/gm)].map((m) => m[1]);
    assert.deepStrictEqual(listed.sort(), [...contributed].sort(), 'docs/settings.md is stale: run `npm run docs:settings`');
  });

  it('is what `npm run docs:settings` writes (descriptions, defaults and scopes too)', () => {
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'docs-settings.mjs'), '--check'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
  });
});
