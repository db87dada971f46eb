// The environment examples speak arith-chat's pretraining phrases verbatim (src/core/data/arithChat.ts,
// docs/engine.md), declare the calculator tool exactly, and their specs parse. The phrase check reads
// every string literal of every example env file (and of the docs' environment example): a literal
// that looks like one of the engine's user phrases must be that phrase exactly (its numbers as format
// placeholders), so a near miss ("What's 3 + 4?", "Wrong - try again") fails.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ARITH_PHRASES, CALCULATOR_TOOL } from '../../../src/core/data/arithChat';
import { parseGrpoSpecFile } from '../../../src/core/grpo/spec';
import { isEnvFile } from '../../../src/core/env/files';

const root = path.resolve(__dirname, '../../../..');
const read = (f: string) => fs.readFileSync(path.join(root, 'examples', f), 'utf8');

/** A placeholder for whatever fills a number in: %d, %s, {expr} (Python), ${expr} (JS). */
const HOLE = '\u0000';
const holes = (text: string) => text.replace(/\$\{[^}]*\}|\{[^}]*\}|%[ds]/g, HOLE);

/** The engine's user phrases as templates (numbers as holes), from the one module that defines them. */
const PHRASES: Record<string, string> = {
  question: ARITH_PHRASES.question(1111, 2222).replace('1111', HOLE).replace('2222', HOLE),
  followUp: ARITH_PHRASES.followUp(3333).replace('3333', HOLE),
  wrong: ARITH_PHRASES.wrong,
  systemPrompt: ARITH_PHRASES.systemPrompt,
};

/** A literal that reads like an engine phrase (then it must be one exactly). */
const LOOKALIKE = /^\s*(what(?:'s| is)\b|now add\b|answer with\b)|\bwrong\b|\btry again\b/i;

/** The string literals of a Python or JS source: triple-quoted, single, double, f- and template strings. */
function literals(source: string): string[] {
  const out: string[] = [];
  const re = /(?<![A-Za-z0-9_])[fFrRbB]?("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)/g;
  const rest = source.replace(/("""|''')([\s\S]*?)\1/g, (_, _q: string, body: string) => {
    out.push(body);
    return '""';
  });
  for (const line of rest.split('\n')) {
    const code = line.replace(/^\s*(#|\/\/).*$/, ''); // comments may quote phrases loosely
    for (const m of code.matchAll(re)) out.push(m[1]!.slice(1, -1));
  }
  return out;
}

/** The phrases a source uses (by name), failing on any literal that only looks like one. */
function phrasesUsed(source: string, where: string): Set<string> {
  const used = new Set<string>();
  for (const lit of literals(source)) {
    const t = holes(lit);
    const name = Object.keys(PHRASES).find((k) => PHRASES[k] === t);
    if (name) used.add(name);
    else assert.ok(!LOOKALIKE.test(lit), `${where}: ${JSON.stringify(lit)} looks like one of arith-chat's phrases but is not one verbatim (${Object.values(PHRASES).map((p) => JSON.stringify(p.replaceAll(HOLE, '%d'))).join(', ')})`);
  }
  return used;
}

/** Every example env file: examples/<name>/<file>.env.* */
const ENV_FILES = fs
  .readdirSync(path.join(root, 'examples'))
  .flatMap((d) => (fs.statSync(path.join(root, 'examples', d)).isDirectory() ? fs.readdirSync(path.join(root, 'examples', d)).map((f) => `${d}/${f}`) : []))
  .filter(isEnvFile);

describe('env: examples', () => {
  it('finds the example env files', () => {
    for (const f of ['arith-retry/arith_retry.env.py', 'arith-chain/arith_chain.env.py', 'arith-tools/arith_tools.env.py', 'guess-number/guess_number.env.py']) assert.ok(ENV_FILES.includes(f), f);
  });

  it('the phrase check catches a near miss and accepts the phrases in both languages', () => {
    assert.throws(() => phrasesUsed('x = "What\'s %d + %d?" % (a, b)', 't'), /looks like/);
    assert.throws(() => phrasesUsed('x = "Wrong - try again."', 't'), /looks like/);
    assert.throws(() => phrasesUsed("q = f'What is {a} plus {b}?'", 't'), /looks like/);
    assert.deepStrictEqual([...phrasesUsed('q = f"What is {a} + {b}?"\nw = "Wrong, try again."', 't')].sort(), ['question', 'wrong']);
    assert.deepStrictEqual([...phrasesUsed('const q = `Now add ${z}.`;', 't')], ['followUp']);
    assert.throws(() => phrasesUsed('def f():\n    """What is the sum?"""', 't'), /looks like/);
  });

  for (const f of ENV_FILES) {
    it(`${f}: every literal that reads like an engine phrase is one, verbatim`, () => {
      phrasesUsed(read(f), f);
    });
  }

  it('arith-retry asks the question and answers a wrong reply with the "wrong, try again" phrase', () => {
    assert.deepStrictEqual([...phrasesUsed(read('arith-retry/arith_retry.env.py'), 'arith-retry')].sort(), ['question', 'wrong']);
  });

  it('arith-chain asks the question and follows up with the "Now add" phrase', () => {
    assert.deepStrictEqual([...phrasesUsed(read('arith-chain/arith_chain.env.py'), 'arith-chain')].sort(), ['followUp', 'question']);
  });

  it('arith-tools asks the question and declares the calculator tool exactly as arith-chat was pretrained on it', () => {
    const src = read('arith-tools/arith_tools.env.py');
    assert.deepStrictEqual([...phrasesUsed(src, 'arith-tools')], ['question']);
    const m = /CALCULATOR = (\{[\s\S]*?\n\})/.exec(src);
    assert.ok(m, 'CALCULATOR is defined');
    assert.deepStrictEqual(JSON.parse(m[1]!.replace(/\n/g, '')), CALCULATOR_TOOL);
  });

  it('guess-number (the cookbook game) uses none of the engine phrases, and the docs example uses them verbatim', () => {
    assert.deepStrictEqual([...phrasesUsed(read('guess-number/guess_number.env.py'), 'guess-number')], []);
    const page = fs.readFileSync(path.join(root, 'docs', 'rewards-and-environments.md'), 'utf8');
    const m = /```python\n(# add_retry\.env\.py[\s\S]*?)```/.exec(page);
    assert.ok(m, 'docs/rewards-and-environments.md has its environment example');
    assert.deepStrictEqual([...phrasesUsed(m[1]!, 'docs/rewards-and-environments.md')].sort(), ['question', 'wrong']);
  });

  for (const ex of ['arith-retry', 'arith-chain', 'arith-tools']) {
    it(`${ex}: the spec parses, runs its env file on arith-chat with chatml, and its README gives the command`, async () => {
      const { spec } = await parseGrpoSpecFile(path.join(root, 'examples', ex, `${ex}.grpo.json`));
      assert.strictEqual(spec.model, 'tinker-studio/arith-chat');
      assert.strictEqual(spec.renderer, 'chatml');
      assert.ok(spec.env && fs.existsSync(spec.env.file));
      assert.ok(read(`${ex}/README.md`).includes(`tinker-studio grpo examples/${ex}/${ex}.grpo.json`));
    });
  }
});
