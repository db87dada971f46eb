// The environment example of docs/rewards-and-environments.md ("RL environments") works as printed:
// its env file, dataset lines and spec are taken from that page, the spec parses, and the class plays episodes through the env
// worker pool (real Python) with the rewards, metrics, logs and group rewards the page describes.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { createEnvRunner, type EnvRunner } from '../../../src/core/env/runner';
import { parseGrpoSpecFile } from '../../../src/core/grpo/spec';
import type { ChatMessage } from '../../../src/protocol/chatMessage';

const root = path.resolve(__dirname, '../../../..');

/** The first fenced block of `lang` in the docs page's "RL environments" section. */
function block(lang: string): string {
  const page = fs.readFileSync(path.join(root, 'docs', 'rewards-and-environments.md'), 'utf8');
  const start = page.indexOf('\n## RL environments');
  assert.ok(start >= 0, 'docs/rewards-and-environments.md has its RL environments section');
  const next = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, next < 0 ? undefined : next);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  assert.ok(m, `a ${lang} block in the section`);
  return m[1]!;
}

const reply = (content: string): ChatMessage => ({ role: 'assistant', content });

describe("env: the docs' environment example", function () {
  this.timeout(120_000);
  let dir: string;
  let env: EnvRunner;
  let envFile: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-readme-env-'));
    const source = block('python');
    const name = /^# (\S+\.env\.py)/.exec(source)?.[1];
    assert.ok(name, 'the example starts by naming its file');
    envFile = path.join(dir, name);
    fs.writeFileSync(envFile, source);
    const spec = JSON.parse(block('json')) as { dataset: { path: string }; env: { file: string } };
    assert.strictEqual(spec.env.file, name, 'the spec runs the example file');
    fs.writeFileSync(path.join(dir, spec.dataset.path), block('jsonl'));
    fs.writeFileSync(path.join(dir, 'example.grpo.json'), JSON.stringify(spec));
    env = await createEnvRunner({ file: envFile, workers: 1, timeoutMs: 10_000 });
  });
  after(async () => {
    await env?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the spec parses and names the env file and dataset next to it', async () => {
    const { spec } = await parseGrpoSpecFile(path.join(dir, 'example.grpo.json'));
    assert.strictEqual(spec.env?.file, envFile);
    assert.ok(spec.dataset?.path && fs.existsSync(spec.dataset.path));
    assert.strictEqual(spec.env?.max_turns, 2);
  });

  it('a right first answer ends the episode with reward 1; a wrong one gets "Wrong, try again." and one more turn', async () => {
    assert.strictEqual(env.hasGroupRewards, true);
    const line = JSON.parse(block('jsonl').split('\n')[0]!) as { x: number; y: number };
    const [a, b] = [env.episode(line), env.episode(line)];
    const [sa, sb] = await Promise.all([a.start(), b.start()]);
    assert.ok(sa.ok && sb.ok);
    assert.deepStrictEqual(sa.value.messages, [{ role: 'user', content: `What is ${line.x} + ${line.y}?` }]);
    assert.deepStrictEqual(await a.step(reply(String(line.x + line.y))), { ok: true, value: { reward: 1, episode_done: true, metrics: { correct: 1 } } });
    const first = await b.step(reply('0'));
    assert.ok(first.ok);
    assert.deepStrictEqual(first.value, {
      reward: 0,
      episode_done: false,
      next_messages: [sa.value.messages[0], reply('0'), { role: 'user', content: 'Wrong, try again.' }],
      logs: { first_reply: '0' },
    });
    assert.deepStrictEqual(await b.step(reply('1')), { ok: true, value: { reward: 0, episode_done: true, metrics: { correct: 0 } } });
    await Promise.all([a.close(), b.close()]);
    // the group reward: a bonus for the shortest episodes of the group
    const short = [sa.value.messages[0]!, reply('7')];
    const long = [...first.value.next_messages!, reply('1')];
    assert.deepStrictEqual(await env.groupRewards([line, line], [short, long]), {
      ok: true,
      value: [
        { reward: 0.1, metrics: { shortest: 1 } },
        { reward: 0, metrics: { shortest: 0 } },
      ],
    });
  });
});
