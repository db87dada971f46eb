// No spread of a token array into a call's arguments where prompts and requests flow (issue 43):
// `out.push(...tokens)` passes each element as an argument and throws "Maximum call stack size
// exceeded" past ~120k, so a long prompt answered 500 and a long SFT chat threw a RangeError.
// The renderers, the tokenizers and the engine's server and model take loops instead.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const root = path.resolve(__dirname, '../../../..');
const FOLDERS = ['src/core/render', 'src/engine/server', 'src/engine/model'];
/** spreads of bounded lists: a worker call's own arguments */
const ALLOWED = new Set(['src/engine/model/engineWorker.ts: fn(...msg.args)']);

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** "file: callee(...argument)" for every spread argument of a call or `new` in `text`. */
function spreadArguments(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isCallExpression(n) || ts.isNewExpression(n)) && n.arguments) {
      for (const a of n.arguments) if (ts.isSpreadElement(a)) out.push(`${file}: ${n.expression.getText(sf)}(...${a.expression.getText(sf)})`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('no spread arguments where tokens flow', () => {
  it(`${FOLDERS.join(', ')}: loops, not f(...array)`, () => {
    const found = FOLDERS.flatMap((d) => tsFiles(path.join(root, d))).flatMap((f) => spreadArguments(path.relative(root, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8')));
    assert.deepStrictEqual(found.filter((s) => !ALLOWED.has(s)), []);
  });

  it('the check finds a spread argument in a call, a method call and new, and not an array literal', () => {
    const found = spreadArguments('x.ts', 'out.push(...a); Math.max(...b); new Set(...c); const d = [...e]; f({ ...g });');
    assert.deepStrictEqual(found, ['x.ts: out.push(...a)', 'x.ts: Math.max(...b)', 'x.ts: Set(...c)']);
  });
});
