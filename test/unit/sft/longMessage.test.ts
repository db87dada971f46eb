// A chat line with a 200,000-character message (issue 43): rendering it must not overflow the stack
// (a spread of its tokens into push(...) did), and an SFT run on it fails with the same "longer than
// the model's context" message as a chat a little too long, not a RangeError.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { chatToDatum } from '../../../src/core/sft/datums';
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

  it('fails the run with the message a too-long chat gets, naming the context', async () => {
    const dir = env!.dir;
    const chats = [LONG, 'x'.repeat(500)].map((c) => JSON.stringify({ messages: [{ role: 'user', content: c }, { role: 'assistant', content: 'ok' }] }));
    const results: string[] = [];
    for (const [i, line] of chats.entries()) {
      fs.writeFileSync(path.join(dir, `chats${i}.jsonl`), `${line}\n`);
      const specFile = path.join(dir, `long${i}.sft.json`);
      fs.writeFileSync(specFile, JSON.stringify({ model: RANDOM_MODEL, lora_rank: 2, learning_rate: 0.01, batch_size: 1, max_steps: 1, eval_every: 0, save_every: 0, dataset: { path: `chats${i}.jsonl` } }));
      const connect = () => ServiceClient.connect({ baseUrl: env!.engine.server.url, clientVersion: 'test' });
      const r = await startSftRun({ specFile, runsDir: path.join(dir, 'runs'), connect, cacheDir: path.join(dir, 'cache') });
      assert.strictEqual(r.status, 'failed');
      results.push(r.error ?? '');
    }
    assert.match(results[1]!, /datum 0: 5\d\d tokens is longer than the model's context of \d+/, 'the usual message, for a chat a little too long');
    assert.match(results[0]!, /datum 0: 2000\d\d tokens is longer than the model's context of \d+/);
  });
});
