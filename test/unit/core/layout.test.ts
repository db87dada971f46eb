// The folder rules of docs/layout.md, read from the code's own imports (every form: `import type`,
// `export … from`, `import()`, `typeof import()`, `require()`):
//   - no import cycle anywhere in src/ and webview/;
//   - every file of the extension layer sits in a feature folder of src/vscode/ or in its common/,
//     common/ imports no feature, and the feature folders import each other without a cycle;
//   - src/ and webview/ meet only in src/protocol/, which imports neither of them.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import ts from 'typescript';

const root = path.resolve(__dirname, '../../../..');
const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.(ts|mts|cts)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

/** The module specifiers a TypeScript source names, in every form an import takes (comments and template strings are not code). */
export function importSpecifiers(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const literal = (n: ts.Node | undefined) => {
    if (n && ts.isStringLiteralLike(n)) out.push(n.text);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) literal(n.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) literal(n.moduleReference.expression);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) literal(n.argument.literal);
    else if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))) literal(n.arguments[0]);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The file a relative specifier names (TypeScript's resolution of extensionless and index imports); undefined for a package. */
function resolveRelative(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [base, `${base}.ts`, `${base}.d.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')];
  const found = candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
  if (!found) throw new Error(`${rel(from)}: cannot resolve the import '${spec}'`);
  return found;
}

interface Graph {
  /** file → the source files it imports (relative imports of .ts files) */
  edges: Map<string, string[]>;
  /** file → the packages it imports */
  packages: Map<string, string[]>;
}

function importGraph(files: string[]): Graph {
  const edges = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const f of files) {
    const specs = importSpecifiers(f, fs.readFileSync(f, 'utf8'));
    edges.set(f, [...new Set(specs.flatMap((s) => resolveRelative(f, s) ?? []).filter((t) => /\.ts$/.test(t)))]);
    packages.set(f, [...new Set(specs.filter((s) => !s.startsWith('.')))]);
  }
  return { edges, packages };
}

/** The import cycles of a graph: each strongly connected set of two files or more (or a file importing itself), as its edges. */
export function importCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so that a deep chain of imports cannot overflow the stack
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const targets = edges.get(top.node) ?? [];
      if (top.i < targets.length) {
        const t = targets[top.i++];
        if (!index.has(t)) {
          index.set(t, next);
          low.set(t, next++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, i: 0 });
        } else if (onStack.has(t)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(t)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) !== index.get(top.node)) continue;
      const members: string[] = [];
      let m: string;
      do {
        m = stack.pop()!;
        onStack.delete(m);
        members.push(m);
      } while (m !== top.node);
      const inSet = new Set(members);
      const within = members.sort().flatMap((a) => (edges.get(a) ?? []).filter((b) => inSet.has(b)).map((b) => `${a} -> ${b}`));
      if (members.length > 1 || within.length > 0) cycles.push(within);
    }
  }
  return cycles;
}

const files = [...sourceFiles(path.join(root, 'src')), ...sourceFiles(path.join(root, 'webview'))];
const graph = importGraph(files);
const under = (dir: string) => (f: string) => rel(f).startsWith(`${dir}/`);

describe('layout', () => {
  it('reads the imports of src/ and webview/', () => {
    assert.ok(files.length > 200, `${files.length} source files`);
    assert.ok([...graph.edges.values()].reduce((n, e) => n + e.length, 0) > 500, 'the graph has the imports');
  });

  it('has no import cycle in src/ and webview/ (type-only imports count)', () => {
    const cycles = importCycles(new Map([...graph.edges].map(([f, ts_]) => [rel(f), ts_.map(rel)])));
    assert.deepStrictEqual(cycles, []);
  });

  it('every file under src/vscode/ sits in a feature folder or in common/', () => {
    const vscodeDir = path.join(root, 'src/vscode');
    const loose = fs.readdirSync(vscodeDir, { withFileTypes: true }).filter((e) => !e.isDirectory()).map((e) => `src/vscode/${e.name}`);
    assert.deepStrictEqual(loose, []);
    assert.ok(fs.statSync(path.join(vscodeDir, 'common')).isDirectory(), 'src/vscode/common/ exists');
  });

  it('common/ of the extension layer imports no feature folder, and the feature folders import each other without a cycle', () => {
    const folderOf = (f: string) => rel(f).split('/')[2];
    const folders = new Map<string, Set<string>>();
    for (const f of files.filter(under('src/vscode'))) {
      const from = folderOf(f);
      const to = graph.edges.get(f)!.filter(under('src/vscode')).map(folderOf).filter((t) => t !== from);
      folders.set(from, new Set([...(folders.get(from) ?? []), ...to]));
    }
    assert.ok(folders.size >= 8, `${folders.size} folders`);
    assert.deepStrictEqual([...folders.get('common')!], []);
    assert.deepStrictEqual(importCycles(new Map([...folders].map(([k, v]) => [k, [...v]]))), []);
  });

  it('src/ never imports webview/', () => {
    const offenders = files.filter(under('src')).flatMap((f) => graph.edges.get(f)!.filter(under('webview')).map((t) => `${rel(f)} -> ${rel(t)}`));
    assert.deepStrictEqual(offenders, []);
  });

  it('webview/ imports src/ only through src/protocol/', () => {
    const offenders = files
      .filter(under('webview'))
      .flatMap((f) => graph.edges.get(f)!.filter((t) => under('src')(t) && !under('src/protocol')(t)).map((t) => `${rel(f)} -> ${rel(t)}`));
    assert.deepStrictEqual(offenders, []);
  });

  it('src/protocol/ imports neither side: only itself and zod', () => {
    const protocol = files.filter(under('src/protocol'));
    assert.ok(protocol.length >= 5, 'the protocol folder has its files');
    const offenders = protocol.flatMap((f) => [
      ...graph.edges.get(f)!.filter((t) => !under('src/protocol')(t)).map((t) => `${rel(f)} -> ${rel(t)}`),
      ...graph.packages.get(f)!.filter((p) => p !== 'zod').map((p) => `${rel(f)} -> ${p}`),
    ]);
    assert.deepStrictEqual(offenders, []);
  });

  it('the import reader sees every form of an import, and no import-shaped text in strings or comments', () => {
    const text = [
      "import type { A } from './a';",
      "import { type B } from './b';",
      "import * as c from './c';",
      "import './d.css';",
      "export * from './e';",
      "export type { F } from './f';",
      "const g = await import('./g');",
      "type H = typeof import('./h').H;",
      "const i = require('./i');",
      "import j = require('./j');",
      "const k = `import x from './not-k';`;",
      "// import y from './not-l';",
      "/* export * from './not-m'; */",
      "const n = \"import z from './not-n'\";",
    ].join('\n');
    assert.deepStrictEqual(importSpecifiers('x.ts', text), ['./a', './b', './c', './d.css', './e', './f', './g', './h', './i', './j']);
  });

  it('the cycle finder finds a cycle of type-only imports, a self-import and a long cycle, and nothing in a tree', () => {
    const g = new Map<string, string[]>([
      ['a', ['b']],
      ['b', ['a', 'c']],
      ['c', ['c']],
      ['d', ['e']],
      ['e', ['f']],
      ['f', ['g']],
      ['g', ['d', 'a']],
      ['t1', ['t2', 't3']],
      ['t2', ['t3']],
      ['t3', []],
    ]);
    const cycles = importCycles(g).map((c) => c.sort());
    assert.deepStrictEqual(cycles.sort((x, y) => x[0].localeCompare(y[0])), [
      ['a -> b', 'b -> a'],
      ['c -> c'],
      ['d -> e', 'e -> f', 'f -> g', 'g -> d'],
    ]);
    assert.deepStrictEqual(importCycles(new Map([['x', ['y']], ['y', []]])), []);
    // the real reader and finder together: a type-only import closes the loop
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
    try {
      fs.writeFileSync(path.join(dir, 'one.ts'), "import type { Two } from './two';\nexport type One = Two;\n");
      fs.writeFileSync(path.join(dir, 'two.ts'), "export type Two = typeof import('./one');\n");
      const small = importGraph([path.join(dir, 'one.ts'), path.join(dir, 'two.ts')]);
      assert.strictEqual(importCycles(small.edges).length, 1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
