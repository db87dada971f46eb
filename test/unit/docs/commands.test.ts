// docs/getting-started.md's "Commands" table names every command the palette shows, and nothing that is
// not a command: a new palette command without a row, or a row left after a rename, fails here.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '../../../..');

interface Command { command: string; title: string; category?: string }

/** The commands the palette shows: contributed, and not hidden from it by a `"when": "false"` entry. */
function paletteCommands(): Command[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const hidden = new Set<string>((pkg.contributes.menus?.commandPalette ?? []).filter((m: { when?: string }) => m.when === 'false').map((m: { command: string }) => m.command));
  return (pkg.contributes.commands as Command[]).filter((c) => !hidden.has(c.command));
}

/** The titles of the table's rows: "Tinker: A / B" is the two commands A and B of category Tinker. */
function tableTitles(): Array<{ title: string; line: number }> {
  const page = fs.readFileSync(path.join(root, 'docs', 'getting-started.md'), 'utf8');
  const lines = page.split('\n');
  const start = lines.indexOf('## Commands');
  assert.ok(start >= 0, 'docs/getting-started.md has a "## Commands" section');
  const out: Array<{ title: string; line: number }> = [];
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const m = /^\| Tinker: ([^|]+) \|/.exec(lines[i]!);
    if (!m) continue;
    for (const title of m[1]!.split(' / ')) out.push({ title: title.trim(), line: i + 1 });
  }
  return out;
}

describe('docs: commands table', () => {
  it('has a row for every command the palette shows', () => {
    const titles = new Set(tableTitles().map((t) => t.title));
    const missing = paletteCommands().filter((c) => c.category === 'Tinker' && !titles.has(c.title));
    assert.deepStrictEqual(missing.map((c) => `Tinker: ${c.title} (${c.command})`), [], 'add these to the Commands table of docs/getting-started.md');
  });

  it('names no command that does not exist', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const known = new Set((pkg.contributes.commands as Command[]).map((c) => c.title));
    const stale = tableTitles().filter((t) => !known.has(t.title));
    assert.deepStrictEqual(stale.map((t) => `docs/getting-started.md:${t.line}: Tinker: ${t.title}`), [], 'these rows name no contributed command');
  });
});
