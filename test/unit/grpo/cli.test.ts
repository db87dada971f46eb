// The headless CLI as a child process (`tinker-studio grpo`), against the embedded engine running in
// this test's process (backend "custom" at its URL, so the engine outlives the CLI): killed with
// SIGKILL mid-run and resumed from the run directory alone, no step is lost and none repeated in the
// merged record, and training continues from the saved optimizer state; Ctrl-C (SIGINT) cancels
// cleanly with a resume point; bad arguments and bad specs fail with a clear message.
import * as assert from 'assert';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { mergeMetrics } from '../../../src/core/runs/runDirectory';
import { WandbStandIn } from '../tracking/wandbStandIn';
import { TestEngine, appliedSteps, assertNoPartialLines, readCheckpointLines, readMetricsLines, startTestEngine, writeReward } from './engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');

interface Child {
  proc: ChildProcess;
  /** resolves with the first stderr/stdout line matching `re` */
  line(re: RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>;
}

function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Child {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, TINKER_API_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  let buf = '';
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    buf += chunk.toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      for (const w of [...waiters]) if (w.re.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal, out })));
  return {
    proc,
    exited,
    line: (re) =>
      new Promise<string>((resolve, reject) => {
        waiters.push({ re, resolve });
        void exited.then(({ out: o }) => reject(new Error(`the CLI exited before printing ${re}:\n${o}`)));
      }),
  };
}

function writeSpec(dir: string, iterations: number): string {
  const train = Array.from({ length: 10 }, (_, k) => JSON.stringify({ question: `What is ${k} + 1?`, answer: k + 1 })).join('\n');
  fs.writeFileSync(path.join(dir, 'train.jsonl'), `${train}\n`);
  writeReward(dir);
  const spec = {
    name: 'cli-test',
    model: 'tinker-studio/random-gpt',
    renderer: 'chatml',
    lora_rank: 4,
    learning_rate: 0.001,
    groups_per_batch: 2,
    group_size: 4,
    max_tokens: 4,
    iterations,
    save_every: 2,
    eval_every: 0,
    dataset: { path: 'train.jsonl' },
    reward: { file: 'reward.py', workers: 1 },
  };
  const file = path.join(dir, 'cli-test.grpo.json');
  fs.writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

function onlyRunDir(runsDir: string): string {
  const dirs = fs.readdirSync(runsDir).filter((d) => !d.startsWith('.'));
  assert.strictEqual(dirs.length, 1, `one run directory in ${runsDir}: ${dirs.join(', ')}`);
  return path.join(runsDir, dirs[0]!);
}

describe('tinker-studio grpo (CLI child process)', function () {
  this.timeout(240_000);
  let dir: string;
  let engine: TestEngine;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-grpo-cli-'));
    engine = await startTestEngine(dir);
  });
  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const backendArgs = () => ['--backend', 'custom', '--base-url', engine.server.url, '--cache-dir', path.join(dir, 'cache')];

  it('killed with SIGKILL mid-run and resumed from the run directory: every step once, training continued from the saved state', async () => {
    const work = fs.mkdtempSync(path.join(dir, 'kill-'));
    const spec = writeSpec(work, 8);
    const runsDir = path.join(work, 'runs');
    const first = runCli(['grpo', spec, '--runs-dir', runsDir, ...backendArgs()], work);
    await first.line(/^step 4\/8:/);
    first.proc.kill('SIGKILL');
    const killed = await first.exited;
    assert.strictEqual(killed.signal, 'SIGKILL');

    const runDir = onlyRunDir(runsDir);
    const before = readMetricsLines(runDir).map((l) => l.step);
    assert.ok(before.length >= 5 && before.length < 8, `killed mid-run (steps written: ${before.join(',')})`);
    const resumeAt = readCheckpointLines(runDir).filter((r) => r.state_path).at(-1)!;
    assert.ok(resumeAt.name !== 'final' && resumeAt.batch! >= 2, `a periodic checkpoint to resume from (${resumeAt.name})`);

    const second = runCli(['grpo', '--resume', runDir, ...backendArgs()], work);
    const done = await second.exited;
    assert.strictEqual(done.code, 0, done.out);
    assert.match(done.out, /run completed/);

    const lines = readMetricsLines(runDir);
    assert.deepStrictEqual(mergeMetrics(lines).map((l) => l.step), [0, 1, 2, 3, 4, 5, 6, 7], 'the merged record has every step exactly once');
    // a step logged twice ran after the checkpoint it was resumed from; the later line supersedes it
    const seen = new Map<number, number>();
    for (const l of lines) seen.set(l.step, (seen.get(l.step) ?? 0) + 1);
    for (const [step, n] of seen) if (n > 1) assert.ok(step >= resumeAt.batch!, `step ${step} repeated but it was before the resume point ${resumeAt.batch}`);
    const recs = readCheckpointLines(runDir);
    assert.deepStrictEqual(recs.at(-1)!.name, 'final');
    assert.strictEqual(recs.at(-1)!.batch, 8);

    const runOf = (p: string) => p.slice('tinker://'.length).split('/')[0]!;
    const resumedModel = runOf(recs.at(-1)!.state_path!);
    const applied = (await appliedSteps(engine)).filter((s) => s.model_id === resumedModel).map((s) => s.type);
    assert.strictEqual(applied[0], 'load_weights', 'the resumed model starts from the saved state');
    assert.strictEqual(applied.filter((t) => t === 'optim_step').length, 8 - resumeAt.batch!, 'one update per remaining step, none repeated');
    assertNoPartialLines(runDir);
  });

  it('Ctrl-C (SIGINT) cancels cleanly: exit 130, whole records only, a resume point at the next step', async () => {
    const work = fs.mkdtempSync(path.join(dir, 'sigint-'));
    const spec = writeSpec(work, 20);
    const runsDir = path.join(work, 'runs');
    const child = runCli(['grpo', spec, '--runs-dir', runsDir, ...backendArgs()], work);
    await child.line(/^step 1\/20:/);
    child.proc.kill('SIGINT');
    const done = await child.exited;
    assert.strictEqual(done.code, 130, done.out);
    assert.match(done.out, /run cancelled/);
    assert.match(done.out, /resume with: tinker-studio grpo --resume /);
    const runDir = onlyRunDir(runsDir);
    const steps = readMetricsLines(runDir).map((l) => l.step);
    assert.ok(steps.length >= 2 && steps.length < 20);
    assert.deepStrictEqual(steps, steps.map((_, k) => k), 'steps 0..k, each once');
    const last = readCheckpointLines(runDir).at(-1)!;
    assert.strictEqual(last.batch, steps.length, 'the resume point is the first step not written');
    assert.ok(last.state_path);
    assertNoPartialLines(runDir);
  });

  it('sweep: Ctrl-C (SIGINT) cancels every run with exit 130 and a resume point; the same command resumes it to the end, every step once', async () => {
    const work = fs.mkdtempSync(path.join(dir, 'sweep-'));
    const spec = writeSpec(work, 12);
    const sweep = { base: path.basename(spec), method: 'grid', parameters: { learning_rate: { values: [0.001, 0.002] } }, metric: { name: 'env/all/reward/total', goal: 'maximize' } };
    fs.writeFileSync(path.join(work, 'two.sweep.json'), JSON.stringify(sweep));
    const runsDir = path.join(work, 'runs');
    const args = ['sweep', 'two.sweep.json', '--runs-dir', runsDir, ...backendArgs()];
    const child = runCli(args, work);
    const first = path.join(runsDir, 'two', 'learning_rate_0.001');
    await child.line(/running learning_rate_0\.001/);
    // cancelled once the first run has logged two steps (the condition polled, generous limit)
    const logged = () => (fs.existsSync(path.join(first, 'metrics.jsonl')) ? readMetricsLines(first).length : 0);
    const until = Date.now() + 120_000;
    while (logged() < 2) {
      if (Date.now() > until) throw new Error(`the first run logged ${logged()} steps in 120 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.proc.kill('SIGINT');
    const done = await child.exited;
    assert.strictEqual(done.code, 130, done.out);
    assert.match(done.out, /cancelling the sweep: each run saves a resume point/);
    assert.match(done.out, /sweep cancelled: .*two \(run the same command to resume\)/);
    const before = readMetricsLines(first).length;
    assert.ok(before >= 2 && before < 12, `${before} steps before the cancel`);
    assertNoPartialLines(first);
    const again = runCli(args, work);
    const end = await again.exited;
    assert.strictEqual(end.code, 0, end.out);
    assert.match(end.out, /sweep done: /);
    for (const name of ['learning_rate_0.001', 'learning_rate_0.002']) {
      const steps = readMetricsLines(path.join(runsDir, 'two', name)).map((l) => l.step);
      assert.deepStrictEqual(steps, Array.from({ length: 12 }, (_, k) => k), `${name}: steps 0..11, each once`);
    }
  });

  it('with W&B on (a stand-in W&B server), the first Ctrl-C still cancels cleanly and saves the resume point; the rows reach W&B', async () => {
    const standIn = new WandbStandIn();
    const baseUrl = await standIn.listen();
    try {
      const work = fs.mkdtempSync(path.join(dir, 'sigint-wandb-'));
      const spec = writeSpec(work, 20);
      const runsDir = path.join(work, 'runs');
      const child = runCli(['grpo', spec, '--runs-dir', runsDir, ...backendArgs()], work, { WANDB_PROJECT: 'cli-test', WANDB_API_KEY: 'standinkey_' + 'c'.repeat(29), WANDB_BASE_URL: baseUrl, TINKER_API_KEY: 'tml-never-sent' });
      await child.line(/^step 1\/20:/);
      child.proc.kill('SIGINT');
      const done = await child.exited;
      assert.strictEqual(done.code, 130, done.out);
      assert.match(done.out, /run cancelled/);
      const runDir = onlyRunDir(runsDir);
      const steps = readMetricsLines(runDir).map((l) => l.step);
      assert.deepStrictEqual(steps, steps.map((_, k) => k), 'steps 0..k, each once');
      assert.strictEqual(readCheckpointLines(runDir).at(-1)!.batch, steps.length, 'the resume point is the first step not written');
      assertNoPartialLines(runDir);
      assert.match(done.out, new RegExp(`W&B: ${steps.length} of ${steps.length} rows sent`));
      assert.match(done.out, /W&B run: http:\/\/127\.0\.0\.1:\d+\/stand-in-user\/cli-test\/runs\/[0-9a-f]{12}/);
      const id = (JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as { wandb: { id: string } }).wandb.id;
      assert.deepStrictEqual(standIn.history(id).filter((h) => h['env/all/reward/total'] !== undefined).map((h) => h._step), steps);
      assert.ok(standIn.completed(id));
      for (const r of standIn.requests) assert.ok(!JSON.stringify(r).includes('tml-never-sent'));
    } finally {
      await standIn.close();
    }
  });

  it('fails with a clear message for a bad spec, and with usage for bad arguments', async () => {
    const work = fs.mkdtempSync(path.join(dir, 'bad-'));
    const spec = path.join(work, 'bad.grpo.json');
    fs.writeFileSync(spec, JSON.stringify({ model: 'tinker-studio/random-gpt', max_tokens: 4, iterations: 1, dataset: { path: 'missing.jsonl' }, reward: { file: 'r.py' }, group_size: 1 }));
    const bad = await runCli(['grpo', spec, '--runs-dir', path.join(work, 'runs'), ...backendArgs()], work).exited;
    assert.strictEqual(bad.code, 1);
    assert.match(bad.out, /bad\.grpo\.json: group_size: must be at least 2/);
    assert.ok(!fs.existsSync(path.join(work, 'runs')), 'no run directory for a spec that cannot run');
    const usage = await runCli(['grpo', spec, '--backend', 'moon'], work).exited;
    assert.strictEqual(usage.code, 2);
    assert.match(usage.out, /--backend must be local, cloud or custom \(got "moon"\)/);
    assert.match(usage.out, /usage: tinker-studio grpo/);
  });
  it('tinker-studio sft runs a *.sft.json to completion and prints the NLL it reached', async () => {
    const work = fs.mkdtempSync(path.join(dir, 'sft-'));
    const chats = Array.from({ length: 12 }, (_, k) => JSON.stringify({ prompt: `${k}+1=`, completion: String(k + 1) })).join('\n');
    fs.writeFileSync(path.join(work, 'chats.jsonl'), `${chats}\n`);
    const spec = path.join(work, 'cli.sft.json');
    fs.writeFileSync(spec, JSON.stringify({ model: 'tinker-studio/random-gpt', renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, batch_size: 4, max_steps: 3, eval_every: 1, save_every: 0, dataset: { path: 'chats.jsonl', validation: { fraction: 0.25 } } }));
    const runsDir = path.join(work, 'runs');
    const done = await runCli(['sft', spec, '--runs-dir', runsDir, ...backendArgs()], work).exited;
    assert.strictEqual(done.code, 0, done.out);
    assert.match(done.out, /train_mean_nll \d+\.\d{4} → \d+\.\d{4}; test\/nll \d+\.\d{4} → \d+\.\d{4}/);
    assert.match(done.out, /run completed: .* \(3 steps this time\)/);
    assert.deepStrictEqual(readMetricsLines(onlyRunDir(runsDir)).map((l) => l.step), [0, 1, 2]);
  });
});
