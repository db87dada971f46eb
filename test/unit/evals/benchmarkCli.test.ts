// `tinker-studio eval --benchmark gsm8k <model> --max-problems N`, the built CLI (dist/cli.js) spawned
// against a stand-in of the Hugging Face datasets-server (its GSM8K fixtures): it prints the accuracy
// with its interval, and after Ctrl-C the same command resumes, asking the engine only for the
// samples not yet on disk (counted at an engine in this process, reached as a custom backend).
import * as assert from 'assert';
import { spawn, type SpawnOptions } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseArgs } from '../../../src/cli/args';
import { readTargetSamples } from '../../../src/core/evals/results';
import { DatasetsServerStandIn } from './hubStandIn';
import { startCountingEngine, type CountingEngine } from './engineFixture';

const CLI = path.resolve(__dirname, '../../../../dist/cli.js');
const COMMAND = ['eval', '--benchmark', 'gsm8k', 'tinker-studio/arith-chat', '--max-problems', '50'];
const RESULTS = path.join('evals', 'gsm8k-tinker-studio_arith-chat');

function run(args: string[], o: SpawnOptions & { onSpawn?: (kill: () => void) => void }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], o);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr!.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    o.onSpawn?.(() => child.kill('SIGINT'));
  });
}

describe('tinker-studio eval --benchmark', function () {
  this.timeout(300_000);
  let hub: DatasetsServerStandIn;
  let engine: CountingEngine;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    hub = await new DatasetsServerStandIn().start();
    engine = await startCountingEngine('tinker-bench-cli-');
  });
  after(async () => {
    await hub.stop();
    await engine.close();
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-bench-cli-work-'));
    env = { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_CACHE_DIR: path.join(dir, 'cache'), TINKER_DATASETS_SERVER: hub.url };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses the README’s spelling, and refuses the benchmark options without --benchmark', () => {
    assert.deepStrictEqual(parseArgs(COMMAND), { command: 'eval', spec: 'tinker-studio/arith-chat', benchmark: { name: 'gsm8k', target: 'tinker-studio/arith-chat', maxProblems: 50 } });
    assert.throws(() => parseArgs(['eval', '--benchmark', 'gsm9k', 'm']), /--benchmark must be one of gsm8k, math500, ifeval, aime_2025, mmlu_redux/);
    assert.throws(() => parseArgs(['eval', 'a.eval.json', '--max-problems', '5']), /--max-problems is for --benchmark/);
    assert.throws(() => parseArgs(['eval', '--benchmark', 'gsm8k']), /give what to evaluate on gsm8k/);
    assert.throws(() => parseArgs([...COMMAND.slice(0, 4), '--max-problems', '0']), /--max-problems must be a whole number above 0/);
  });

  it('runs on the embedded engine and prints the accuracy with its interval', async () => {
    const r = await run(COMMAND, { cwd: dir, env });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^gsm8k accuracy of tinker-studio\/arith-chat: \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \(95 % interval\) on 50 problems$/m);
    assert.match(r.stderr, /GSM8K \(test, 1,319 problems\): 50 of 60 problems/);
    assert.ok(fs.existsSync(path.join(dir, RESULTS, 'summary.json')));
    assert.ok(fs.existsSync(path.join(dir, RESULTS, 'gsm8k-tinker-studio_arith-chat.eval.json')), 'the spec the command stands for, beside its results');
  });

  it('after Ctrl-C part way, the same command resumes and samples only what is not on disk', async () => {
    const custom = [...COMMAND, '--backend', 'custom', '--base-url', engine.server.url, '--concurrency', '2'];
    const samples = path.join(dir, RESULTS);
    let interrupted = false;
    let poll: NodeJS.Timeout | undefined;
    const first = await run(custom, {
      cwd: dir,
      env,
      onSpawn: (kill) => {
        // Ctrl-C once a few samples are on disk (the condition polled, up to the test's limit)
        poll = setInterval(() => {
          if (!interrupted && fs.existsSync(samples) && readTargetSamples(samples, 'tinker-studio_arith-chat').length >= 3) {
            interrupted = true;
            kill();
          }
        }, 20);
      },
    }).finally(() => clearInterval(poll));
    assert.ok(interrupted, first.stderr);
    assert.strictEqual(first.code, 130, first.stderr);
    const kept = readTargetSamples(samples, 'tinker-studio_arith-chat').length;
    assert.ok(kept >= 3 && kept < 50, `${kept} kept`);
    const before = engine.served.requests;
    const again = await run(custom, { cwd: dir, env });
    assert.strictEqual(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`resuming: ${kept} of 50 samples already`));
    assert.strictEqual(engine.served.requests - before, 50 - kept, 'the resumed run asks the engine for the missing samples only');
    const all = readTargetSamples(samples, 'tinker-studio_arith-chat');
    assert.strictEqual(new Set(all.map((s) => s.problem_id)).size, 50);
    assert.strictEqual(all.length, 50, 'no sample twice');
    assert.match(again.stdout, /gsm8k accuracy of tinker-studio\/arith-chat: .* on 50 problems/);
  });
});
