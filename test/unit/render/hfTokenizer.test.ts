import * as assert from 'assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TokenizerFilesError } from '../../../src/core/render/errors';
import { HfTokenizer, loadHfTokenizer } from '../../../src/core/render/hfTokenizer';
import { llama3Tokenizer, QWEN3_DIR, qwen3Tokenizer } from './fixtures';

const SAMPLES = [
  'Hello, world! What is 23+45?',
  '  leading spaces, trailing\t\n\n',
  'Ünïcödé façade — naïve café; 日本語のテキスト; emoji 🤖👍🏽',
  "it's 12345678 o'clock, we'll see: x**2 + y_1 = 0x1F",
  'code:\n    def f(x):\n        return x  # comment\r\n',
];

describe('HF tokenizer (@huggingface/tokenizers over real tokenizer files)', () => {
  it('encodes the Qwen3 example exactly as the Rust tokenizer does', () => {
    assert.deepStrictEqual(qwen3Tokenizer().encode('Hello, world! What is 23+45?'), [9707, 11, 1879, 0, 3555, 374, 220, 17, 18, 10, 19, 20, 30]);
  });

  it('encode and encodeWithSpecialTokens agree on text without special tokens, and decode gives the text back', () => {
    for (const tok of [qwen3Tokenizer(), llama3Tokenizer()]) {
      for (const s of SAMPLES) {
        const ids = tok.encode(s);
        assert.deepStrictEqual(ids, tok.encodeWithSpecialTokens(s), `${tok.name}: ${JSON.stringify(s)}`);
        assert.ok(ids.every((id) => !tok.isSpecial(id)));
      }
    }
    const q = qwen3Tokenizer();
    for (const s of SAMPLES) assert.strictEqual(q.decode(q.encode(s)), s);
  });

  it('the two encodings agree on a whole real document (a README shipped in node_modules)', () => {
    const readme = fs.readFileSync(path.join(path.dirname(require.resolve('@huggingface/tokenizers')), '..', 'README.md'), 'utf8');
    assert.ok(readme.length > 5000);
    for (const tok of [qwen3Tokenizer(), llama3Tokenizer()]) assert.deepStrictEqual(tok.encode(readme), tok.encodeWithSpecialTokens(readme), tok.name);
    const q = qwen3Tokenizer();
    assert.strictEqual(q.decode(q.encode(readme)), readme);
  });

  it('encode keeps special-token text as text but recognises non-special added tokens such as <think> (split_special_tokens)', () => {
    const q = qwen3Tokenizer();
    const literal = q.encode('a<|im_end|>b<think>c');
    assert.ok(!literal.includes(151645), 'no <|im_end|> token from text');
    assert.ok(literal.includes(151667), '<think> is an added, non-special token and stays one token');
    assert.strictEqual(q.decode(literal), 'a<|im_end|>b<think>c');
    assert.deepStrictEqual(q.encodeWithSpecialTokens('a<|im_end|>b<think>c'), [64, 151645, 65, 151667, 66]);
  });

  it('reads special tokens, BOS and EOS from the files', () => {
    const q = qwen3Tokenizer();
    assert.strictEqual(q.specialTokenId('<|im_start|>'), 151644);
    assert.strictEqual(q.specialTokenId('<|im_end|>'), 151645);
    assert.strictEqual(q.specialTokenId('<think>'), 151667);
    assert.strictEqual(q.specialTokenId('<nope>'), undefined);
    assert.ok(q.isSpecial(151645));
    assert.ok(!q.isSpecial(151667), '<think> is added but not special');
    assert.ok(!q.isSpecial(9707));
    assert.strictEqual(q.eosTokenId, 151645);
    assert.strictEqual(q.bosTokenId, undefined, 'Qwen3 has no BOS');
    assert.strictEqual(q.vocabSize, 151669);
    assert.strictEqual(q.decode([151644, 872, 198]), '<|im_start|>user\n');
    assert.strictEqual(q.decode([]), '');

    const l = llama3Tokenizer();
    assert.strictEqual(l.bosTokenId, 128000);
    assert.strictEqual(l.eosTokenId, 128001);
    assert.strictEqual(l.specialTokenId('<|eot_id|>'), 128009);
    assert.strictEqual(l.vocabSize, 128256);
  });

  it("decodes as transformers 5 does: spaces cleaned up only where tokenizer_config.json asks and the model is not BPE (so never for Llama 3 or Qwen3)", () => {
    const l = llama3Tokenizer();
    assert.strictEqual(l.decode(l.encode("Hello , world ! isn't")), "Hello , world ! isn't", 'Llama 3 asks for the clean-up, but it is BPE');
    const q = qwen3Tokenizer();
    assert.strictEqual(q.decode(q.encode('Hello , world !')), 'Hello , world !');
    const wordLevel = { model: { type: 'WordLevel', vocab: { a: 0, ',': 1 }, unk_token: 'a' }, added_tokens: [], pre_tokenizer: { type: 'Whitespace' }, decoder: null };
    const plain = new HfTokenizer('x/y', wordLevel, {});
    assert.strictEqual(plain.decode([0, 1]), 'a ,', 'no clean-up when the config does not say');
    const cleaned = new HfTokenizer('x/z', wordLevel, { clean_up_tokenization_spaces: true });
    assert.strictEqual(cleaned.decode([0, 1]), 'a,', 'clean-up where the config asks and the model is not BPE');
  });

  it('refuses ids outside the vocabulary, naming the id', () => {
    assert.throws(() => qwen3Tokenizer().decode([1, 151669]), /token id 151669 is outside the vocabulary/);
  });

  it('is built once per set of files', () => {
    assert.strictEqual(loadHfTokenizer('Qwen/Qwen3-8B', QWEN3_DIR), qwen3Tokenizer());
  });

  it('names the file and field when tokenizer.json is not a tokenizer', () => {
    assert.throws(
      () => new HfTokenizer('x/y', { model: {}, added_tokens: [{ id: 'one', content: '<a>' }] }, {}, '/cache/x/y'),
      (e: unknown) => e instanceof TokenizerFilesError && /\/cache\/x\/y\/tokenizer\.json: added_tokens\.0\.id/.test(e.message),
    );
    assert.throws(
      () => new HfTokenizer('x/y', { added_tokens: [] }, { eos_token: 5 }, '/cache/x/y'),
      (e: unknown) => e instanceof TokenizerFilesError && /tokenizer\.json: model/.test(e.message),
    );
  });

  it('names the file when a cached file is not JSON, and says how to recover', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tok-bad-'));
    try {
      fs.writeFileSync(path.join(dir, 'tokenizer.json'), '<html>');
      fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), '{}');
      assert.throws(() => loadHfTokenizer('x/y', dir), (e: unknown) => e instanceof TokenizerFilesError && e.message.includes(path.join(dir, 'tokenizer.json')) && /delete it/.test(e.message));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
