// The docs' runnable examples: an HTML comment right before a fenced block marks it as a file of an
// example (`<!-- runnable: <id> file=<name> -->`) or as the commands that run it (`<!-- runnable: <id> run -->`).
// This module reads the marks of markdown pages into examples and names every malformed set by page and
// line, so that runnable.test.ts can run each example as printed (docs/contributing.md, "Runnable examples").

export interface Place {
  page: string;
  line: number;
}

export interface ExampleFile extends Place {
  name: string;
  text: string;
}

/** One command of a run block: its words after `node dist/cli.js`, as a shell would split them. */
export interface ExampleCommand extends Place {
  printed: string;
  args: string[];
}

export interface RunnableExample {
  id: string;
  files: ExampleFile[];
  commands: ExampleCommand[];
  /** where its run block is printed (a run block may be printed on several pages, identically) */
  runAt: Place[];
}

const MARK = /^<!--\s*runnable:/;
const MARK_SYNTAX = /^<!-- runnable: ([a-z0-9][a-z0-9-]*) (?:file=([^\s/\\]+)|(run)) -->$/;
const CLI = 'node dist/cli.js ';
// what a shell would do more than split words: not run by the test, so not allowed in a run block
const SHELL = /[|&;<>$`(){}*?~\\]/;

interface Block extends Place {
  id: string;
  file?: string;
  fence: string;
  body: string;
}

/** The marked fenced blocks of a page, and its malformed marks as `page:line: what to fix`. */
function markedBlocks(page: string, text: string): { blocks: Block[]; problems: string[] } {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  const problems: string[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    const at = `${page}:${i + 1}`;
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced || !MARK.test(line.trim())) return;
    const m = MARK_SYNTAX.exec(line.trim());
    if (!m) {
      problems.push(`${at}: a malformed runnable mark "${line.trim()}": write <!-- runnable: <example-id> file=<name> --> or <!-- runnable: <example-id> run --> (id: lower-case letters, digits, -; name: a file name without folders)`);
      return;
    }
    const open = /^(```+|~~~+)\s*([\w-]*)\s*$/.exec(lines[i + 1] ?? '');
    if (!open) {
      problems.push(`${at}: the runnable mark of "${m[1]}" is not followed by a fenced block on the next line`);
      return;
    }
    const end = lines.findIndex((l, j) => j > i + 1 && l.trim() === open[1]);
    if (end < 0) {
      problems.push(`${at}: the block after the runnable mark of "${m[1]}" is never closed`);
      return;
    }
    const body = lines.slice(i + 2, end).join('\n') + '\n';
    const name = m[2];
    if (name !== undefined && !shownToReader(name, lines, i, body)) {
      problems.push(`${at}: the page does not tell the reader the file's name "${name}": say it in the text just above the block or on the block's first line`);
    }
    blocks.push({ page, line: i + 1, id: m[1]!, ...(name !== undefined ? { file: name } : {}), fence: open[1]!, body });
  });
  return { blocks, problems };
}

/** The name is in the last line of text above the mark, or on the block's first line (a comment). */
function shownToReader(name: string, lines: readonly string[], markIndex: number, body: string): boolean {
  let j = markIndex - 1;
  while (j >= 0 && lines[j]!.trim() === '') j--;
  return (j >= 0 && lines[j]!.includes(name)) || (body.split('\n')[0] ?? '').includes(name);
}

/** Shell words of a simple command line; quotes ('…', "…") group words, nothing else is interpreted. */
function shellWords(line: string): string[] | undefined {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    if (m[3] !== undefined && /["']/.test(m[3])) return undefined;
    words.push(m[1] ?? m[2] ?? m[3]!);
  }
  return words;
}

/** The commands of a run block: blank lines and `#` comments skipped, each line `node dist/cli.js …`. */
function commandsOf(block: Block, problems: string[]): ExampleCommand[] {
  const out: ExampleCommand[] = [];
  block.body.split('\n').forEach((raw, k) => {
    const printed = raw.trim();
    if (printed === '' || printed.startsWith('#')) return;
    const at = `${block.page}:${block.line + 2 + k}`;
    const command = printed.replace(/\s+#.*$/, '');
    const words = command.startsWith(CLI) && !SHELL.test(command) ? shellWords(command.slice(CLI.length)) : undefined;
    if (!words) {
      problems.push(`${at}: a run block's command is the CLI as docs/cli.md prints it, "node dist/cli.js <command> …", with no shell syntax (got "${printed}")`);
      return;
    }
    out.push({ page: block.page, line: block.line + 2 + k, printed, args: words });
  });
  if (out.length === 0 && problems.length === 0) problems.push(`${block.page}:${block.line}: the run block of "${block.id}" has no command`);
  return out;
}

/**
 * The examples the pages mark, grouped by id across pages, and every problem of the marks: a
 * malformed mark, an example without a run block or without files, a file or run block given twice
 * with different text.
 */
export function readRunnableExamples(pages: ReadonlyArray<{ page: string; text: string }>): { examples: RunnableExample[]; problems: string[] } {
  const problems: string[] = [];
  const byId = new Map<string, RunnableExample & { runText?: string; runFirst?: Place }>();
  for (const { page, text } of pages) {
    const read = markedBlocks(page, text);
    problems.push(...read.problems);
    for (const b of read.blocks) {
      let ex = byId.get(b.id);
      if (!ex) byId.set(b.id, (ex = { id: b.id, files: [], commands: [], runAt: [] }));
      const here = `${b.page}:${b.line}`;
      if (b.file !== undefined) {
        const same = ex.files.find((f) => f.name === b.file);
        if (!same) ex.files.push({ page: b.page, line: b.line, name: b.file, text: b.body });
        else if (same.text !== b.body) problems.push(`${here}: the file "${b.file}" of "${b.id}" is printed differently at ${same.page}:${same.line}: print it once, or identically`);
      } else if (ex.runText === undefined) {
        ex.runText = b.body;
        ex.runFirst = { page: b.page, line: b.line };
        ex.runAt.push({ page: b.page, line: b.line });
        const own: string[] = [];
        ex.commands = commandsOf(b, own);
        problems.push(...own);
      } else if (ex.runText !== b.body) {
        problems.push(`${here}: "${b.id}" has another run block with different commands at ${ex.runFirst!.page}:${ex.runFirst!.line}: one example runs one set of commands`);
      } else ex.runAt.push({ page: b.page, line: b.line });
    }
  }
  for (const ex of byId.values()) {
    if (ex.runText === undefined) {
      const f = ex.files[0]!;
      problems.push(`${f.page}:${f.line}: "${ex.id}" has files but no run block: mark the block of its command <!-- runnable: ${ex.id} run -->`);
    } else if (ex.files.length === 0) {
      problems.push(`${ex.runFirst!.page}:${ex.runFirst!.line}: "${ex.id}" has a run block but no files: mark each file's block <!-- runnable: ${ex.id} file=<name> -->`);
    }
  }
  const examples = [...byId.values()].map(({ id, files, commands, runAt }) => ({ id, files, commands, runAt }));
  return { examples, problems };
}
