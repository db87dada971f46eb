// A kind is found through the kinds table, never named by hand (docs/layout.md, "How to add a kind"):
// outside the kind's own folder (src/core/<kind>/) no code compares with a kind's id or types a union
// of kind ids. A comparison outside is a dispatch the next kind would have to edit.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { SPEC_KIND_IDS } from '../../../src/core/spec/kinds';

const root = path.resolve(__dirname, '../../../..');

/** Files that may name a kind's id in a comparison, each with why (none today). */
const ALLOWED: Readonly<Record<string, string>> = {};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.(ts|mts|cts)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

/** The text without its comments (a comment may say "an SFT run"; a `//` inside a string such as a URL stays). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|\s)\/\/.*$/gm, '$1');
}

/** `=== 'dpo'`, `'sft' !==`, `case 'grpo':` and `'grpo' | 'sft'` in code, as `line: text`. */
export function kindNamings(text: string, ids: readonly string[]): string[] {
  const id = `(['"\`])(?:${ids.join('|')})\\1`;
  const patterns = [new RegExp(`[!=]==?\\s*${id}`), new RegExp(`${id}\\s*[!=]==?`), new RegExp(`\\bcase\\s+${id}\\s*:`), new RegExp(`(?<!\\|)\\|\\s*${id}`), new RegExp(`${id}\\s*\\|(?!\\|)`)];
  return withoutComments(text)
    .split('\n')
    .flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('kinds: no kind named by hand outside its folder', () => {
  it('finds comparisons and unions of kind ids, not comments or other strings', () => {
    const ids = ['grpo', 'sft', 'dpo'];
    assert.deepStrictEqual(kindNamings("if (kind === 'dpo') x();", ids), ["1: if (kind === 'dpo') x();"]);
    assert.deepStrictEqual(kindNamings("a\nconst s = 'sft' !== k;", ids), ["2: const s = 'sft' !== k;"]);
    assert.deepStrictEqual(kindNamings('switch (k) {\n  case "grpo":', ids), ['2: case "grpo":']);
    assert.deepStrictEqual(kindNamings("function f(kind: 'grpo' | 'sft') {}", ids), ["1: function f(kind: 'grpo' | 'sft') {}"]);
    assert.deepStrictEqual(kindNamings("type K = Other | 'dpo';", ids), ["1: type K = Other | 'dpo';"]);
    assert.deepStrictEqual(kindNamings("// kind === 'dpo' in a comment\n/* 'grpo' | 'sft' */\nstartRun(s, 'grpo', arg);\nconst u = 'https://x' || 'sft';", ids), []);
  });

  it('src/ and webview/ compare with no kind id outside src/core/<kind>/', () => {
    assert.ok(SPEC_KIND_IDS.length >= 3, SPEC_KIND_IDS.join(', '));
    const own = SPEC_KIND_IDS.map((k) => `src/core/${k}/`);
    const files = ['src', 'webview'].flatMap((d) => sourceFiles(path.join(root, d))).map((f) => path.relative(root, f).split(path.sep).join('/'));
    assert.ok(files.length > 200, `${files.length} source files`);
    const found = files
      .filter((f) => !own.some((o) => f.startsWith(o)))
      .flatMap((f) => kindNamings(fs.readFileSync(path.join(root, f), 'utf8'), SPEC_KIND_IDS).map((hit) => ({ file: f, hit })));
    const unexpected = found.filter((h) => ALLOWED[h.file] === undefined).map((h) => `${h.file}:${h.hit}`);
    assert.deepStrictEqual(unexpected, [], `look the kind up in the kinds table (src/core/kinds/registry.ts) or give the descriptor a field: ${unexpected.join('\n')}`);
    const stale = Object.keys(ALLOWED).filter((f) => !found.some((h) => h.file === f));
    assert.deepStrictEqual(stale, [], 'allowed files that no longer name a kind: remove them from ALLOWED');
  });
});
