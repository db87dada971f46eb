// The extension's public API (src/api.ts) is what the README documents, member for member.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { PUBLIC_API_MEMBERS } from '../../../src/api';

const root = path.resolve(__dirname, '../../../..');

describe('public API', () => {
  it('the README table "For other extensions" lists exactly the members of TinkerStudioApi', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const section = readme.split('\n## For other extensions\n')[1]?.split('\n## ')[0];
    assert.ok(section, 'README.md has a "For other extensions" section');
    const documented = [...section.matchAll(/^\| `(\w+)(?:\(\))?` \|/gm)].map((m) => m[1]);
    assert.deepStrictEqual(documented.sort(), [...PUBLIC_API_MEMBERS].sort());
  });

  it('the interface declares exactly the listed members', () => {
    const source = fs.readFileSync(path.join(root, 'src/api.ts'), 'utf8');
    const body = source.split('export interface TinkerStudioApi {')[1]?.split('\n}')[0];
    assert.ok(body, 'src/api.ts declares TinkerStudioApi');
    const declared = [...body.matchAll(/^ {2}(?:readonly )?(\w+)[(:?]/gm)].map((m) => m[1]);
    assert.deepStrictEqual(declared.sort(), [...PUBLIC_API_MEMBERS].sort());
  });
});
