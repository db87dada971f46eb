// The build finds the webview panels itself (scripts/lib/panels.mjs) and fails on a panel that is
// declared but missing, or present but not declared; the host code opens only panels that exist.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const root = path.resolve(__dirname, '../../../..');

interface Panels {
  entries: Array<[string, string]>;
  problems: string[];
}

/** scripts/lib/panels.mjs's findPanels(dir), run as the build runs it (an ES module in Node). */
function findPanels(dir: string): Panels {
  const lib = path.join(root, 'scripts/lib/panels.mjs');
  const script = `import { findPanels } from ${JSON.stringify(lib)}; process.stdout.write(JSON.stringify(findPanels(${JSON.stringify(dir)})));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.strictEqual(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Panels;
}

/** A project with these panel folders (a folder given without main.ts has none) and activation events. */
function project(folders: Record<string, boolean>, events: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'panels-'));
  fs.mkdirSync(path.join(dir, 'webview/shared'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'webview/shared/dom.ts'), '');
  fs.writeFileSync(path.join(dir, 'webview/README.md'), '');
  for (const [name, hasMain] of Object.entries(folders)) {
    fs.mkdirSync(path.join(dir, 'webview', name));
    if (hasMain) fs.writeFileSync(path.join(dir, 'webview', name, 'main.ts'), '');
  }
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ activationEvents: ['onStartupFinished', ...events] }));
  return dir;
}

describe('webview panels', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const make = (folders: Record<string, boolean>, events: string[]) => {
    const d = project(folders, events);
    dirs.push(d);
    return d;
  };

  it('the project has its nine panels, each declared, and no problem', () => {
    const p = findPanels(root);
    assert.deepStrictEqual(p.problems, []);
    assert.deepStrictEqual(p.entries, [
      ['webview/breakdown/main.ts', 'breakdown'],
      ['webview/compare/main.ts', 'compare'],
      ['webview/envplay/main.ts', 'envplay'],
      ['webview/evals/main.ts', 'evals'],
      ['webview/metrics/main.ts', 'metrics'],
      ['webview/modelcard/main.ts', 'modelcard'],
      ['webview/pairs/main.ts', 'pairs'],
      ['webview/playground/main.ts', 'playground'],
      ['webview/suite/main.ts', 'suite'],
    ]);
  });

  it('a new panel folder with its main.ts and activation event is built without any list to edit', () => {
    const p = findPanels(make({ metrics: true, compare: true }, ['onWebviewPanel:tinker.metrics', 'onWebviewPanel:tinker.compare']));
    assert.deepStrictEqual(p, { entries: [['webview/compare/main.ts', 'compare'], ['webview/metrics/main.ts', 'metrics']], problems: [] });
  });

  it('fails on a panel declared in package.json whose entry is missing, and on a panel folder without main.ts', () => {
    const p = findPanels(make({ metrics: true, evals: false }, ['onWebviewPanel:tinker.metrics', 'onWebviewPanel:tinker.evals', 'onWebviewPanel:tinker.compare']));
    assert.deepStrictEqual(p.problems, [
      'webview/evals/ is a panel folder without its entry webview/evals/main.ts',
      'package.json declares the panel compare (onWebviewPanel:tinker.compare), but webview/compare/main.ts is missing',
    ]);
  });

  it('fails on a panel folder that package.json does not declare', () => {
    const p = findPanels(make({ metrics: true, sweeps: true }, ['onWebviewPanel:tinker.metrics']));
    assert.deepStrictEqual(p.problems, ['webview/sweeps/ is a panel, but package.json has no activation event onWebviewPanel:tinker.sweeps']);
  });

  it('the build fails on a declared panel whose entry is missing, naming it, before it bundles anything', () => {
    // the build script run on a project whose package.json declares a panel that has no folder
    const dir = make({ metrics: true }, ['onWebviewPanel:tinker.metrics', 'onWebviewPanel:tinker.compare']);
    fs.mkdirSync(path.join(dir, 'scripts/lib'), { recursive: true });
    for (const f of ['scripts/build.mjs', 'scripts/lib/panels.mjs']) fs.copyFileSync(path.join(root, f), path.join(dir, f));
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const r = spawnSync(process.execPath, [path.join(dir, 'scripts/build.mjs')], { cwd: dir, encoding: 'utf8' });
    assert.strictEqual(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /\[build\] package\.json declares the panel compare \(onWebviewPanel:tinker\.compare\), but webview\/compare\/main\.ts is missing/);
    assert.ok(!fs.existsSync(path.join(dir, 'dist')), 'nothing was bundled');
  });

  it('every panel the host code opens (showPanelPage entry, view type) is a panel folder', () => {
    const panels = new Set(findPanels(root).entries.map(([, name]) => name));
    const host = fs.readdirSync(path.join(root, 'src/vscode'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const opened: string[] = [];
    for (const f of host) {
      const text = fs.readFileSync(path.join(root, 'src/vscode', f), 'utf8');
      for (const m of text.matchAll(/showPanelPage\([^)]*\{\s*entry:\s*'([^']+)'/g)) opened.push(m[1]);
      for (const m of text.matchAll(/_VIEW_TYPE = 'tinker\.([^']+)'/g)) opened.push(m[1]);
    }
    assert.strictEqual(opened.length, 18, `nine entries and nine view types: ${opened.join(', ')}`);
    assert.deepStrictEqual(opened.filter((p) => !panels.has(p)), []);
  });
});
