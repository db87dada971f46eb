// The folder order of src/core (docs/layout.md, "The order of src/core"): a folder imports only the
// folders below it, in every form an import takes (`import type`, `export … from`, `import()`,
// `typeof import()`, `require()`). Folders on one level (the kinds) import none of each other.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { importSpecifiers } from './layout.test';

const root = path.resolve(__dirname, '../../../..');
const core = path.join(root, 'src/core');

/** From the bottom up; '.' is the files directly in src/core. Keep in step with docs/layout.md. */
export const CORE_ORDER: readonly (readonly string[])[] = [
  ['.', 'text'],
  ['config'],
  ['fs'],
  ['tinker'],
  ['cost'],
  ['tracking'],
  ['render'],
  ['openai'],
  ['spec'],
  ['data'],
  ['runs'],
  ['checkpoints'],
  ['export'],
  ['reward'],
  ['rollouts'],
  ['env'],
  ['training'],
  ['evals'],
  ['grpo', 'sft', 'dpo'],
  ['kinds'],
  ['distill'],
  ['experiments'],
  ['suite'],
  ['models'],
  ['playground'],
  ['agent'],
];

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.(ts|mts|cts)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

/** A file's folder in src/core ('.' for a file directly in it). */
function folderOf(file: string): string {
  const parts = path.relative(core, file).split(path.sep);
  return parts.length > 1 ? parts[0]! : '.';
}

export interface FolderImport {
  from: string;
  to: string;
  /** the file-level import behind it */
  via: string;
}

/** Every import from one folder of `dir` to another, read from the files' own imports. */
export function folderImports(files: readonly string[], dir: string, read: (f: string) => string = (f) => fs.readFileSync(f, 'utf8')): FolderImport[] {
  const out: FolderImport[] = [];
  const folder = (f: string) => {
    const parts = path.relative(dir, f).split(path.sep);
    return parts.length > 1 ? parts[0]! : '.';
  };
  for (const f of files) {
    for (const spec of importSpecifiers(f, read(f))) {
      if (!spec.startsWith('.')) continue;
      const target = path.resolve(path.dirname(f), spec);
      if (path.relative(dir, target).startsWith('..')) continue;
      const from = folder(f);
      const to = folder(target);
      if (from !== to) out.push({ from, to, via: `${path.relative(dir, f).split(path.sep).join('/')} -> ${spec}` });
    }
  }
  return out;
}

/** The imports that do not run down the order: to a folder on the same level or above (or one the order does not place). */
export function againstOrder(imports: readonly FolderImport[], order: readonly (readonly string[])[]): string[] {
  const level = new Map(order.flatMap((names, i) => names.map((n) => [n, i] as const)));
  return imports
    .filter((i) => !(level.get(i.to)! < level.get(i.from)!))
    .map((i) => `${i.from} -> ${i.to}: ${i.via}`);
}

describe('layout: the folder order of src/core', () => {
  const files = sourceFiles(core);
  const imports = folderImports(files, core);

  it('places every folder of src/core once', () => {
    const placed = CORE_ORDER.flat();
    assert.strictEqual(new Set(placed).size, placed.length, 'a folder is placed twice');
    const folders = [...new Set(files.map(folderOf))].sort();
    assert.deepStrictEqual(folders.filter((f) => !placed.includes(f)), [], 'folders of src/core the order does not place: add each to CORE_ORDER and docs/layout.md');
    assert.deepStrictEqual(placed.filter((f) => !folders.includes(f)).sort(), [], 'the order places folders that are gone');
  });

  it('every folder imports only the folders below it (type-only and dynamic imports count)', () => {
    assert.ok(imports.length > 100, `${imports.length} imports between folders`);
    assert.deepStrictEqual(againstOrder(imports, CORE_ORDER), []);
  });

  it('docs/layout.md states the same order', () => {
    const doc = fs.readFileSync(path.join(root, 'docs/layout.md'), 'utf8');
    const start = doc.indexOf('## The order of src/core');
    assert.ok(start >= 0, 'docs/layout.md has "## The order of src/core"');
    const block = doc.slice(doc.indexOf('```', start) + 3, doc.indexOf('```', doc.indexOf('```', start) + 3));
    // one line per level, from the top down: "agent/", "grpo/ sft/ dpo/", "errors.ts text/" (the files directly in src/core)
    const levels = block
      .split('\n')
      .map((l) => l.split(/\s{2,}/)[0]!.trim())
      .filter((l) => l !== '')
      .map((l) => l.split(/\s+/).map((n) => (n.endsWith('.ts') ? '.' : n.replace(/\/$/, ''))));
    assert.deepStrictEqual(levels.reverse(), CORE_ORDER.map((l) => [...l]));
  });

  it('finds an import up the order, a type-only or dynamic one, and one between peers', () => {
    const dir = '/x/core';
    const text: Record<string, string> = {
      '/x/core/low/a.ts': "import type { B } from '../high/b';\n",
      '/x/core/high/b.ts': "import { a } from '../low/a';\nconst c = import('../peer/c');\n",
      '/x/core/peer/c.ts': "export type D = typeof import('../high/b');\n",
      '/x/core/top.ts': "import { a } from './low/a';\n",
    };
    const found = folderImports(Object.keys(text), dir, (f) => text[f]!);
    assert.deepStrictEqual(againstOrder(found, [['low'], ['high', 'peer'], ['.']]), [
      'low -> high: low/a.ts -> ../high/b',
      'high -> peer: high/b.ts -> ../peer/c',
      'peer -> high: peer/c.ts -> ../high/b',
    ]);
    assert.deepStrictEqual(againstOrder(found, [['low'], ['high'], ['peer'], ['.']]).length, 2);
  });
});
