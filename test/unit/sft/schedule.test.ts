// LR schedules, the validation split and the batch order: values by hand, determinism by seed.
import * as assert from 'assert';
import { recordToChat } from '../../../src/core/training/chats';
import { batchAt, batchesPerEpoch, splitValidation, totalSteps } from '../../../src/core/training/batches';
import { learningRateAt, lrMultiplier } from '../../../src/core/training/lr';

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

describe('SFT schedules and splits', () => {
  it('linear, cosine and constant multipliers at hand-computed steps', () => {
    close(lrMultiplier('linear', 0, 10), 1);
    close(lrMultiplier('linear', 5, 10), 0.5);
    close(lrMultiplier('linear', 9, 10), 0.1);
    close(lrMultiplier('cosine', 0, 10), 1);
    close(lrMultiplier('cosine', 5, 10), 0.5);
    close(lrMultiplier('cosine', 10, 10), 0);
    close(lrMultiplier('cosine', 2, 8), 0.5 * (1 + Math.SQRT1_2));
    close(lrMultiplier('constant', 7, 10), 1);
  });

  it('warmup rises linearly to the peak, then the schedule runs over the remaining steps', () => {
    close(learningRateAt(1e-3, 'linear', 0, 12, 4), 2.5e-4);
    close(learningRateAt(1e-3, 'linear', 3, 12, 4), 1e-3);
    close(learningRateAt(1e-3, 'linear', 4, 12, 4), 1e-3);
    close(learningRateAt(1e-3, 'linear', 8, 12, 4), 5e-4);
    close(learningRateAt(1e-3, 'constant', 11, 12, 0), 1e-3);
  });

  it('total steps: batches per epoch × epochs (last partial batch dropped), capped by max_steps', () => {
    assert.strictEqual(batchesPerEpoch(100, 32), 3);
    assert.strictEqual(batchesPerEpoch(5, 32), 1);
    assert.strictEqual(totalSteps(100, { batchSize: 32 }), 3);
    assert.strictEqual(totalSteps(100, { batchSize: 32, numEpochs: 4 }), 12);
    assert.strictEqual(totalSteps(100, { batchSize: 32, numEpochs: 4, maxSteps: 5 }), 5);
    assert.strictEqual(totalSteps(100, { batchSize: 32, maxSteps: 20 }), 20);
  });

  it('the validation split is a function of the seed: same seed same split, disjoint and complete', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const a = splitValidation(items, 0.2, 7);
    const b = splitValidation(items, 0.2, 7);
    const c = splitValidation(items, 0.2, 8);
    assert.deepStrictEqual(a, b);
    assert.notDeepStrictEqual(a.validation, c.validation);
    assert.strictEqual(a.validation.length, 10);
    assert.deepStrictEqual([...a.train, ...a.validation].sort((x, y) => x - y), items);
    assert.deepStrictEqual(a.train, [...a.train].sort((x, y) => x - y), 'train keeps file order');
  });

  it('batches: each epoch a seeded permutation; step k gives the same batch whenever it is asked', () => {
    const train = Array.from({ length: 10 }, (_, i) => i);
    const e0 = [0, 1, 2].flatMap((s) => batchAt(train, s, 3, 1).items);
    const e1 = [3, 4, 5].flatMap((s) => batchAt(train, s, 3, 1).items);
    assert.strictEqual(new Set(e0).size, 9, 'no chat twice in an epoch');
    assert.notDeepStrictEqual(e0, e1, 'epochs are shuffled differently');
    assert.deepStrictEqual(batchAt(train, 4, 3, 1), { epoch: 1, batch: 1, items: e1.slice(3, 6) });
  });

  it('records: a messages chat, or prompt/completion, with the system prompt put first', () => {
    const f = { messagesField: 'messages', promptField: 'prompt', completionField: 'completion', systemPrompt: 'Be brief.' };
    assert.deepStrictEqual(recordToChat({ prompt: 'Hi', completion: 'Hello' }, f, 'x:1'), {
      ok: true,
      chat: { id: 'x:1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }] },
    });
    const noAnswer = recordToChat({ messages: [{ role: 'user', content: 'Hi' }] }, f, 'x:2');
    assert.ok(!noAnswer.ok && /messages: has no assistant message/.test(noAnswer.reason), JSON.stringify(noAnswer));
    const neither = recordToChat({ question: 'Hi' }, f, 'x:3');
    assert.ok(!neither.ok && /needs "messages".*"prompt" and "completion"/.test(neither.reason));
  });

  it('records: text content parts are joined; an image part is refused naming the limit', () => {
    const f = { messagesField: 'messages', promptField: 'prompt', completionField: 'completion' };
    const parts = recordToChat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi ' }, { type: 'text', text: 'there' }] }, { role: 'assistant', content: 'Hello' }] }, f, 'x:1');
    assert.ok(parts.ok && parts.chat.messages[0]!.content === 'Hi there', JSON.stringify(parts));
    const image = recordToChat({ messages: [{ role: 'user', content: [{ type: 'image', image: 'cat.png' }, { type: 'text', text: 'What is this?' }] }, { role: 'assistant', content: 'A cat.' }] }, f, 'x:2');
    assert.ok(!image.ok && /messages\[0\]\.content: content parts other than text \(images, audio\) are not supported.*qwen3_vl.*image token counts/.test(image.reason), JSON.stringify(image));
  });
});
