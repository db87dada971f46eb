// docs/cli.md prints every command line of `tinker-studio --help`, as the CLI prints it: a new command or
// option in the CLI's usage without the page following it fails here, and so does a page line the CLI
// no longer has.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { USAGE } from '../../../src/cli/args';

const root = path.resolve(__dirname, '../../../..');

/** "tinker-studio …" command lines, continuation lines joined, trailing "  (comment)" dropped, spaces collapsed. */
function commandLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^usage:\s*/, '').replace(/\s{2,}\([^)]*\)\s*$/, '').trim();
    if (line.startsWith('tinker-studio ')) out.push(line);
    else if (/^\s+\[/.test(raw) && out.length > 0) out[out.length - 1] += ` ${line}`;
  }
  return out.map((l) => l.replace(/\s+/g, ' '));
}

/** The command lines of the page's ```text blocks. */
function pageLines(): string[] {
  const page = fs.readFileSync(path.join(root, 'docs', 'cli.md'), 'utf8');
  return [...page.matchAll(/```text\n([\s\S]*?)```/g)].flatMap((m) => commandLines(m[1]!));
}

describe('docs: the CLI page', () => {
  it('prints every command line of the CLI usage', () => {
    const page = new Set(pageLines());
    const missing = commandLines(USAGE).filter((l) => !page.has(l));
    assert.deepStrictEqual(missing, [], 'docs/cli.md lacks these lines of `tinker-studio --help` (or prints them differently)');
  });

  it('prints no command line the CLI does not have', () => {
    const cli = new Set(commandLines(USAGE));
    const stale = pageLines().filter((l) => !cli.has(l));
    assert.deepStrictEqual(stale, [], 'docs/cli.md prints these lines, which `tinker-studio --help` does not');
  });
});
