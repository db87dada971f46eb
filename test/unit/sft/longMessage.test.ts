// A chat line with a 200,000-character message (issue 43): rendering it must not overflow the stack
// (a spread of its tokens into push(...) did), and an SFT run on it is refused before training with
// the same "file:line: N tokens, too long for the model's context" as a chat a little too long, not a
// RangeError (or the engine's "datum 0: …", which names no line); with on_invalid_line "skip" such a
// line is left out and reported, as a DPO pair too long is by default.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { chatToDatum } from '../../../src/core/sft/datums';
import { startDpoRun } from '../../../src/core/dpo/start';
import { startSftRun } from '../../../src/core/sft/start';
import { ServiceClient } from '../../../src/core/tinker/client';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { EngineClient, startEngineClient } from '../grpo/engineFixture';

const LONG = 'x'.repeat(200_000);

describe('SFT: a 200,000-character message', function () {
  this.timeout(300_000);
  let env: EngineClient | undefined;

  before(async () => {
    env = await startEngineClient('tinker-sft-long-');
  });
  after(async () => {
    await env?.close();
  });

  it('renders to a datum and a generation prompt of every token', () => {
    const renderer = getRenderer('chatml', new ByteTokenizer());
    const messages = [
      { role: 'user' as const, content: LONG },
      { role: 'assistant' as const, content: 'ok' },
    ];
    const d = chatToDatum(renderer, messages, 'last_assistant_message');
    assert.ok(d && d.modelInput.length > 200_000, `the datum has ${d?.modelInput.length} input tokens`);
    assert.ok(renderer.buildGenerationPrompt(messages.slice(0, 1)).length > 200_000);
    assert.ok(new ByteTokenizer().encodeWithSpecialTokens(`<|im_start|>${LONG}<|im_end|>`).length === 200_002);
  });

  it('refuses the run naming the file:line, its tokens and the context, as a chat a little too long', async () => {
    const dir = env!.dir;
    const chats = [LONG, 'x'.repeat(500)].map((c) => JSON.stringify({ messages: [{ role: 'user', content: c }, { role: 'assistant', content: 'ok' }] }));
    const results: string[] = [];
    for (const [i, line] of chats.entries()) {
      fs.writeFileSync(path.join(dir, `chats${i}.jsonl`), `${line}\n`);
      const specFile = path.join(dir, `long${i}.sft.json`);
      fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 2, learning_rate: 0.01, batch_size: 1, max_steps: 1, eval_every: 0, save_every: 0, dataset: { path: `chats${i}.jsonl` } }));
      const connect = () => ServiceClient.connect({ baseUrl: env!.engine.server.url, clientVersion: 'test' });
      // refused before training, as any invalid line is (on_invalid_line "stop", SFT's default)
      const r = await startSftRun({ specFile, runsDir: path.join(dir, 'runs'), connect, cacheDir: path.join(dir, 'cache') }).then(
        (x) => `the run ended "${x.status}": ${x.error}`,
        (err: Error) => err.message,
      );
      results.push(r);
    }
    assert.match(results[1]!, /^chats1\.jsonl:1: 5\d\d tokens, too long for the model's context of 64 \(set max_length/, 'the same message for a chat a little too long');
    assert.match(results[0]!, /^chats0\.jsonl:1: 2000\d\d tokens, too long for the model's context of 64 \(set max_length/);
  });

  it('with on_invalid_line "skip" the long chat is left out and reported; a DPO pair too long likewise (its default)', async () => {
    const dir = env!.dir;
    const connect = () => ServiceClient.connect({ baseUrl: env!.engine.server.url, clientVersion: 'test' });
    const chat = (c: string) => JSON.stringify({ messages: [{ role: 'user', content: c }, { role: 'assistant', content: 'ok' }] });
    fs.writeFileSync(path.join(dir, 'mixed.jsonl'), [chat('hi'), chat(LONG), chat('yo')].join('\n') + '\n');
    const sftSpec = path.join(dir, 'mixed.sft.json');
    fs.writeFileSync(sftSpec, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 2, learning_rate: 0.01, batch_size: 1, max_steps: 2, eval_every: 0, save_every: 0, dataset: { path: 'mixed.jsonl', on_invalid_line: 'skip' } }));
    const sftLog: string[] = [];
    const sft = await startSftRun({ specFile: sftSpec, runsDir: path.join(dir, 'runs-skip'), connect, cacheDir: path.join(dir, 'cache'), log: (l) => sftLog.push(l) });
    assert.strictEqual(sft.status, 'completed', sft.error);
    assert.ok(sftLog.some((l) => /^skipped mixed\.jsonl:2: 2000\d\d tokens, too long for the model's context of 64$/.test(l)), sftLog.join('\n'));

    const pair = (p: string) => JSON.stringify({ prompt: p, chosen: '2', rejected: '3' });
    fs.writeFileSync(path.join(dir, 'pairs.jsonl'), [pair('1+1='), pair(`${LONG}1+1=`), pair('2+0=')].join('\n') + '\n');
    const dpoSpec = path.join(dir, 'long.dpo.json');
    fs.writeFileSync(dpoSpec, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 2, learning_rate: 0.005, batch_size: 2, max_steps: 1, eval_every: 0, save_every: 0, dataset: { path: 'pairs.jsonl' } }));
    const dpoLog: string[] = [];
    const dpo = await startDpoRun({ specFile: dpoSpec, runsDir: path.join(dir, 'runs-dpo'), connect, cacheDir: path.join(dir, 'cache'), log: (l) => dpoLog.push(l) });
    assert.strictEqual(dpo.status, 'completed', dpo.error);
    assert.ok(dpoLog.some((l) => /^skipped pairs\.jsonl:2: 2000\d\d tokens, too long for the model's context of 64$/.test(l)), dpoLog.join('\n'));
  });
});
