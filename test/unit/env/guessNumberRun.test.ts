// The guess-number example's engine spec run as a user runs it: `tinker-studio grpo <spec>` (the
// compiled CLI as a child process, the embedded engine in its process, arith-chat, real Python env
// workers), for two iterations with a holdout evaluation before each. What is checked is mechanics,
// never whether arith-chat plays well (its weights change): every episode's transcript starts with
// the env's system prompt, each later turn shows exactly the env's feedback to the previous reply,
// every turn's reward is what the env itself gives for that reply (each episode is replayed through
// the env file in a fresh worker pool) except a last turn ended by the run's context limit, an
// episode's reward is the sum of its turns' and its advantage that minus the group mean, and the
// metrics are the cookbook's env/all and test/env/all figures of those very episodes.
import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { createEnvRunner, type EnvRunner } from '../../../src/core/env/runner';
import { HOLDOUT, readSamples, type SampleRecord, type SampleSplit } from '../../../src/core/runs/sampleRecord';
import { readMetricsLines } from '../grpo/engineFixture';

const CLI = path.join(__dirname, '../../../src/cli/main.js');
const EXAMPLE = path.resolve(__dirname, '../../../../examples/guess-number');
const SPEC = 'guess-number-engine.grpo.json';
const HOLDOUT_PROBLEMS = 4;

function runCli(args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, TINKER_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.once('error', reject);
    proc.once('exit', (code) => resolve({ code, out }));
  });
}

const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe('env: guess-number on the engine through `tinker-studio grpo` (mechanics)', function () {
  this.timeout(900_000);
  let work: string;
  let runDir: string;
  let out: string;
  let spec: { groups_per_batch: number; group_size: number; max_tokens: number; env: { max_trajectory_tokens: number; context_overflow_reward?: number } };
  let replay: EnvRunner;

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-guess-number-'));
    // the example as shipped (env file, training data, spec), with two iterations and a smaller
    // holdout evaluated before each so the test stays short
    for (const f of ['guess_number.env.py', 'train.jsonl']) fs.copyFileSync(path.join(EXAMPLE, f), path.join(work, f));
    const holdout = fs.readFileSync(path.join(EXAMPLE, 'holdout.jsonl'), 'utf8').split('\n').slice(0, HOLDOUT_PROBLEMS);
    fs.writeFileSync(path.join(work, 'holdout.jsonl'), `${holdout.join('\n')}\n`);
    const shipped = JSON.parse(fs.readFileSync(path.join(EXAMPLE, SPEC), 'utf8')) as Record<string, unknown>;
    delete shipped.$schema;
    spec = { ...shipped, iterations: 2, eval_every: 1 } as unknown as typeof spec;
    fs.writeFileSync(path.join(work, SPEC), JSON.stringify(spec, null, 2));
    const runsDir = path.join(work, 'runs');
    const r = await runCli(['grpo', SPEC, '--runs-dir', runsDir, '--cache-dir', path.join(work, 'cache')], work);
    out = r.out;
    assert.strictEqual(r.code, 0, r.out);
    const dirs = fs.readdirSync(runsDir).filter((d) => !d.startsWith('.'));
    assert.strictEqual(dirs.length, 1, dirs.join(', '));
    runDir = path.join(runsDir, dirs[0]!);
    replay = await createEnvRunner({ file: path.join(work, 'guess_number.env.py'), workers: 2, timeoutMs: 10_000 });
  });
  after(async () => {
    await replay?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  async function records(iteration: number, split: SampleSplit): Promise<SampleRecord[]> {
    const read = await readSamples(runDir, iteration, split);
    assert.ok(read, `iteration ${iteration} has ${split.kind} samples`);
    assert.deepStrictEqual(read.problems, []);
    return read.records;
  }

  /** The dataset line of a record's problem (`<file>:<line>`), as the env was constructed from it. */
  function problemOf(r: SampleRecord): { answer: number } {
    const [file, line] = r.problem_id.split(':');
    const text = fs.readFileSync(path.join(work, file!), 'utf8').split('\n')[Number(line) - 1]!;
    return JSON.parse(text) as { answer: number };
  }

  /** Checks one episode against the env file itself, and returns its number of turns. */
  async function checkEpisode(r: SampleRecord): Promise<number> {
    const t = r.transcript;
    assert.ok(t, `${r.problem_id}: the record keeps the episode's transcript`);
    assert.ok(t.turns.length >= 1 && t.turns.length <= 10);
    const problem = problemOf(r);
    assert.strictEqual(r.ground_truth, String(problem.answer));
    const ep = replay.episode(problem);
    try {
      const start = await ep.start();
      assert.ok(start.ok);
      assert.deepStrictEqual(t.turns[0]!.new_messages, start.value.messages, 'the first turn shows the env initial observation');
      assert.ok(r.prompt.includes(start.value.messages[0]!.content), 'the rendered prompt holds the system prompt');
      for (const [k, turn] of t.turns.entries()) {
        assert.strictEqual(turn.reply.role, 'assistant');
        assert.strictEqual(turn.reset, undefined, 'the game only extends its conversation');
        const last: boolean = k === t.turns.length - 1;
        assert.strictEqual(turn.episode_done, last);
        if (turn.stop_reason === 'length') {
          // cut off at max_tokens: the run ends the episode before the env sees the reply
          assert.ok(last);
          assert.strictEqual(turn.reward, -0.1);
          assert.strictEqual(turn.metrics['stop/max_tokens'], 1);
          assert.strictEqual(t.stop, 'max_tokens');
          continue;
        }
        if (turn.parse_error !== undefined) {
          // a reply the renderer cannot parse: failed_parse_reward, the episode ends (the defaults)
          assert.ok(last);
          assert.strictEqual(turn.reward, -1);
          assert.strictEqual(t.stop, 'parse_error');
          continue;
        }
        const step = await ep.step(turn.reply);
        assert.ok(step.ok);
        const env = step.value;
        assert.deepStrictEqual(turn.logs, env.logs, `turn ${k + 1}: the env's logs`);
        if (env.episode_done) {
          assert.ok(last);
          assert.strictEqual(turn.reward, env.reward, `turn ${k + 1}: the env's reward`);
          assert.strictEqual(t.stop, 'completed');
        } else if (last) {
          // the next observation would pass max_trajectory_tokens: the cookbook's context overflow
          assert.strictEqual(t.stop, 'context_overflow');
          assert.strictEqual(turn.reward, -0.1);
          assert.strictEqual(turn.metrics.context_overflow, 1);
        } else {
          assert.strictEqual(turn.reward, env.reward, `turn ${k + 1}: the env's reward`);
          assert.ok([0, -1].includes(turn.reward));
          // the next turn shows exactly what the env answered: the reply, then its feedback
          assert.deepStrictEqual(t.turns[k + 1]!.new_messages, [env.next_messages!.at(-1)]);
          assert.strictEqual(env.next_messages!.at(-1)!.role, 'user');
          assert.strictEqual(env.next_messages!.at(-1)!.content, env.logs?.feedback);
          assert.ok(t.turns[k + 1]!.ob_tokens + spec.max_tokens <= spec.env.max_trajectory_tokens);
        }
      }
    } finally {
      await ep.close();
    }
    assert.ok(close(r.reward, t.turns.reduce((s, x) => s + x.reward, 0) + t.group_reward), `${r.problem_id}: the episode's reward is the sum of its turns'`);
    assert.strictEqual(t.group_reward, 0);
    assert.strictEqual(r.completion_tokens.length, t.turns.reduce((s, x) => s + x.ac_tokens, 0), 'every turn\'s sampled tokens');
    return t.turns.length;
  }

  /** The cookbook's env metrics of these episodes, as metrics.jsonl must hold them under `prefix`. */
  function checkMetrics(line: Record<string, unknown>, prefix: string, recs: SampleRecord[]): void {
    const turns = recs.flatMap((r) => r.transcript!.turns);
    assert.strictEqual(line[`${prefix}/total_episodes`], recs.length);
    assert.strictEqual(line[`${prefix}/total_turns`], turns.length);
    assert.ok(close(line[`${prefix}/turns_per_episode`] as number, turns.length / recs.length));
    assert.ok(close(line[`${prefix}/ac_tokens_per_turn`] as number, mean(turns.map((t) => t.ac_tokens))));
    assert.ok(close(line[`${prefix}/ob_tokens_per_turn`] as number, mean(turns.map((t) => t.ob_tokens))));
    assert.ok(close(line[`${prefix}/reward/total`] as number, mean(recs.map((r) => r.reward))));
    for (const key of new Set(turns.flatMap((t) => Object.keys(t.metrics)))) {
      const holding = turns.filter((t) => key in t.metrics).map((t) => t.metrics[key]!);
      assert.ok(close(line[`${prefix}/${key}`] as number, mean(holding)), `${prefix}/${key}: the mean of the per-step metric`);
    }
    for (const k of ['frac_mixed', 'frac_all_good', 'frac_all_bad']) assert.strictEqual(typeof line[`${prefix}/by_group/${k}`], 'number');
  }

  it('runs two iterations of the env file on arith-chat and writes every episode as a multi-turn transcript with the env feedback and rewards', async () => {
    assert.match(out, /environment: GuessNumber \(guess_number\.env\.py\)/);
    const metrics = readMetricsLines(runDir);
    assert.deepStrictEqual(
      metrics.map((m) => m.step),
      [0, 1],
    );
    let longest = 0;
    for (const i of [0, 1]) {
      const train = await records(i, { kind: 'train' });
      assert.strictEqual(train.length, spec.groups_per_batch * spec.group_size);
      for (const r of train) longest = Math.max(longest, await checkEpisode(r));
      // advantages: each episode's total minus its group's mean
      for (let g = 0; g < spec.groups_per_batch; g++) {
        const group = train.filter((r) => r.group_idx === g);
        assert.strictEqual(group.length, spec.group_size);
        const m = mean(group.map((r) => r.reward));
        for (const r of group) assert.ok(close(r.advantage, r.reward - m), `group ${g}: advantage = total − group mean`);
      }
      checkMetrics(metrics[i] as unknown as Record<string, unknown>, 'env/all', train);
      const test = await records(i, HOLDOUT);
      assert.strictEqual(test.length, HOLDOUT_PROBLEMS, 'one episode per holdout problem');
      for (const r of test) longest = Math.max(longest, await checkEpisode(r));
      checkMetrics(metrics[i] as unknown as Record<string, unknown>, 'test/env/all', test);
    }
    // a reply that ends on its stop sequence gets the env's feedback and another turn; unless every
    // reply of both iterations ran into max_tokens, some episode has several turns
    assert.ok(longest >= 2, `episodes of several turns (longest: ${longest})`);
  });
});
