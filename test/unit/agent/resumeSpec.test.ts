// A resume continues the run it resumes (issue 43): init_grpo / init_sft / init_dpo with `resume`
// take the run's recorded configuration (config.json), not the spec file read again; overrides may
// change only how long it runs and how often it saves or measures (each change recorded in
// config.json), any other is refused naming the field, recorded vs given. The CLI's `--resume` with
// a spec follows the same rule. Real embedded engine, real Python reward, real CLI process.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { StepReport } from '../../../src/core/grpo/agentReport';
import { TrainingSession } from '../../../src/core/agent/session';
import { ServiceClient } from '../../../src/core/tinker/client';
import { readMetricsLines, startTestEngine, TestEngine, writeReward } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const MODEL = 'tinker-studio/random-gpt';

describe('agent and CLI resume: the run continues with its recorded configuration (embedded engine)', function () {
  this.timeout(600_000);
  let dir: string;
  let engine: TestEngine;
  const base = { model: MODEL, renderer: 'chatml', lora_rank: 4, learning_rate: 0.01, seed: 3 };
  const grpoFile = () => path.join(dir, 'resumable.grpo.json');
  const grpoSpec = { name: 'resumable', ...base, groups_per_batch: 3, group_size: 2, max_tokens: 4, iterations: 13, save_every: 20, eval_every: 0, sampling_seed: 11, dataset: { path: 'train.jsonl' }, reward: { file: 'reward.py', workers: 1 } };
  // what an agent started the run with: the spec file is not what the run is
  const started = { groups_per_batch: 2, group_size: 3, iterations: 4, save_every: 2 };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-resume-spec-'));
    engine = await startTestEngine(dir);
    fs.writeFileSync(path.join(dir, 'train.jsonl'), ['1 + 1', '2 + 2', '3 + 3', '4 + 5', '6 + 1'].map((q, i) => JSON.stringify({ question: `What is ${q}?`, answer: String(i) })).join('\n') + '\n');
    writeReward(dir);
    fs.writeFileSync(grpoFile(), JSON.stringify(grpoSpec));
    const chat = (i: number) => ({ messages: [{ role: 'user', content: `${i % 10}+${(i * 7) % 10}=` }, { role: 'assistant', content: String((i % 10) + ((i * 7) % 10)) }] });
    fs.writeFileSync(path.join(dir, 'chats.jsonl'), Array.from({ length: 24 }, (_, i) => JSON.stringify(chat(i))).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'resumable.sft.json'), JSON.stringify({ name: 'resumable-sft', ...base, batch_size: 4, max_steps: 13, eval_every: 0, save_every: 20, dataset: { path: 'chats.jsonl' } }));
    const pair = (i: number) => ({ prompt: `${i}+${i}=`, chosen: String(2 * i), rejected: String(2 * i + 1) });
    fs.writeFileSync(path.join(dir, 'pairs.jsonl'), Array.from({ length: 24 }, (_, i) => JSON.stringify(pair(i))).join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'resumable.dpo.json'), JSON.stringify({ name: 'resumable-dpo', ...base, dpo_beta: 0.1, batch_size: 4, max_steps: 13, eval_every: 0, save_every: 20, dataset: { path: 'pairs.jsonl' } }));
  });

  after(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const session = (runsDir: string) =>
    new TrainingSession({ runsDir, cacheDir: path.join(dir, 'cache'), baseDir: dir, connect: () => ServiceClient.connect({ baseUrl: engine.server.url, clientVersion: 'test' }), idleMs: 0 });
  const config = (runDir: string) => JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as Record<string, unknown>;

  it('init_grpo with resume "latest" and no overrides continues with the recorded 2 × 3 and 4 iterations, not the spec file\'s 3 × 2 and 13; says where the file differs', async () => {
    const runsDir = path.join(dir, 'runs-grpo');
    const first = session(runsDir);
    const init = await first.initRun('grpo', { spec_file: 'resumable.grpo.json', overrides: started });
    await first.trainRun('grpo', { num_steps: 2 });
    await first.close('the server went away');
    const runDir = init.value.run_dir;

    const second = session(runsDir);
    try {
      const resumed = await second.initRun('grpo', { spec_file: 'resumable.grpo.json', resume: 'latest' });
      assert.strictEqual(resumed.value.run_dir, runDir);
      assert.strictEqual(resumed.value.step, 2);
      assert.strictEqual(resumed.value.iterations, 4, resumed.text);
      assert.match(resumed.text, /2 groups × 3, lr 0\.01, up to 4 iterations/);
      assert.match(resumed.text, /the spec file now differs in .*, not applied: a resume may change only iterations, eval_every, save_every, ttl_seconds, max_cost_usd, max_tokens_total, given as overrides/);
      for (const d of ['groups_per_batch (run 2, file 3)', 'group_size (run 3, file 2)', 'iterations (run 4, file 13)', 'save_every (run 2, file 20)']) assert.ok(resumed.text.includes(d), `${d} in ${resumed.text}`);
      const r = await second.trainRun('grpo', { num_steps: 5 });
      assert.deepStrictEqual([r.value.first_step, r.value.last_step, r.value.steps_done, r.value.steps_total], [2, 3, 4, 4]);
      assert.strictEqual((r.value as unknown as StepReport).groups.total, 2, 'the last iteration had 2 groups (the spec file says 3)');
      assert.match(r.text, /\nran 2 of the 5 iterations asked: the run ends at 4 iterations, all done now; call finish, or init_grpo with resume and a larger "iterations" override/);
    } finally {
      await second.close('test');
    }
    const cfg = config(runDir);
    assert.deepStrictEqual([cfg.groups_per_batch, cfg.group_size, cfg.iterations, cfg.resumes], [2, 3, 4, undefined], 'nothing changed, nothing recorded');
    assert.deepStrictEqual(readMetricsLines(runDir).map((m) => m.step), [0, 1, 2, 3]);
  });

  it('init_grpo with resume may change iterations (recorded in config.json); any other override is refused, naming field, recorded and given, and nothing runs', async () => {
    const runsDir = path.join(dir, 'runs-grpo');
    const s = session(runsDir);
    try {
      const more = await s.initRun('grpo', { spec_file: 'resumable.grpo.json', resume: 'latest', overrides: { iterations: 6 } });
      assert.strictEqual(more.value.iterations, 6);
      assert.match(more.text, /resuming at step 4 with iterations 4 → 6 \(recorded in config\.json\)/);
      const runDir = more.value.run_dir;
      const cfg = config(runDir);
      assert.strictEqual(cfg.iterations, 6);
      const resumes = cfg.resumes as Array<{ step: number; changed: Record<string, unknown> }>;
      assert.strictEqual(resumes.length, 1);
      assert.strictEqual(resumes[0]!.step, 4);
      assert.deepStrictEqual(resumes[0]!.changed, { iterations: { recorded: 4, given: 6 } });
      await s.close('test');

      const refusing = session(runsDir);
      const rowsBefore = fs.readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8');
      await assert.rejects(refusing.initRun('grpo', { spec_file: 'resumable.grpo.json', resume: 'latest', overrides: { group_size: 5, learning_rate: 0.5, iterations: 8 } }), (err: Error) => {
        assert.match(err.message, /config\.json: group_size: recorded 3, given 5/);
        assert.match(err.message, /config\.json: learning_rate: recorded 0\.01, given 0\.5/);
        assert.match(err.message, /only iterations, eval_every, save_every, ttl_seconds, max_cost_usd, max_tokens_total may change on resume/);
        assert.doesNotMatch(err.message, /iterations: recorded/, 'iterations may change');
        return true;
      });
      await refusing.close('test');
      assert.strictEqual(config(runDir).iterations, 6, 'a refused resume changes nothing');
      assert.strictEqual(fs.readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8'), rowsBefore);
    } finally {
      await s.close('test');
    }
  });

  for (const kind of ['sft', 'dpo'] as const) {
    it(`init_${kind} with resume: the recorded batch size and max_steps, a larger max_steps allowed and recorded, another batch size refused`, async () => {
      const runsDir = path.join(dir, `runs-${kind}`);
      const init = (s: TrainingSession, a: { resume?: string; overrides?: Record<string, unknown> }) => (kind === 'sft' ? s.initRun('sft', { spec_file: `resumable.${kind}.json`, ...a }) : s.initRun('dpo', { spec_file: `resumable.${kind}.json`, ...a }));
      const train = (s: TrainingSession, n: number) => (kind === 'sft' ? s.trainRun('sft', { num_steps: n }) : s.trainRun('dpo', { num_steps: n }));
      const first = session(runsDir);
      const started = await init(first, { overrides: { batch_size: 2, max_steps: 3 } });
      await train(first, 1);
      await first.close('the server went away');
      const runDir = started.value.run_dir;

      const second = session(runsDir);
      const resumed = await init(second, { resume: 'latest' });
      assert.match(resumed.text, /batch 2\b/, resumed.text);
      const r = await train(second, 5);
      assert.match(r.text, /\nran 2 of the 5 steps asked: the run ends at 3 steps/);
      await second.close('test');
      assert.deepStrictEqual(readMetricsLines(runDir).map((m) => m.step), [0, 1, 2]);

      const third = session(runsDir);
      const longer = await init(third, { resume: 'latest', overrides: { max_steps: 4 } });
      assert.match(longer.text, /resuming at step 3 with max_steps 3 → 4/);
      assert.strictEqual(config(runDir).max_steps, 4);
      await third.close('test');

      const refused = session(runsDir);
      await assert.rejects(init(refused, { resume: 'latest', overrides: { batch_size: 8 } }), /config\.json: batch_size: recorded 2, given 8/);
      await refused.close('test');
    });
  }

  it('the CLI\'s --resume with a spec: a spec that changes group_size is refused naming it; one that changes only iterations continues, recorded', async () => {
    const runsDir = path.join(dir, 'runs-cli');
    const s = session(runsDir);
    const init = await s.initRun('grpo', { spec_file: 'resumable.grpo.json', overrides: started });
    await s.trainRun('grpo', { num_steps: 1 });
    await s.close('handing over to the CLI');
    const runDir = init.value.run_dir;
    const cli = async (spec: Record<string, unknown>) => {
      const file = path.join(dir, 'cli.grpo.json');
      fs.writeFileSync(file, JSON.stringify(spec));
      const child = spawn(process.execPath, [CLI, 'grpo', '--resume', runDir, file, '--backend', 'custom', '--base-url', engine.server.url, '--runs-dir', runsDir, '--cache-dir', path.join(dir, 'cache')], {
        env: { ...process.env, TINKER_API_KEY: 'tml-test-key' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      return { code, out };
    };
    const recorded = { ...grpoSpec, ...started };
    const refused = await cli({ ...recorded, group_size: 5 });
    assert.strictEqual(refused.code, 1, refused.out);
    assert.match(refused.out, /config\.json: group_size: recorded 3, given 5/);
    assert.deepStrictEqual(readMetricsLines(runDir).map((m) => m.step), [0], 'nothing ran');
    const longer = await cli({ ...recorded, iterations: 3 });
    assert.strictEqual(longer.code, 0, longer.out);
    assert.match(longer.out, /resuming at step 1 with iterations 4 → 3/);
    assert.deepStrictEqual(readMetricsLines(runDir).map((m) => m.step), [0, 1, 2]);
    assert.deepStrictEqual((config(runDir).resumes as Array<{ changed: unknown }>).map((r) => r.changed), [{ iterations: { recorded: 4, given: 3 } }]);
  });

  it('the CLI killed with SIGKILL mid-run, then --resume: the same shared resume point sets aside what the killed attempt ran past it; metrics.jsonl holds each step once', async () => {
    const runsDir = path.join(dir, 'runs-cli-kill');
    const file = path.join(dir, 'kill.grpo.json');
    // steps long enough (16 tokens, 3 × 4 samples) that the kill lands in the one after step 4
    fs.writeFileSync(file, JSON.stringify({ ...grpoSpec, name: 'kill', iterations: 9, save_every: 3, group_size: 4, max_tokens: 16 }));
    const cli = (args: string[]) => {
      const child = spawn(process.execPath, [CLI, 'grpo', ...args, '--backend', 'custom', '--base-url', engine.server.url, '--runs-dir', runsDir, '--cache-dir', path.join(dir, 'cache')], {
        env: { ...process.env, TINKER_API_KEY: 'tml-test-key' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
      return { child, out: () => out, exited: new Promise<number | null>((r) => child.on('exit', r)) };
    };
    const steps = (runDir: string) => (fs.existsSync(path.join(runDir, 'metrics.jsonl')) ? readMetricsLines(runDir).map((m) => m.step) : []);
    const first = cli([file]);
    const runDir = await (async () => {
      const deadline = Date.now() + 300_000;
      for (;;) {
        const found = fs.existsSync(runsDir) ? fs.readdirSync(runsDir).map((d) => path.join(runsDir, d)).find((d) => steps(d).includes(4)) : undefined;
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`step 4 never written: ${first.out()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    first.child.kill('SIGKILL');
    await first.exited;
    const killed = steps(runDir);
    const resumeAt = readCheckpointsWithState(runDir).pop()!;
    assert.ok(killed.some((s) => s >= resumeAt), `rows past the checkpoint at ${resumeAt}: ${killed}`);
    const resumed = cli(['--resume', runDir]);
    assert.strictEqual(await resumed.exited, 0, resumed.out());
    assert.match(resumed.out(), new RegExp(`resuming at step ${resumeAt}: set aside the rows and iteration folders of steps? [\\d–, ]+ that an interrupted attempt ran past the resume point \\(moved to abandoned/`));
    assert.deepStrictEqual(steps(runDir), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'each step once');
    const [attempt] = fs.readdirSync(path.join(runDir, 'abandoned'));
    assert.deepStrictEqual(readMetricsLines(path.join(runDir, 'abandoned', attempt!)).map((m) => m.step), killed.filter((s) => s >= resumeAt));
  });
});

function readCheckpointsWithState(runDir: string): number[] {
  return fs.readFileSync(path.join(runDir, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { batch: number; state_path?: string }).filter((c) => c.state_path).map((c) => c.batch);
}

