// The dependency rule of the design: src/core and src/engine never import 'vscode'.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '../../../..');

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.(ts|js|mjs|cjs)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

const VSCODE_IMPORT = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]vscode['"]/;

describe('layering', () => {
  for (const layer of ['src/core', 'src/engine']) {
    it(`no file under ${layer} imports vscode`, () => {
      const files = sourceFiles(path.join(root, layer));
      assert.ok(files.length > 0, `${layer} has source files`);
      const offenders = files.filter((f) => VSCODE_IMPORT.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(root, f));
      assert.deepStrictEqual(offenders, []);
    });
  }

  it('the check recognises every form of a vscode import', () => {
    for (const line of [
      "import * as vscode from 'vscode';",
      'import { window } from "vscode";',
      "const vscode = require('vscode');",
      "const v = await import('vscode');",
      "import type { Uri } from 'vscode';",
    ]) {
      assert.ok(VSCODE_IMPORT.test(line), line);
    }
    assert.ok(!VSCODE_IMPORT.test("import { z } from 'zod'; // not vscode-languageclient"));
  });
});
