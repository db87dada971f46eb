// What the CLI prints before a job starts, as a child process against the embedded engine in this
// process: a run's and an eval's whole estimated cost from the price table given (--prices), with its
// assumptions; an eval's max_cost_usd stops it with the budget's words and how to go on, and the same
// command with a higher budget in the spec finishes it.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readTargetSamples } from '../../../src/core/evals/results';
import { startTestEngine, writeReward, type TestEngine } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const MODEL = 'tinker-studio/random-gpt';

function runCli(args: string[], cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_PRICES: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, out, err })));
}

describe('tinker-studio prints the estimated cost before a job (CLI child process)', function () {
  this.timeout(240_000);
  let dir: string;
  let engine: TestEngine;
  let prices: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-estimate-cli-'));
    engine = await startTestEngine(dir);
    prices = path.join(dir, 'prices.json');
    fs.writeFileSync(prices, JSON.stringify({ taken: '2026-11-28', source: 'test table', models: { [MODEL]: { prefill: 1000, sample: 2000, train: 3000 } } }));
    // 8 chats of 6 bytes: 2 steps × 4 chats = 48 trained tokens
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 8 }, (_, k) => JSON.stringify({ prompt: `${k}+1=`, completion: `=${k + 1}` })).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'problems.jsonl'), Array.from({ length: 6 }, (_, k) => JSON.stringify({ question: `What is ${k} + 1?`, answer: k + 1 })).join('\n') + '\n');
    writeReward(dir);
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const backendArgs = () => ['--backend', 'custom', '--base-url', engine.server.url, '--cache-dir', path.join(dir, 'cache'), '--prices', prices];

  it('a run: the estimate (tokens × the table, its date and assumptions) before the run starts', async () => {
    const spec = path.join(dir, 'small.sft.json');
    fs.writeFileSync(spec, JSON.stringify({ model: MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 2, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' } }));
    const r = await runCli(['sft', spec, '--runs-dir', path.join(dir, 'runs'), ...backendArgs()], dir);
    assert.strictEqual(r.code, 0, r.out + r.err);
    const at = r.err.indexOf('Estimated cost of SFT run small (2 steps × 4 chats): $0.144 (estimate) for 48 tokens');
    assert.ok(at >= 0, r.err);
    assert.ok(at < r.err.indexOf('starting'), 'before the run starts');
    assert.match(r.err, /prices taken 2026-11-28 \(test table\)/);
    assert.match(r.err, /assumes: tinker-studio\/random-gpt is byte-level/);
  });

  it('an eval: the estimate, a stop at its max_cost_usd with how to go on, then the same command with a higher budget finishes', async () => {
    const spec = path.join(dir, 'budget.eval.json');
    const write = (max: number) => fs.writeFileSync(spec, JSON.stringify({ dataset: { path: 'problems.jsonl' }, grader: { file: 'reward.py' }, n: 2, max_tokens: 4, seed: 1, concurrency: 1, targets: [MODEL], max_cost_usd: max }));
    write(0.1);
    const first = await runCli(['eval', spec, ...backendArgs()], dir);
    assert.strictEqual(first.code, 0, first.out + first.err);
    assert.match(first.err, /Estimated cost of eval budget \(12 samples left: 6 problems × n=2 × 1 targets\): \$0\.\d+ \(estimate\)/);
    assert.match(first.out, /budget: stopped at \$0\.\d\d of \$0\.10 \(estimate\); resume with a higher budget to continue \(max_cost_usd \/ max_tokens_total in budget\.eval\.json\); run the same command to resume/);
    const out = path.join(dir, 'evals', 'budget');
    const kept = readTargetSamples(out, 'tinker-studio_random-gpt').length;
    assert.ok(kept > 0 && kept < 12, `${kept} samples kept`);
    write(10);
    const second = await runCli(['eval', spec, ...backendArgs()], dir);
    assert.strictEqual(second.code, 0, second.out + second.err);
    assert.match(second.err, new RegExp(`Estimated cost of eval budget \\(${12 - kept} samples left`));
    assert.doesNotMatch(second.out, /budget:/);
    assert.strictEqual(readTargetSamples(out, 'tinker-studio_random-gpt').length, 12);
  });
});
