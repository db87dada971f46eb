import * as assert from 'assert';
import { ByteTokenizer, ENGINE_BYTE_TOKENIZER } from '../../../src/core/render/byteTokenizer';
import { BYTE_TOKENIZER, decodeBytes, encodeChat } from '../../../src/engine/model/models';

describe('byte tokenizer (the embedded engine models)', () => {
  const tok = new ByteTokenizer();

  it("is the engine's tokenizer: same vocabulary, special tokens and EOS", () => {
    assert.strictEqual(ENGINE_BYTE_TOKENIZER.vocabSize, BYTE_TOKENIZER.vocabSize);
    assert.deepStrictEqual(ENGINE_BYTE_TOKENIZER.specialTokens, BYTE_TOKENIZER.specialTokens);
    assert.strictEqual(ENGINE_BYTE_TOKENIZER.eosToken, BYTE_TOKENIZER.eosToken);
    assert.strictEqual(tok.eosTokenId, 256);
    assert.strictEqual(tok.bosTokenId, undefined);
    assert.strictEqual(tok.vocabSize, 259);
  });

  it('encodes UTF-8 bytes and round-trips text, multi-byte characters included', () => {
    assert.deepStrictEqual(tok.encode('Hi é'), [72, 105, 32, 0xc3, 0xa9]);
    for (const s of ['', 'What is 47 + 85?', 'naïve 日本 🤖', '<|im_end|> as text']) assert.strictEqual(tok.decode(tok.encode(s)), s);
  });

  it('keeps special-token text as bytes in encode, and recognises it in encodeWithSpecialTokens as the engine does', () => {
    const text = '<|im_start|>user\nWhat is 47 + 85?<|im_end|>\n<|im_start|>assistant\n';
    assert.ok(!tok.encode(text).some((id) => id >= 256));
    assert.deepStrictEqual(tok.encodeWithSpecialTokens(text), encodeChat(text));
    assert.strictEqual(tok.decode(encodeChat(text)), decodeBytes(encodeChat(text)));
    assert.deepStrictEqual(
      [257, 258, 256].map((id) => tok.isSpecial(id)),
      [true, true, true],
    );
    assert.strictEqual(tok.specialTokenId('<|im_end|>'), 258);
  });

  it('refuses ids outside the vocabulary', () => {
    assert.throws(() => tok.decode([72, 259]), /token id 259 is outside the vocabulary/);
  });
});
