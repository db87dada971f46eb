// No source file over 600 lines (docs/layout.md, the rules): a file that grows past it holds more than one
// job and is split by job. No file is excepted.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '../../../..');
export const MAX_LINES = 600;

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.(ts|mts|cts)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

/** A file's lines as an editor counts them (a final newline does not open another line). */
export function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('layout: file size', () => {
  it(`every .ts file under src/ and webview/ has at most ${MAX_LINES} lines`, () => {
    const files = ['src', 'webview'].flatMap((d) => sourceFiles(path.join(root, d)));
    assert.ok(files.length > 200, `${files.length} source files`);
    const over = files
      .map((f) => ({ file: path.relative(root, f).split(path.sep).join('/'), lines: lineCount(fs.readFileSync(f, 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    assert.deepStrictEqual(over, [], `split these by job: ${over.join(', ')}`);
  });

  it('counts lines as an editor does', () => {
    assert.strictEqual(lineCount(''), 0);
    assert.strictEqual(lineCount('a'), 1);
    assert.strictEqual(lineCount('a\n'), 1);
    assert.strictEqual(lineCount('a\nb'), 2);
    assert.strictEqual(lineCount('a\n\n'), 2);
    assert.strictEqual(lineCount(`${'x\n'.repeat(601)}`), 601);
  });
});
