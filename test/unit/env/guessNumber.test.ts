// The ported cookbook environment (examples/guess-number/guess_number.env.py) played by hand through
// the environment worker pool (real Python workers): scripted guesses get the game's feedback and
// rewards (1 right, 0 wrong, -1 for a reply that is no guess, the game going on after it), the game
// ends on the right number or after 10 guesses, each step logs the guess, the feedback and the target,
// and episodes played at once keep their own state. Also: both specs parse, the cloud one names the
// model's own renderer, and the conversation the engine spec renders fits its context for 3 turns.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { ChatMessage } from '../../../src/protocol/chatMessage';
import { createEnvRunner, type EnvEpisode, type EnvRunner } from '../../../src/core/env/runner';
import type { StepResult } from '../../../src/core/env/protocol';
import { parseGrpoSpecFile } from '../../../src/core/grpo/spec';
import { getRenderer } from '../../../src/core/render/registry';
import { recommendedRenderer } from '../../../src/core/render/modelInfo';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';

const root = path.resolve(__dirname, '../../../..');
const dir = path.join(root, 'examples', 'guess-number');
const ENV_FILE = path.join(dir, 'guess_number.env.py');

/** The game's texts, read from the env file (the test checks behaviour, the file owns the wording). */
function constant(name: string): string {
  const m = new RegExp(`^${name} = "([^"]*)"`, 'm').exec(fs.readFileSync(ENV_FILE, 'utf8'));
  assert.ok(m, `${name} is a plain string constant of the env file`);
  return m[1]!;
}

const reply = (content: string): ChatMessage => ({ role: 'assistant', content });

async function play(ep: EnvEpisode, guesses: string[]): Promise<StepResult[]> {
  const out: StepResult[] = [];
  for (const g of guesses) {
    const r = await ep.step(reply(g));
    assert.ok(r.ok, `step(${JSON.stringify(g)}) failed: ${JSON.stringify(r)}`);
    out.push(r.value);
  }
  return out;
}

describe('env: guess-number (the ported cookbook environment)', function () {
  this.timeout(120_000);
  let env: EnvRunner;
  const TOO_LOW = constant('TOO_LOW');
  const TOO_HIGH = constant('TOO_HIGH');
  const CORRECT = constant('CORRECT');
  const REMINDER = constant('FORMAT_REMINDER');

  before(async () => {
    env = await createEnvRunner({ file: ENV_FILE, workers: 2, timeoutMs: 10_000 });
  });
  after(async () => {
    await env?.close();
  });

  it('loads the one class, with no group rewards (the cookbook game has none)', () => {
    assert.strictEqual(env.className, 'GuessNumber');
    assert.strictEqual(env.hasGroupRewards, false);
  });

  it('a binary search: too low, too high, then correct ends the episode with reward 1; the conversation grows turn by turn', async () => {
    const ep = env.episode({ answer: 640 });
    const start = await ep.start();
    assert.ok(start.ok);
    assert.strictEqual(start.value.messages.length, 1);
    assert.strictEqual(start.value.messages[0]!.role, 'system');
    assert.match(start.value.messages[0]!.content, /from 0 to 1023/);
    assert.match(start.value.messages[0]!.content, /Guess: N/);
    const [a, b, c] = await play(ep, ['Guess: 512', 'Guess: 768', 'Guess: 640']);
    assert.deepStrictEqual([a!.reward, a!.episode_done, b!.reward, b!.episode_done, c!.reward, c!.episode_done], [0, false, 0, false, 1, true]);
    assert.deepStrictEqual(a!.next_messages, [start.value.messages[0], reply('Guess: 512'), { role: 'user', content: TOO_LOW }]);
    assert.deepStrictEqual(b!.next_messages, [...a!.next_messages!, reply('Guess: 768'), { role: 'user', content: TOO_HIGH }]);
    assert.strictEqual(c!.next_messages, undefined, 'no next observation after the last step');
    assert.deepStrictEqual(
      [a, b, c].map((r) => r!.logs),
      [
        { guess: 'Guess: 512', feedback: TOO_LOW, target: 640 },
        { guess: 'Guess: 768', feedback: TOO_HIGH, target: 640 },
        { guess: 'Guess: 640', feedback: CORRECT, target: 640 },
      ],
    );
    assert.ok([a, b, c].every((r) => r!.metrics === undefined), 'the game reports logs, not metrics (as the cookbook)');
    await ep.close();
  });

  it('a reply that is not one line "Guess: N" scores -1 and gets the format reminder; the game goes on', async () => {
    const ep = env.episode({ answer: 3 });
    assert.ok((await ep.start()).ok);
    const bad = ['3', 'guess: 3', 'Guess: three', 'Guess: 3 please', 'My guess: 3', ''];
    const results = await play(ep, bad);
    for (const [i, r] of results.entries()) {
      assert.strictEqual(r.reward, -1, `${JSON.stringify(bad[i])} is no guess`);
      assert.strictEqual(r.episode_done, false);
      assert.deepStrictEqual(r.next_messages!.at(-1), { role: 'user', content: REMINDER });
      assert.strictEqual(r.logs?.feedback, REMINDER);
    }
    // the reply's first line is read; whitespace around it and a sign are fine, the rest is ignored
    const [low, right] = await play(ep, ['  Guess:2 ', 'Guess: +3\nbecause 2 was too low']);
    assert.deepStrictEqual([low!.reward, low!.logs?.feedback, right!.reward, right!.episode_done], [0, TOO_LOW, 1, true]);
    await ep.close();
  });

  it('ends after the 10th guess (wrong ones and unreadable ones count alike), with no next observation', async () => {
    const ep = env.episode({ answer: 1000 });
    assert.ok((await ep.start()).ok);
    const guesses = ['Guess: 1', 'nonsense', ...Array.from({ length: 8 }, (_, k) => `Guess: ${1001 + k}`)];
    const results = await play(ep, guesses);
    assert.deepStrictEqual(
      results.map((r) => r.episode_done),
      [...Array<boolean>(9).fill(false), true],
    );
    assert.deepStrictEqual(
      results.map((r) => r.reward),
      [0, -1, 0, 0, 0, 0, 0, 0, 0, 0],
    );
    assert.strictEqual(results[9]!.next_messages, undefined);
    assert.strictEqual(results[9]!.logs?.feedback, TOO_HIGH);
    await ep.close();
  });

  it('a group of episodes played at once (two workers) keeps each its own secret and count', async () => {
    const answers = [5, 500, 1023, 0, 77, 640];
    const eps = answers.map((answer) => env.episode({ answer }));
    assert.ok((await Promise.all(eps.map((e) => e.start()))).every((s) => s.ok));
    const first = await Promise.all(eps.map((e) => e.step(reply('Guess: 500'))));
    const expected = answers.map((a) => (a === 500 ? CORRECT : a < 500 ? TOO_HIGH : TOO_LOW));
    assert.deepStrictEqual(
      first.map((r) => (r.ok ? r.value.logs?.feedback : r.error.message)),
      expected,
    );
    // the second guess is each one's own secret: right for all still playing
    const second = await Promise.all(eps.map((e, i) => (answers[i] === 500 ? undefined : e.step(reply(`Guess: ${answers[i]}`)))));
    for (const [i, r] of second.entries()) {
      if (answers[i] === 500) continue;
      assert.ok(r?.ok);
      assert.deepStrictEqual([r.value.reward, r.value.episode_done, r.value.logs?.target], [1, true, answers[i]]);
    }
    await Promise.all(eps.map((e) => e.close()));
  });

  it('a dataset line without an integer answer fails the episode at start with the Python error', async () => {
    const r = await env.episode({ answer: 'x' }).start();
    assert.ok(!r.ok);
    assert.strictEqual(r.error.kind, 'exception');
    assert.match(r.error.message, /ValueError/);
  });

  it('the specs: the cloud one runs Qwen3-4B-Instruct-2507 with its recommended renderer, the engine one arith-chat; both the same env file and data', async () => {
    const { spec: cloud } = await parseGrpoSpecFile(path.join(dir, 'guess-number.grpo.json'));
    const { spec: engine } = await parseGrpoSpecFile(path.join(dir, 'guess-number-engine.grpo.json'));
    assert.strictEqual(cloud.backend, 'cloud');
    assert.strictEqual(cloud.model, 'Qwen/Qwen3-4B-Instruct-2507');
    assert.strictEqual(cloud.renderer, recommendedRenderer(cloud.model));
    assert.strictEqual(engine.backend, 'local');
    assert.strictEqual(engine.model, 'tinker-studio/arith-chat');
    assert.strictEqual(engine.renderer, 'chatml');
    assert.strictEqual(cloud.env?.file, ENV_FILE);
    assert.strictEqual(engine.env?.file, ENV_FILE);
    assert.strictEqual(cloud.env?.max_turns, 10);
    assert.strictEqual(engine.env?.max_trajectory_tokens, 256);
    assert.strictEqual(cloud.dataset?.path, engine.dataset?.path);
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    for (const f of ['guess-number.grpo.json', 'guess-number-engine.grpo.json']) assert.ok(readme.includes(`tinker-studio grpo examples/guess-number/${f}`) && readme.includes(`node dist/cli.js grpo examples/guess-number/${f}`), `the README gives the command for ${f}`);
    // the cookbook's split: 90 % of 0..1023 to train, the rest held out, no number in both
    const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { answer: number }).answer);
    const all = [...read('train.jsonl'), ...read('holdout.jsonl')];
    assert.deepStrictEqual([read('train.jsonl').length, read('holdout.jsonl').length], [921, 103]);
    assert.deepStrictEqual([...all].sort((a, b) => a - b), Array.from({ length: 1024 }, (_, k) => k));
  });

  it('on the engine spec, the system prompt and three turns of short replies and reminders fit 256 positions with max_tokens', async () => {
    const renderer = getRenderer('chatml', new ByteTokenizer());
    const { spec } = await parseGrpoSpecFile(path.join(dir, 'guess-number-engine.grpo.json'));
    const ep = env.episode({ answer: 9 });
    const s = await ep.start();
    assert.ok(s.ok);
    let messages = s.value.messages;
    for (let turn = 1; turn <= 3; turn++) {
      const ob = renderer.buildGenerationPrompt(messages).length;
      assert.ok(ob + spec.max_tokens <= spec.env!.max_trajectory_tokens!, `turn ${turn}: ${ob} + ${spec.max_tokens} tokens fit`);
      const r = await ep.step(reply('123'));
      assert.ok(r.ok);
      messages = r.value.next_messages!;
    }
    await ep.close();
  });
});
