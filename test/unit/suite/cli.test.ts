// `tinker-studio suite`: its arguments, and the built CLI (dist/cli.js, the README's command) spawned on a
// suite next to a copy of the arithmetic example, the embedded engine in its process: run (the table),
// a re-run that samples nothing, Ctrl-C part way and a re-run that resumes, show and compare.
import * as assert from 'assert';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseArgs } from '../../../src/cli/args';
import { readTargetSamples } from '../../../src/core/evals/results';
import { targetIdOf } from '../../../src/core/evals/runEval';
import { loadSuite, readSuiteResult, suiteResultDir } from '../../../src/core/suite/store';

const ROOT = path.resolve(__dirname, '../../../..');
const CLI = path.join(ROOT, 'dist/cli.js');
const EXAMPLE = path.join(ROOT, 'examples/arithmetic');
const BASE = 'tinker-studio/arith-gpt';
const CHAT = 'tinker-studio/arith-chat';

describe('tinker-studio suite', function () {
  this.timeout(240_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-suitecli-'));
    env = { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_CACHE_DIR: path.join(dir, 'cache') };
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  function suiteFile(name: string, maxProblems: number): string {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true });
    for (const f of ['holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(d, f));
    const evalSpec = { dataset: { path: 'holdout.jsonl', max_problems: maxProblems }, grader: { file: 'reward.py' }, n: 2, max_tokens: 6, seed: 3, renderer: 'chatml', concurrency: 1, targets: [BASE] };
    fs.writeFileSync(path.join(d, 'holdout.eval.json'), JSON.stringify(evalSpec));
    const file = path.join(d, 'arith.suite.json');
    fs.writeFileSync(file, JSON.stringify({ entries: [{ eval: 'holdout.eval.json', layer: 'product' }, { name: 'reward', eval: evalSpec, layer: 'benchmark', metric: 'reward', gate: { min: 0.99 } }] }));
    return file;
  }
  const cli = (args: string[], cwd: string) => spawnSync(process.execPath, [CLI, ...args], { cwd, env, encoding: 'utf8' });

  it('parses run, show and compare and says what to type', () => {
    assert.deepStrictEqual(parseArgs(['suite', 'run', 'a.suite.json', BASE, '--backend', 'local']), { command: 'suite', action: 'run', suite: 'a.suite.json', checkpoints: [BASE], backend: 'local' });
    assert.deepStrictEqual(parseArgs(['suite', 'compare', 'a.suite.json', 'x', 'y', '--json']), { command: 'suite', action: 'compare', suite: 'a.suite.json', checkpoints: ['x', 'y'], json: true });
    assert.throws(() => parseArgs(['suite', 'go', 'a']), /give run, show or compare \(got "go"\)/);
    assert.throws(() => parseArgs(['suite', 'compare', 'a.suite.json', 'x']), /two checkpoints/);
    assert.throws(() => parseArgs(['suite', 'run', 'a.suite.json']), /one checkpoint/);
  });

  it('runs a suite and prints the table; a re-run samples nothing; show and compare read the results', () => {
    const file = suiteFile('small', 5);
    const cwd = path.dirname(file);
    const r = cli(['suite', 'run', 'arith.suite.json', BASE, '--backend', 'local'], cwd);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.match(r.stdout, /suite arith \(version [0-9a-f]{12}\) on tinker-studio\/arith-gpt\n/);
    assert.match(r.stdout, /^benchmark\s+reward\s+reward\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]\s+5$/m);
    assert.match(r.stdout, /^product\s+holdout\s+pass@1\s+\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]\s+5$/m);
    assert.match(r.stderr, /reward: took 10 samples from holdout/);
    const again = cli(['suite', 'run', 'arith.suite.json', BASE], cwd);
    assert.strictEqual(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /embedded engine on/, 'nothing to sample: no engine started');
    const show = cli(['suite', 'show', 'arith.suite.json', BASE], cwd);
    assert.strictEqual(show.status, 0, show.stderr);
    assert.ok(r.stdout.includes(show.stdout.trim()), show.stdout);
    const missing = cli(['suite', 'compare', 'arith.suite.json', CHAT, BASE], cwd);
    assert.strictEqual(missing.status, 1);
    assert.match(missing.stderr, /no result of suite arith \(version [0-9a-f]{12}\) on tinker-studio\/arith-chat: run `tinker-studio suite run arith.suite.json tinker-studio\/arith-chat` first/);
    assert.strictEqual(cli(['suite', 'run', 'arith.suite.json', CHAT], cwd).status, 0);
    const cmp = cli(['suite', 'compare', 'arith.suite.json', CHAT, BASE], cwd);
    assert.strictEqual(cmp.status, 0, cmp.stderr);
    assert.match(cmp.stdout, /A: tinker-studio\/arith-chat\nB: tinker-studio\/arith-gpt \(as production\)/);
    assert.match(cmp.stdout, /^product\s+holdout\s+pass@1\s.*\s5\s+non-inferiority δ 0\.02\s+(pass|FAIL)$/m);
    assert.match(cmp.stdout, /^benchmark\s+reward\s+reward\s.*≥ 0\.99\s+(pass|FAIL)$/m);
    const json = JSON.parse(cli(['suite', 'compare', 'arith.suite.json', CHAT, BASE, '--json'], cwd).stdout);
    assert.deepStrictEqual(json.rows.map((x: { entry: string; paired_items: number }) => [x.entry, x.paired_items]), [['reward', 5], ['holdout', 5]]);
  });

  it('Ctrl-C part way stops cleanly, and the same command resumes without sampling anything twice', async () => {
    const file = suiteFile('cut', 40);
    const cwd = path.dirname(file);
    const suite = await loadSuite(file);
    const samplesDir = path.join(suiteResultDir(suite, BASE), 'holdout');
    const child = spawn(process.execPath, [CLI, 'suite', 'run', 'arith.suite.json', BASE], { cwd, env });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    // Ctrl-C once a few samples are on disk (the condition polled, up to the test's limit)
    let interrupted = false;
    const poll = setInterval(() => {
      if (!interrupted && readTargetSamples(samplesDir, targetIdOf(BASE)).length >= 3) {
        interrupted = true;
        child.kill('SIGINT');
      }
    }, 20);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve)).finally(() => clearInterval(poll));
    assert.ok(interrupted, stderr);
    assert.strictEqual(code, 130, stderr);
    assert.match(stderr, /cancelled; the samples graded so far are kept, run the same command to resume/);
    assert.strictEqual((await readSuiteResult(suite, BASE))?.complete, false);
    const kept = readTargetSamples(samplesDir, targetIdOf(BASE)).length;
    assert.ok(kept > 0 && kept < 80, `${kept} samples kept`);
    const again = cli(['suite', 'run', 'arith.suite.json', BASE], cwd);
    assert.strictEqual(again.status, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`holdout: resuming: ${kept} of 80 samples already`));
    const all = readTargetSamples(samplesDir, targetIdOf(BASE));
    assert.strictEqual(all.length, 80);
    assert.strictEqual(new Set(all.map((x) => `${x.problem_id}#${x.traj_idx}`)).size, 80, 'no sample twice');
  });
});
