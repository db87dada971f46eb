// Every relative link and #anchor a reader can follow resolves: README.md, docs/*.md, the walkthrough's
// media, package.json's markdown descriptions (command: links name a contributed command) and the
// docs pages the extension's source names ("see docs/….md#…"). A moved heading or page fails here.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '../../../..');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

/** Markdown text outside fenced code blocks, line by line with 1-based numbers. */
function prose(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) out.push([i + 1, line]);
  });
  return out;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let set = anchorCache.get(file);
  if (!set) {
    set = new Set();
    const seen = new Map<string, number>();
    for (const [, line] of prose(fs.readFileSync(file, 'utf8'))) {
      const m = /^#{1,6} (.*)$/.exec(line);
      if (!m) continue;
      const base = slug(m[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      set.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, set);
  }
  return set;
}

/** Why `target` (a link written in `from`) does not resolve, or undefined when it does. */
function broken(from: string, target: string): string | undefined {
  if (/^(https?|mailto|vscode|command):/.test(target)) return undefined;
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const dest = file === '' ? from : path.resolve(path.dirname(from), decodeURI(file));
  if (!fs.existsSync(dest)) return `${file} does not exist`;
  if (anchor !== undefined && dest.endsWith('.md') && !anchorsOf(dest).has(anchor)) {
    return `${path.relative(root, dest)} has no heading #${anchor}`;
  }
  return undefined;
}

/** Each inline link or image target of a markdown text, with its line. */
function links(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (const [n, line] of prose(text)) {
    const code = line.replace(/`[^`]*`/g, '');
    for (const m of code.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push([n, m[1]!]);
  }
  return out;
}

function markdownFiles(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const walkthrough: string[] = [];
  for (const w of pkg.contributes?.walkthroughs ?? []) {
    for (const s of w.steps ?? []) if (typeof s.media?.markdown === 'string') walkthrough.push(s.media.markdown);
  }
  const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs, ...walkthrough].map((f) => path.join(root, f));
}

describe('docs: links', () => {
  it('every relative link and #anchor in README.md, docs/*.md and the walkthrough resolves', () => {
    const bad: string[] = [];
    for (const file of markdownFiles()) {
      for (const [n, target] of links(fs.readFileSync(file, 'utf8'))) {
        const why = broken(file, target);
        if (why) bad.push(`${path.relative(root, file)}:${n}: (${target}) — ${why}`);
      }
    }
    assert.deepStrictEqual(bad, []);
  });

  it("package.json's walkthrough media exist and its markdown descriptions link only to what exists", () => {
    const pkgFile = path.join(root, 'package.json');
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
    const commands = new Set<string>((pkg.contributes.commands ?? []).map((c: { command: string }) => c.command));
    const bad: string[] = [];
    for (const w of pkg.contributes.walkthroughs ?? []) {
      for (const s of w.steps ?? []) {
        for (const key of ['image', 'markdown', 'svg'] as const) {
          const media = s.media?.[key];
          const images = typeof media === 'string' ? [media] : media && typeof media === 'object' ? Object.values(media) : [];
          for (const m of images as string[]) if (!fs.existsSync(path.join(root, m))) bad.push(`walkthrough step ${s.id}: media ${m} does not exist`);
        }
      }
    }
    const texts: Array<[string, string]> = [];
    const walk = (v: unknown, where: string): void => {
      if (typeof v === 'string') texts.push([where, v]);
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${where}[${i}]`));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${where}.${k}`);
    };
    walk(pkg.contributes, 'contributes');
    for (const [where, text] of texts) {
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        const cmd = /^command:([\w.]+)/.exec(target);
        if (cmd) {
          if (!commands.has(cmd[1]!)) bad.push(`${where}: (${target}) names no contributed command`);
          continue;
        }
        const why = broken(pkgFile, target);
        if (why) bad.push(`${where}: (${target}) — ${why}`);
      }
    }
    assert.deepStrictEqual(bad, []);
  });

  it('every docs page (and #anchor) the source\'s messages name exists', () => {
    const bad: string[] = [];
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(ts|mjs|js)$/.test(e.name)) {
          fs.readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
            // Comments may name the shared design docs outside the repository; messages may not.
            if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
            for (const m of line.matchAll(/\bdocs\/([\w.-]+\.md)(#[\w-]+)?/g)) {
              const why = broken(path.join(root, 'README.md'), `docs/${m[1]}${m[2] ?? ''}`);
              if (why) bad.push(`${path.relative(root, p)}:${i + 1}: docs/${m[1]}${m[2] ?? ''} — ${why}`);
            }
          });
        }
      }
    };
    walk(path.join(root, 'src'));
    assert.deepStrictEqual(bad, []);
  });
});
