// The CLI's price table (`--prices FILE`, TINKER_STUDIO_PRICES) as a child process against the
// embedded engine in this process: a bad table is refused naming its file and field before anything
// runs; a good one prices the engine's model, is recorded in config.json, and a spec's max_cost_usd
// stops the run with the budget's words and how to resume.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { METRIC } from '../../../src/protocol/metricKeys';
import { readMetricsLines, startTestEngine, type TestEngine } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, TINKER_API_KEY: '', TINKER_STUDIO_PRICES: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return new Promise((resolve) => proc.once('close', (code) => resolve({ code, out })));
}

describe('tinker-studio --prices (CLI child process)', function () {
  this.timeout(240_000);
  let dir: string;
  let engine: TestEngine;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-cost-cli-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 16 }, (_, k) => JSON.stringify({ prompt: `${k}+1=`, completion: String(k + 1) })).join('\n') + '\n');
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const backendArgs = () => ['--backend', 'custom', '--base-url', engine.server.url, '--cache-dir', path.join(dir, 'cache')];
  const spec = (extra: Record<string, unknown>) => {
    const file = path.join(dir, 'priced.sft.json');
    fs.writeFileSync(file, JSON.stringify({ model: 'tinker-studio/random-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 8, eval_every: 0, save_every: 0, dataset: { path: 'chats.jsonl' }, ...extra }));
    return file;
  };

  it('refuses a bad price table naming the file and the field, before a run directory exists', async () => {
    const bad = path.join(dir, 'bad-prices.json');
    fs.writeFileSync(bad, JSON.stringify({ models: { 'tinker-studio/random-gpt': { prefill: 'cheap', sample: 1, train: 1 } } }));
    const runsDir = path.join(dir, 'runs-bad');
    const r = await runCli(['sft', spec({}), '--runs-dir', runsDir, '--prices', bad, ...backendArgs()], dir);
    assert.strictEqual(r.code, 1, r.out);
    assert.match(r.out, /bad-prices\.json: models\.tinker-studio\/random-gpt\.prefill: /);
    assert.ok(!fs.existsSync(runsDir) || fs.readdirSync(runsDir).length === 0, 'no run directory');
  });

  it('prices from TINKER_STUDIO_PRICES: recorded in config.json; max_cost_usd stops the run and says how to resume', async () => {
    const prices = path.join(dir, 'prices.json');
    fs.writeFileSync(prices, JSON.stringify({ taken: '2026-11-28', source: 'test', models: { 'tinker-studio/random-gpt': { prefill: 1, sample: 1, train: 5000 } } }));
    const runsDir = path.join(dir, 'runs-budget');
    // a step trains some tens of tokens at $5000 per million: a few tenths of a dollar each
    const r = await runCli(['sft', spec({ max_cost_usd: 0.5 }), '--runs-dir', runsDir, ...backendArgs()], dir, { TINKER_STUDIO_PRICES: prices });
    assert.strictEqual(r.code, 130, r.out);
    assert.match(r.out, /budget: stopped at \$0\.\d\d of \$0\.50 \(estimate\); resume with a higher budget to continue/);
    assert.match(r.out, /resume with: tinker-studio sft --resume .* <the spec with a higher max_cost_usd/);
    const runDir = path.join(runsDir, fs.readdirSync(runsDir).find((d) => !d.startsWith('.'))!);
    const cfg = JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as { prices: { models: Record<string, unknown>; taken: string } };
    assert.strictEqual(cfg.prices.taken, '2026-11-28');
    assert.deepStrictEqual(cfg.prices.models['tinker-studio/random-gpt'], { prefill: 1, sample: 1, train: 5000 });
    const rows = readMetricsLines(runDir);
    assert.ok(rows.length >= 1 && rows.length < 8, `${rows.length} steps`);
    // the stop names what was spent (a step is predicted from the last ones, so the last may end a little past the budget)
    const total = rows.at(-1)![METRIC.costTotal] as number;
    assert.ok(r.out.includes(`stopped at $${total.toFixed(2)} of $0.50`), `spent ${total}`);
  });
});
