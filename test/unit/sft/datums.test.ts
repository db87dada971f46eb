// SFT datums against hand-computed ones: for each renderer the tokens the datum trains (weights > 0)
// are exactly the assistant answer the cookbook trains, the weights are 1/n there and 0 elsewhere,
// the shift by one is exact, max_length cuts at the end, and all_assistant_messages trains each turn.
import * as assert from 'assert';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import type { Message, Renderer } from '../../../src/core/render/types';
import { chatToDatum, meanNll } from '../../../src/core/sft/datums';
import { encodeChat } from '../../../src/engine/model/models';
import { llama3Tokenizer, qwen3Tokenizer } from '../render/fixtures';

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });

/** The text of the targets with a non-zero weight, and checks the weights are 1/n there. */
function trainedTargets(r: Renderer, messages: readonly Message[], trainOnWhat: 'last_assistant_message' | 'all_assistant_messages' = 'last_assistant_message'): string[] {
  const d = chatToDatum(r, messages, trainOnWhat);
  assert.ok(d);
  assert.strictEqual(d.modelInput.length, d.targetTokens.length);
  assert.strictEqual(d.weights.length, d.targetTokens.length);
  const n = d.weights.filter((w) => w > 0).length;
  for (const w of d.weights) assert.ok(w === 0 || Math.abs(w - 1 / n) < 1e-7, `weight ${w} is neither 0 nor 1/${n}`);
  // contiguous runs of trained targets, decoded each
  const runs: number[][] = [];
  d.weights.forEach((w, i) => {
    if (w === 0) return;
    if (i > 0 && d.weights[i - 1]! > 0) runs[runs.length - 1]!.push(d.targetTokens[i]!);
    else runs.push([d.targetTokens[i]!]);
  });
  return runs.map((ids) => r.tokenizer.decode(ids));
}

describe('SFT datums', () => {
  it('chatml: the exact datum of a one-turn chat, shifted by one, weights 1/n on the answer and <|im_end|>', () => {
    const r = getRenderer('chatml', new ByteTokenizer());
    const prompt = encodeChat('<|im_start|>user\nWhat is 47 + 85?<|im_end|>\n<|im_start|>assistant\n');
    const answer = encodeChat('132<|im_end|>');
    const tokens = [...prompt, ...answer];
    const d = chatToDatum(r, [user('What is 47 + 85?'), assistant('132')], 'last_assistant_message');
    assert.ok(d);
    assert.deepStrictEqual(d.modelInput, tokens.slice(0, -1));
    assert.deepStrictEqual(d.targetTokens, tokens.slice(1));
    // target j is token j+1: the answer's tokens are targets prompt.length-1 … end
    const expected = tokens.slice(1).map((_, j) => (j + 1 >= prompt.length ? 1 / answer.length : 0));
    assert.deepStrictEqual(Array.from(d.weights), Array.from(Float32Array.from(expected)));
    assert.strictEqual(d.truncated, false);
  });

  it('trains exactly the last answer for every renderer', () => {
    const chat = [user('What is 4 + 5?'), assistant('9')];
    const cases: Array<[string, Renderer, string[]]> = [
      ['chatml', getRenderer('chatml', new ByteTokenizer()), ['9<|im_end|>']],
      ['role_colon', getRenderer('role_colon', qwen3Tokenizer()), [' 9\n\nUser:']],
      ['llama3', getRenderer('llama3', llama3Tokenizer()), ['9<|eot_id|>']],
      ['qwen3', getRenderer('qwen3', qwen3Tokenizer()), ['<think>\n\n</think>\n\n9<|im_end|>']],
      ['qwen3_disable_thinking', getRenderer('qwen3_disable_thinking', qwen3Tokenizer()), ['9<|im_end|>']],
    ];
    for (const [name, r, expected] of cases) assert.deepStrictEqual(trainedTargets(r, chat), expected, name);
  });

  it('all_assistant_messages trains every assistant turn; the default only the last', () => {
    const r = getRenderer('chatml', new ByteTokenizer());
    const chat = [user('1 + 2?'), assistant('3'), user('3 + 4?'), assistant('7')];
    assert.deepStrictEqual(trainedTargets(r, chat), ['7<|im_end|>']);
    assert.deepStrictEqual(trainedTargets(r, chat, 'all_assistant_messages'), ['3<|im_end|>', '7<|im_end|>']);
    const llama = getRenderer('llama3', llama3Tokenizer());
    assert.deepStrictEqual(trainedTargets(llama, chat, 'all_assistant_messages'), ['3<|eot_id|>', '7<|eot_id|>']);
  });

  it('max_length cuts at the end and says so; a chat cut before its answer gives no datum', () => {
    const r = getRenderer('chatml', new ByteTokenizer());
    const chat = [user('What is 47 + 85?'), assistant('132')];
    const promptLen = encodeChat('<|im_start|>user\nWhat is 47 + 85?<|im_end|>\n<|im_start|>assistant\n').length;
    const d = chatToDatum(r, chat, 'last_assistant_message', promptLen + 2);
    assert.ok(d);
    assert.strictEqual(d.truncated, true);
    assert.strictEqual(d.modelInput.length, promptLen + 1);
    assert.strictEqual(r.tokenizer.decode(d.targetTokens.filter((_, i) => d.weights[i]! > 0)), '13');
    assert.strictEqual(chatToDatum(r, chat, 'last_assistant_message', promptLen), undefined);
  });

  it('meanNll is −Σ(ℓ·w)/Σw: the mean over chats of each chat\'s mean token NLL', () => {
    const r = getRenderer('chatml', new ByteTokenizer());
    const a = chatToDatum(r, [user('1+1?'), assistant('2')], 'last_assistant_message')!;
    const b = chatToDatum(r, [user('5+5?'), assistant('10')], 'last_assistant_message')!;
    // chat a: every target log-prob −1 → mean NLL 1; chat b: −3 → 3; mean over chats 2
    const nll = meanNll([a, b], [a.weights.map(() => -1), b.weights.map(() => -3)]);
    assert.ok(Math.abs(nll - 2) < 1e-6, String(nll));
  });
});
