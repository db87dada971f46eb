// Every example the docs mark runnable (README.md, docs/*.md) runs as printed: its files written into a
// fresh folder, its commands run there with only `node dist/cli.js` mapped to this checkout's built CLI
// (the embedded engine in its process, real Python for rewards and environments), and each run it starts
// really trained: metrics.jsonl has a row for every step the spec asks for and the final checkpoint
// is recorded. The marks themselves are checked too (runnableExamples.ts names a malformed set).
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as z from 'zod';
import { parseArgs } from '../../../src/cli/args';
import { SPEC_KIND_IDS } from '../../../src/core/spec/kinds';
import { readMetricsRows, summarizeRun } from '../../../src/core/runs/runDirectory';
import { readRunnableExamples, type ExampleCommand, type RunnableExample } from './runnableExamples';

const root = path.resolve(__dirname, '../../../..');
const CLI = path.join(root, 'dist/cli.js');

function docsPages(): Array<{ page: string; text: string }> {
  const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs].map((page) => ({ page, text: fs.readFileSync(path.join(root, page), 'utf8') }));
}

/** How many steps a spec asks for: the test needs it stated (`iterations`, or `max_steps`). */
const StepsAsked = z.union([z.object({ iterations: z.number().int().positive() }), z.object({ max_steps: z.number().int().positive() })]);
/** What a spec says beyond its steps that the examples' coverage is checked on. */
const SpecShape = z.object({ teacher: z.unknown().optional(), env: z.unknown().optional() });

function stepsAsked(specFile: string): number {
  const text = fs.readFileSync(specFile, 'utf8');
  const r = StepsAsked.safeParse(JSON.parse(text));
  assert.ok(r.success, `${path.basename(specFile)}: a runnable example's spec states "iterations" or "max_steps", so that the test knows how many steps to expect`);
  return 'iterations' in r.data ? r.data.iterations : r.data.max_steps;
}

/** The spec a command starts a run from, when it starts one (not a resume). */
function specOf(c: ExampleCommand): string | undefined {
  const args = parseArgs(c.args);
  return 'spec' in args && !('resume' in args && args.resume) ? args.spec : undefined;
}

const where = (ex: RunnableExample) => ex.runAt.map((p) => `${p.page}:${p.line}`).join(', ');

describe('docs: runnable examples', () => {
  describe('the marks', () => {
    const page = (text: string) => readRunnableExamples([{ page: 'p.md', text }]);
    const file = (id: string, name: string, body = `# ${name}\n`) => `<!-- runnable: ${id} file=${name} -->\n\`\`\`text\n${body}\`\`\`\n`;
    const run = (id: string, cmd = 'node dist/cli.js grpo a.grpo.json --backend local') => `<!-- runnable: ${id} run -->\n\`\`\`bash\n${cmd}\n\`\`\`\n`;

    it('group the files and the command of an example, across pages, with the command split into words', () => {
      const r = readRunnableExamples([
        { page: 'a.md', text: `intro\n\n${file('x', 'a.grpo.json')}\nand \`data.jsonl\`:\n\n${file('x', 'data.jsonl', '{"q": 1}\n')}` },
        { page: 'b.md', text: `${run('x', '# a comment\nnode dist/cli.js grpo "a.grpo.json" --backend local   # or: --resume <dir>')}` },
      ]);
      assert.deepStrictEqual(r.problems, []);
      assert.deepStrictEqual(r.examples.map((e) => [e.id, e.files.map((f) => [f.name, f.text, `${f.page}:${f.line}`]), e.commands.map((c) => c.args)]), [
        ['x', [['a.grpo.json', '# a.grpo.json\n', 'a.md:3'], ['data.jsonl', '{"q": 1}\n', 'a.md:10']], [['grpo', 'a.grpo.json', '--backend', 'local']]],
      ]);
    });

    it('name each malformed set by page and line, with what to write', () => {
      const cases: Array<[string, RegExp]> = [
        [run('lonely'), /^p\.md:1: "lonely" has a run block but no files: mark each file's block <!-- runnable: lonely file=<name> -->$/],
        [file('orphan', 'a.json'), /^p\.md:1: "orphan" has files but no run block: mark the block of its command <!-- runnable: orphan run -->$/],
        [file('x', 'a.json') + run('x') + run('x', 'node dist/cli.js sft a.json'), /^p\.md:9: "x" has another run block with different commands at p\.md:5: one example runs one set of commands$/],
        [file('x', 'a.json') + file('x', 'a.json', '# a.json, again\n') + run('x'), /^p\.md:5: the file "a\.json" of "x" is printed differently at p\.md:1/],
        ['<!-- runnable: x file=sub/a.json -->\n```json\n{}\n```\n', /^p\.md:1: a malformed runnable mark/],
        ['<!-- runnable: Bad id run -->\n', /^p\.md:1: a malformed runnable mark "<!-- runnable: Bad id run -->": write </],
        [file('x', 'a.json') + '<!-- runnable: x run -->\n\nnode dist/cli.js grpo a.json\n', /^p\.md:5: the runnable mark of "x" is not followed by a fenced block on the next line$/],
        [file('x', 'a.json') + run('x', 'npm run demo'), /^p\.md:7: a run block's command is the CLI as docs\/cli\.md prints it, "node dist\/cli\.js <command> …", with no shell syntax \(got "npm run demo"\)$/],
        [file('x', 'a.json') + run('x', 'node dist/cli.js grpo a.json > log.txt'), /^p\.md:7: a run block's command is the CLI/],
        [file('x', 'a.json') + run('x', '# nothing to run'), /^p\.md:5: the run block of "x" has no command$/],
        ['<!-- runnable: x file=a.json -->\n```json\n{}\n```\n' + run('x'), /^p\.md:1: the page does not tell the reader the file's name "a\.json"/],
      ];
      for (const [text, expected] of cases) {
        const { problems } = page(text);
        assert.ok(problems.some((p) => expected.test(p)), `${JSON.stringify(text)}\n  gave ${JSON.stringify(problems)}\n  expected ${expected}`);
      }
    });

    it('are well formed in README.md and docs/*.md', () => {
      assert.deepStrictEqual(readRunnableExamples(docsPages()).problems, []);
    });

    it('give docs/run-specs.md a complete example of every run kind, of distillation and of an environment', () => {
      const examples = readRunnableExamples(docsPages()).examples.filter((e) => e.runAt.some((p) => p.page === 'docs/run-specs.md'));
      const kinds = new Set<string>();
      const specs: Array<z.infer<typeof SpecShape>> = [];
      for (const ex of examples) {
        for (const c of ex.commands) {
          const spec = specOf(c);
          const f = spec === undefined ? undefined : ex.files.find((x) => x.name === spec);
          if (!f) continue;
          kinds.add(parseArgs(c.args).command);
          specs.push(SpecShape.parse(JSON.parse(f.text)));
        }
      }
      assert.deepStrictEqual([...kinds].sort(), [...SPEC_KIND_IDS].sort(), 'a run of every kind');
      assert.ok(specs.some((s) => s.teacher !== undefined), 'an on-policy distillation example (a spec with a teacher)');
      assert.ok(specs.some((s) => s.env !== undefined), 'an environment example (a spec with env)');
    });
  });

  describe('run as printed', function () {
    this.timeout(300_000);
    const { examples } = readRunnableExamples(docsPages());
    let tmp: string;
    before(() => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-docs-runnable-'));
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('the docs mark examples to run', () => assert.ok(examples.length > 0, 'no runnable marks found in README.md or docs/*.md'));

    for (const ex of examples) {
      it(`${ex.id} (${where(ex)}) runs and trains`, async () => {
        assert.ok(fs.existsSync(CLI), `${CLI} is missing: run "npm run build" first`);
        const dir = path.join(tmp, ex.id);
        const runsDir = path.join(tmp, `${ex.id}-runs`);
        fs.mkdirSync(dir, { recursive: true });
        for (const f of ex.files) fs.writeFileSync(path.join(dir, f.name), f.text);
        const env = { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_RUNS_DIR: runsDir, TINKER_STUDIO_CACHE_DIR: path.join(tmp, 'cache'), XDG_CACHE_HOME: path.join(tmp, 'xdg-cache') };
        let runs = 0;
        for (const c of ex.commands) {
          const before = new Set(fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : []);
          const r = spawnSync(process.execPath, [CLI, ...c.args], { cwd: dir, env, encoding: 'utf8' });
          assert.strictEqual(r.status, 0, `${c.page}:${c.line}: "${c.printed}" exited ${r.status}\n${r.stderr}\n${r.stdout}`);
          const spec = specOf(c);
          if (spec === undefined) continue;
          const started = (fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : []).filter((d) => !before.has(d));
          assert.strictEqual(started.length, 1, `${c.page}:${c.line}: "${c.printed}" should start one run under the runs folder, started ${JSON.stringify(started)}`);
          const runDir = path.join(runsDir, started[0]!);
          const steps = stepsAsked(path.resolve(dir, spec));
          const logged = [...new Set((await readMetricsRows(runDir)).map((m) => m.step))].sort((a, b) => a - b);
          assert.deepStrictEqual(logged, [...Array(steps).keys()], `${c.page}:${c.line}: metrics.jsonl should have a row for each of the ${steps} steps the spec asks for`);
          const summary = await summarizeRun(runDir);
          assert.deepStrictEqual(summary.problems, [], `${runDir}: its files parse`);
          const final = summary.checkpoints.find((k) => k.name === 'final');
          assert.ok(final?.state_path && final.batch === steps, `${c.page}:${c.line}: checkpoints.jsonl should record the final checkpoint after step ${steps}, has ${JSON.stringify(summary.checkpoints)}`);
          runs++;
        }
        assert.ok(runs > 0, `${ex.id}: none of its commands starts a run the test can check`);
      });
    }
  });
});
