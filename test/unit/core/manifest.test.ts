// package.json is the extension's manifest: its contributions must hang together.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { COMMAND } from '../../../src/vscode/common/commandIds';

const root = path.resolve(__dirname, '../../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

describe('extension manifest', () => {
  it('activates only on its own views, commands and language, never on *', () => {
    for (const e of pkg.activationEvents as string[]) {
      assert.notStrictEqual(e, '*');
      assert.ok(!e.startsWith('onStartupFinished'), e);
    }
  });

  it('lists no activation event VS Code already implies from its contributions', () => {
    for (const e of pkg.activationEvents as string[]) assert.ok(!/^on(View|Language|Command):/.test(e), `${e} is implied by the contribution`);
  });

  it('says where it runs: a workspace extension, no virtual workspaces; has an icon and no placeholder repository', () => {
    assert.deepStrictEqual(pkg.extensionKind, ['workspace']);
    assert.strictEqual(pkg.capabilities.virtualWorkspaces.supported, false);
    assert.ok(fs.existsSync(path.join(root, pkg.icon)), pkg.icon);
    assert.ok(!/example\.invalid/.test(JSON.stringify(pkg.repository ?? '')), 'repository must be real or absent');
    assert.ok(fs.existsSync(path.join(root, 'CHANGELOG.md')));
  });

  it('every command link in welcome content and menus names a contributed command', () => {
    const commands = new Set((pkg.contributes.commands as Array<{ command: string }>).map((c) => c.command));
    for (const w of pkg.contributes.viewsWelcome as Array<{ contents: string }>) {
      for (const m of w.contents.matchAll(/\(command:([\w.]+)/g)) assert.ok(commands.has(m[1]!), `welcome link ${m[1]}`);
    }
    for (const items of Object.values(pkg.contributes.menus as Record<string, Array<{ command: string }>>)) {
      for (const i of items) assert.ok(commands.has(i.command), `menu item ${i.command}`);
    }
  });

  it('every command id the code names is a contributed command', () => {
    const commands = new Set((pkg.contributes.commands as Array<{ command: string }>).map((c) => c.command));
    for (const id of Object.values(COMMAND)) assert.ok(commands.has(id), `${id} is not in contributes.commands`);
  });

  it('every setting has a scope and a Markdown description; enum descriptions naming settings are Markdown', () => {
    const props = pkg.contributes.configuration.properties as Record<string, Record<string, unknown>>;
    const scopes = ['application', 'machine', 'machine-overridable', 'window', 'resource', 'language-overridable'];
    for (const [key, p] of Object.entries(props)) {
      assert.ok(scopes.includes(p.scope as string), `${key} has no valid scope`);
      assert.ok(typeof p.markdownDescription === 'string' && p.markdownDescription.length > 0, `${key} has no markdownDescription`);
      assert.strictEqual(p.description, undefined, `${key}: plain description besides the Markdown one`);
      for (const d of (p.enumDescriptions as string[] | undefined) ?? []) assert.ok(!/tinker\.\w/.test(d), `${key}: an enum description naming a setting must be a markdownEnumDescription (\`#tinker.…#\` links): ${d}`);
      for (const d of (p.markdownEnumDescriptions as string[] | undefined) ?? []) {
        for (const m of d.matchAll(/tinker\.\w+/g)) assert.ok(d.includes(`#${m[0]}#`), `${key}: ${m[0]} is not a setting link`);
      }
    }
  });

  it('names its files that exist: icon, grammar, language configuration, main', () => {
    for (const rel of [
      pkg.contributes.viewsContainers.activitybar[0].icon,
      ...pkg.contributes.grammars.map((g: { path: string }) => g.path),
      ...pkg.contributes.languages.map((l: { configuration: string }) => l.configuration),
    ]) {
      assert.ok(fs.existsSync(path.join(root, rel)), rel);
    }
    assert.strictEqual(pkg.main, './dist/extension.js');
  });

  it('keeps sources, tests and dev files out of the VSIX', () => {
    const ignore = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n');
    for (const p of ['src/**', 'test/**', 'out/**', 'node_modules/**', 'scripts/**', 'docs/layout.md']) assert.ok(ignore.includes(p), p);
  });
});
