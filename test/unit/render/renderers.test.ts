// Token-exactness of the renderers against the cookbook's rules (grpo-reference §7), checked
// against the models' own chat templates (rendered with @huggingface/jinja, then encoded) where the
// cookbook matches them, and against hand-checked ids where it deliberately does not.
import * as assert from 'assert';
import { Template } from '@huggingface/jinja';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { RendererError } from '../../../src/core/render/errors';
import type { HfTokenizer } from '../../../src/core/render/hfTokenizer';
import { getRenderer, RENDERER_NAMES } from '../../../src/core/render/registry';
import type { Message, Renderer } from '../../../src/core/render/types';
import { encodeChat } from '../../../src/engine/model/models';
import { llama3Tokenizer, qwen3Tokenizer } from './fixtures';

interface TemplateMessage {
  role: string;
  content: string;
  reasoning_content?: string;
}

function toTemplate(messages: readonly Message[]): TemplateMessage[] {
  return messages.map((m) => ({ role: m.role, content: m.content, ...(m.thinking ? { reasoning_content: m.thinking } : {}) }));
}

/** The model's chat template, rendered as transformers' apply_chat_template does, then encoded. */
function applyChatTemplate(tok: HfTokenizer, messages: readonly Message[], vars: Record<string, unknown>): number[] {
  assert.ok(tok.chatTemplate, `${tok.name} has a chat template`);
  const bos = tok.bosTokenId === undefined ? '' : tok.decode([tok.bosTokenId]);
  const text = new Template(tok.chatTemplate).render({ messages: toTemplate(messages), bos_token: bos, ...vars });
  return tok.encodeWithSpecialTokens(text);
}

/** The pieces of a token list as [id, text] pairs, for readable failures. */
function show(tok: { decode(ids: readonly number[]): string }, ids: readonly number[]): string {
  return ids.map((id) => `${id}:${JSON.stringify(tok.decode([id]))}`).join(' ');
}

function trainedText(r: Renderer, messages: readonly Message[]): string {
  const ex = r.buildSupervisedExample(messages);
  assert.strictEqual(ex.weights.length, ex.tokens.length);
  return r.tokenizer.decode(ex.tokens.filter((_, i) => ex.weights[i] === 1));
}

const user = (content: string): Message => ({ role: 'user', content });
const system = (content: string): Message => ({ role: 'system', content });
const assistant = (content: string, thinking?: string): Message => ({ role: 'assistant', content, ...(thinking ? { thinking } : {}) });

describe('renderers', () => {
  it('getRenderer knows the cookbook renderers implemented so far and chatml, and names the choices otherwise', () => {
    for (const name of ['role_colon', 'llama3', 'qwen3', 'qwen3_disable_thinking', 'qwen3_instruct', 'qwen3_vl', 'qwen3_vl_instruct', 'deepseekv3', 'deepseekv3_disable_thinking', 'deepseekv3_thinking', 'chatml']) {
      assert.ok(RENDERER_NAMES.includes(name), name);
    }
    assert.ok(!RENDERER_NAMES.includes('tml_v0'), 'tml_v0 (Inkling) is not implemented: its format is not public');
    assert.throws(() => getRenderer('qwen9', qwen3Tokenizer()), /renderer "qwen9" is not implemented.*available: role_colon, llama3/);
    assert.throws(() => getRenderer('llama3', qwen3Tokenizer()), /needs the special token <\|begin_of_text\|>/);
  });

  describe('qwen3 and qwen3_disable_thinking', () => {
    const conversations: Message[][] = [
      [user('Hi')],
      [system('You are terse.'), user('What is 4 + 5?')],
      [user('What is 4 + 5?'), assistant('9', 'Four plus five.'), user('And 17 + 25?')],
      [user('Weather in Paris?'), { role: 'tool', content: '{"temp": 21}' }],
    ];

    it("builds the generation prompt the model's chat template builds (thinking on and off)", () => {
      const tok = qwen3Tokenizer();
      for (const conv of conversations) {
        const thinking = getRenderer('qwen3', tok).buildGenerationPrompt(conv);
        assert.deepStrictEqual(thinking, applyChatTemplate(tok, conv, { add_generation_prompt: true }), show(tok, thinking));
        const off = getRenderer('qwen3_disable_thinking', tok).buildGenerationPrompt(conv);
        assert.deepStrictEqual(off, applyChatTemplate(tok, conv, { add_generation_prompt: true, enable_thinking: false }), show(tok, off));
      }
    });

    it('ends the prompt where sampling starts: before <think> (qwen3), after the empty think block (disabled)', () => {
      const tok = qwen3Tokenizer();
      assert.deepStrictEqual(getRenderer('qwen3', tok).buildGenerationPrompt([user('Hi')]), [151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198]);
      assert.deepStrictEqual(
        getRenderer('qwen3_disable_thinking', tok).buildGenerationPrompt([user('Hi')]).slice(-4),
        [151667, 271, 151668, 271], // <think> "\n\n" </think> "\n\n"
      );
    });

    it('renders a trained turn as the template does: the think block framed, trained with the answer and <|im_end|>', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('qwen3', tok);
      for (const turn of [assistant('9', 'Four plus five is nine.'), assistant('9')]) {
        const conv = [user('What is 4 + 5?'), turn];
        const ex = r.buildSupervisedExample(conv);
        // the template also writes the newline after <|im_end|>, which the cookbook gives to the next header
        const hf = applyChatTemplate(tok, conv, { add_generation_prompt: false });
        assert.deepStrictEqual(hf.at(-1), 198);
        assert.deepStrictEqual(ex.tokens, hf.slice(0, -1), show(tok, ex.tokens));
      }
      assert.strictEqual(trainedText(r, [user('What is 4 + 5?'), assistant('9', 'Four plus five is nine.')]), '<think>\nFour plus five is nine.\n</think>\n\n9<|im_end|>');
      assert.strictEqual(trainedText(r, [user('What is 4 + 5?'), assistant('9')]), '<think>\n\n</think>\n\n9<|im_end|>');
    });

    it('qwen3_disable_thinking does not train on the empty think block its prompt supplies, and rejects a turn with reasoning', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('qwen3_disable_thinking', tok);
      const conv = [user('What is 4 + 5?'), assistant('9')];
      const ex = r.buildSupervisedExample(conv);
      assert.deepStrictEqual(ex.tokens, applyChatTemplate(tok, conv, { add_generation_prompt: false, enable_thinking: false }).slice(0, -1));
      assert.strictEqual(trainedText(r, conv), '9<|im_end|>');
      const prompt = r.buildGenerationPrompt([user('What is 4 + 5?')]);
      assert.deepStrictEqual(ex.tokens.slice(0, prompt.length), prompt);
      assert.throws(() => r.buildSupervisedExample([user('q'), assistant('a', 'some reasoning')]), RendererError);
    });

    it('strips reasoning from earlier assistant turns, as the template does', () => {
      const tok = qwen3Tokenizer();
      const text = tok.decode(getRenderer('qwen3', tok).buildGenerationPrompt(conversations[2]!));
      assert.ok(!text.includes('Four plus five'));
      assert.ok(text.includes('<|im_start|>assistant\n9<|im_end|>'));
    });

    it('tokenises each piece on its own (cookbook), unlike the template, when content starts with a newline', () => {
      const tok = qwen3Tokenizer();
      const conv = [user('\nHi')];
      const ids = getRenderer('qwen3', tok).buildGenerationPrompt(conv);
      // <|im_start|> "user" "\n" | "\n" "Hi" <|im_end|> | "\n" <|im_start|> "assistant" "\n"
      assert.deepStrictEqual(ids, [151644, 872, 198, 198, 13048, 151645, 198, 151644, 77091, 198]);
      assert.deepStrictEqual([198, 271].map((id) => tok.decode([id])), ['\n', '\n\n']);
      // the template's single string joins the two newlines into one token
      assert.deepStrictEqual(applyChatTemplate(tok, conv, { add_generation_prompt: true }).slice(0, 4), [151644, 872, 271, 13048]);
    });

    it('keeps special-token text typed in content as text (split_special_tokens)', () => {
      const tok = qwen3Tokenizer();
      const ids = getRenderer('qwen3', tok).buildGenerationPrompt([user('say <|im_end|> now')]);
      assert.strictEqual(ids.filter((id) => id === 151645).length, 1, 'only the real end of the user turn');
    });

    it('stops on <|im_end|> and parses responses: think blocks split, empty blocks dropped, unclosed blocks left as text', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('qwen3', tok);
      assert.deepStrictEqual(r.stopSequences(), { kind: 'tokens', tokens: [151645] });
      const sampled = (text: string, end: number[] = [151645]) => [...tok.encode(text), ...end];

      assert.deepStrictEqual(r.parseResponse(sampled('<think>\nFour plus five.\n</think>\n\n9')), {
        message: { role: 'assistant', content: '9', thinking: 'Four plus five.' },
        termination: 'stop_sequence',
      });
      assert.deepStrictEqual(r.parseResponse(sampled('<think>\n\n</think>\n\n9')), { message: { role: 'assistant', content: '9' }, termination: 'stop_sequence' });
      assert.deepStrictEqual(r.parseResponse(sampled('<think>\nstill thinking')), {
        message: { role: 'assistant', content: '<think>\nstill thinking' },
        termination: 'stop_sequence',
      });
      assert.deepStrictEqual(r.parseResponse(sampled('just 9')), { message: { role: 'assistant', content: 'just 9' }, termination: 'stop_sequence' });
    });

    it('a response without <|im_end|> is malformed (cut off or ended on EOS), with the whole text; two stop tokens are an error', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('qwen3', tok);
      assert.deepStrictEqual(r.parseResponse(tok.encode('<think>\nhmm\n</think>\n\n9')), {
        message: { role: 'assistant', content: '<think>\nhmm\n</think>\n\n9' },
        termination: 'malformed',
      });
      assert.strictEqual(r.parseResponse([...tok.encode('9'), 151643]).termination, 'malformed');
      assert.throws(() => r.parseResponse([...tok.encode('9'), 151645, ...tok.encode('x'), 151645]), (e: unknown) => e instanceof RendererError && /wrong stop tokens/.test(e.message));
    });

    it('a parsed response renders back to the tokens that were sampled', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('qwen3', tok);
      const prompt = r.buildGenerationPrompt([user('What is 4 + 5?')]);
      const sampledIds = [...tok.encode('<think>\nFour plus five.\n</think>\n\n9'), 151645];
      const { message } = r.parseResponse(sampledIds);
      const ex = r.buildSupervisedExample([user('What is 4 + 5?'), message]);
      assert.deepStrictEqual(ex.tokens, [...prompt, ...sampledIds]);
    });
  });

  describe('llama3', () => {
    it("builds the generation prompt the Llama 3 chat template builds (BOS, headers, <|eot_id|>)", () => {
      const tok = llama3Tokenizer();
      const r = getRenderer('llama3', tok);
      for (const conv of [[user('Hi')], [system('Be brief.'), user('What is 4 + 5?'), assistant('9'), user('And 17 + 25?')]]) {
        const ids = r.buildGenerationPrompt(conv);
        assert.deepStrictEqual(ids, applyChatTemplate(tok, conv, { add_generation_prompt: true }), show(tok, ids));
      }
      assert.deepStrictEqual(r.buildGenerationPrompt([user('Hi')]), [128000, 128006, 882, 128007, 271, 13347, 128009, 128006, 78191, 128007, 271]);
    });

    it('keeps content as given where the template trims it (cookbook)', () => {
      const tok = llama3Tokenizer();
      const ids = getRenderer('llama3', tok).buildGenerationPrompt([user(' Hi \n')]);
      // <|begin_of_text|> <|start_header_id|> "user" <|end_header_id|> "\n\n" " Hi" " \n" <|eot_id|> …
      assert.deepStrictEqual(ids, [128000, 128006, 882, 128007, 271, 21694, 720, 128009, 128006, 78191, 128007, 271]);
      assert.notDeepStrictEqual(ids, applyChatTemplate(tok, [user(' Hi \n')], { add_generation_prompt: true }));
    });

    it('trains on the answer and <|eot_id|> only', () => {
      const tok = llama3Tokenizer();
      const r = getRenderer('llama3', tok);
      const conv = [user('What is 4 + 5?'), assistant('9')];
      const ex = r.buildSupervisedExample(conv);
      assert.deepStrictEqual(ex.tokens, [...r.buildGenerationPrompt([user('What is 4 + 5?')]), 24, 128009]);
      assert.deepStrictEqual(ex.weights.slice(-3), [0, 1, 1]);
      assert.strictEqual(ex.weights.reduce((a, b) => a + b, 0), 2);
    });

    it('stops on <|eot_id|> and parses with the shared stop-token rule', () => {
      const tok = llama3Tokenizer();
      const r = getRenderer('llama3', tok);
      assert.deepStrictEqual(r.stopSequences(), { kind: 'tokens', tokens: [128009] });
      assert.deepStrictEqual(r.parseResponse([24, 128009]), { message: { role: 'assistant', content: '9' }, termination: 'stop_sequence' });
      assert.deepStrictEqual(r.parseResponse([24, 128001]), { message: { role: 'assistant', content: '9<|end_of_text|>' }, termination: 'malformed' });
      assert.throws(() => r.parseResponse([24, 128009, 24, 128009]), RendererError);
    });
  });

  describe('role_colon', () => {
    const example = [user('What is 4 + 5?'), assistant('9'), user('What is 17 + 25?')];

    it('renders the §7.2 example with the Qwen3 tokenizer: no BOS, pieces tokenised separately, ends at "Assistant:"', () => {
      const tok = qwen3Tokenizer();
      const ids = getRenderer('role_colon', tok).buildGenerationPrompt(example);
      // "User" ":" | " What" " is" " " "4" " +" " " "5" "?\n\n" | "Assistant" ":" | " " "9" "\n\n" | "User" ":" | … | "Assistant" ":"
      assert.deepStrictEqual(ids, [1474, 25, 3555, 374, 220, 19, 488, 220, 20, 1939, 71703, 25, 220, 24, 271, 1474, 25, 3555, 374, 220, 16, 22, 488, 220, 17, 20, 1939, 71703, 25]);
      assert.strictEqual(tok.decode(ids), 'User: What is 4 + 5?\n\nAssistant: 9\n\nUser: What is 17 + 25?\n\nAssistant:');
    });

    it('renders it with the Llama 3 tokenizer: BOS first, Llama groups digits by three', () => {
      const tok = llama3Tokenizer();
      const ids = getRenderer('role_colon', tok).buildGenerationPrompt(example);
      assert.deepStrictEqual(ids, [128000, 1502, 25, 3639, 374, 220, 19, 489, 220, 20, 1980, 72803, 25, 220, 24, 271, 1502, 25, 3639, 374, 220, 1114, 489, 220, 914, 1980, 72803, 25]);
    });

    it('stops on the string "\\n\\nUser:" and trains the answer through the stop sequence', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('role_colon', tok);
      assert.deepStrictEqual(r.stopSequences(), { kind: 'strings', strings: ['\n\nUser:'] });
      const ex = r.buildSupervisedExample([user('What is 4 + 5?'), assistant('9')]);
      assert.deepStrictEqual(ex.tokens.slice(-5), [220, 24, 271, 1474, 25]);
      assert.strictEqual(trainedText(r, [user('What is 4 + 5?'), assistant('9')]), ' 9\n\nUser:');
    });

    it('parses: stop sequence, EOS, cut off, EOS after the stop sequence, two stop sequences', () => {
      const tok = qwen3Tokenizer();
      const r = getRenderer('role_colon', tok);
      const eos = tok.eosTokenId!;
      const cases: [number[], string, string][] = [
        [tok.encode(' 42\n\nUser:'), '42', 'stop_sequence'],
        [[...tok.encode(' 42'), eos], '42', 'eos'],
        [tok.encode(' 42 and'), '42 and', 'malformed'],
        [[...tok.encode(' 42\n\nUser:'), eos], '42', 'malformed'],
        [tok.encode(' 42\n\nUser: hi\n\nUser:'), '42', 'malformed'],
      ];
      for (const [ids, content, termination] of cases) {
        assert.deepStrictEqual(r.parseResponse(ids), { message: { role: 'assistant', content }, termination }, tok.decode(ids));
      }
    });
  });

  describe('chatml (the embedded engine)', () => {
    const tok = new ByteTokenizer();
    const r = getRenderer('chatml', tok);

    it('builds the prompt the engine was pretrained on', () => {
      assert.deepStrictEqual(r.buildGenerationPrompt([user('What is 47 + 85?')]), encodeChat('<|im_start|>user\nWhat is 47 + 85?<|im_end|>\n<|im_start|>assistant\n'));
      assert.strictEqual(
        tok.decode(r.buildGenerationPrompt([system('Add.'), user('1 + 2?'), assistant('3'), user('2 + 2?')])),
        '<|im_start|>system\nAdd.<|im_end|>\n<|im_start|>user\n1 + 2?<|im_end|>\n<|im_start|>assistant\n3<|im_end|>\n<|im_start|>user\n2 + 2?<|im_end|>\n<|im_start|>assistant\n',
      );
    });

    it('trains on the answer and <|im_end|> only, as pretraining did', () => {
      const ex = r.buildSupervisedExample([user('What is 47 + 85?'), assistant('132')]);
      assert.deepStrictEqual(ex.tokens, encodeChat('<|im_start|>user\nWhat is 47 + 85?<|im_end|>\n<|im_start|>assistant\n132<|im_end|>'));
      assert.strictEqual(trainedText(r, [user('What is 47 + 85?'), assistant('132')]), '132<|im_end|>');
    });

    it('stops on <|im_end|>; parses a round trip, a cut-off response and the wrong stop tokens', () => {
      assert.deepStrictEqual(r.stopSequences(), { kind: 'tokens', tokens: [258] });
      assert.deepStrictEqual(r.parseResponse(encodeChat('132<|im_end|>')), { message: { role: 'assistant', content: '132' }, termination: 'stop_sequence' });
      assert.deepStrictEqual(r.parseResponse(encodeChat('13')), { message: { role: 'assistant', content: '13' }, termination: 'malformed' });
      assert.throws(() => r.parseResponse(encodeChat('1<|im_end|>2<|im_end|>')), RendererError);
    });

    it('keeps special-token text typed in content as bytes', () => {
      const ids = r.buildGenerationPrompt([user('<|im_end|>')]);
      assert.strictEqual(ids.filter((id) => id === 258).length, 1);
    });
  });
});
