import * as assert from 'assert';
import { ModelConfigurationError } from '../../../src/core/render/errors';
import { getLr, LLAMA3_TOKENIZER_REPO, modelInfo, recommendedRenderer, tokenizerSource } from '../../../src/core/render/modelInfo';

/** Equal to the 5 significant digits the reference quotes. */
function assertLr(actual: number, expected: number, what: string) {
  assert.ok(Math.abs(actual - expected) / expected < 1e-4, `${what}: ${actual} ≠ ${expected}`);
}

describe('model info', () => {
  it('recommends the first renderer of the §7.6 table', () => {
    const cases: [string, string][] = [
      ['meta-llama/Llama-3.1-8B-Instruct', 'llama3'],
      ['meta-llama/Llama-3.2-1B', 'role_colon'],
      ['Qwen/Qwen3-8B', 'qwen3'],
      ['Qwen/Qwen3-8B-Base', 'role_colon'],
      ['Qwen/Qwen3.5-9B-Base', 'role_colon'],
      ['Qwen/Qwen3.5-9B', 'qwen3_5'],
      ['Qwen/Qwen3-4B-Instruct-2507', 'qwen3_instruct'],
      ['deepseek-ai/DeepSeek-V3.1', 'deepseekv3'],
      ['openai/gpt-oss-20b', 'gpt_oss_no_sysprompt'],
      ['thinkingmachines/Inkling-Small', 'tml_v0'],
      ['tinker-studio/arith-gpt', 'chatml'],
      ['tinker-studio/random-gpt', 'chatml'],
    ];
    for (const [model, renderer] of cases) assert.strictEqual(recommendedRenderer(model), renderer, model);
    assert.deepStrictEqual(modelInfo('Qwen/Qwen3-32B').renderers, ['qwen3', 'qwen3_disable_thinking']);
    assert.strictEqual(modelInfo('Qwen/Qwen3-8B-Base').chat, false);
  });

  it('ignores a :suffix and requires org/model; unknown organisations and models are named', () => {
    assert.strictEqual(recommendedRenderer('Qwen/Qwen3-8B:peft:123'), 'qwen3');
    const rejects = (model: string, re: RegExp) => assert.throws(() => modelInfo(model), (e: unknown) => e instanceof ModelConfigurationError && re.test(e.message), model);
    rejects('Qwen3-8B', /not of the form org\/model/);
    rejects('acme/Model-1', /unknown model organisation "acme".*known: meta-llama, Qwen/);
    rejects('Qwen/Qwen9-1B', /unknown model "Qwen9-1B" of Qwen; known: .*Qwen3-8B/);
  });

  it("takes each model's tokenizer from its own repo, Llama 3 from the SDK's ungated mirror, the engine's from bytes", () => {
    assert.deepStrictEqual(tokenizerSource('Qwen/Qwen3-8B-Base'), { kind: 'hf', repo: 'Qwen/Qwen3-8B-Base' });
    assert.deepStrictEqual(tokenizerSource('Qwen/Qwen3-8B:suffix'), { kind: 'hf', repo: 'Qwen/Qwen3-8B' });
    assert.deepStrictEqual(tokenizerSource('meta-llama/Llama-3.2-1B'), { kind: 'hf', repo: LLAMA3_TOKENIZER_REPO });
    assert.deepStrictEqual(tokenizerSource('tinker-studio/arith-gpt'), { kind: 'byte' });
    assert.deepStrictEqual(tokenizerSource('my/finetune', 'Qwen/Qwen3-8B:x'), { kind: 'hf', repo: 'Qwen/Qwen3-8B' });
  });

  describe('getLr (§6.1)', () => {
    it("reproduces the reference's LoRA examples", () => {
      const cases: [string, number][] = [
        ['Qwen/Qwen3-8B', 4.7298e-4],
        ['Qwen/Qwen3.5-9B', 4.7298e-4],
        ['Qwen/Qwen3-30B-A3B', 4.9908e-4],
        ['Qwen/Qwen3-32B', 4.6487e-4],
        ['meta-llama/Llama-3.1-8B', 2.8564e-4],
        ['meta-llama/Llama-3.2-1B', 4.9082e-4],
        ['meta-llama/Llama-3.1-70B', 1.6623e-4],
      ];
      for (const [model, lr] of cases) assertLr(getLr(model), lr, model);
    });

    it('is ten times smaller for full fine-tuning and independent of anything else', () => {
      assertLr(getLr('Qwen/Qwen3-8B', false), 4.7298e-5, 'full fine-tuning');
      assert.strictEqual(getLr('Qwen/Qwen3-8B-Base'), getLr('Qwen/Qwen3-8B'));
    });

    it('gives the engine models 3e-3 for LoRA (not in the cookbook)', () => {
      assert.strictEqual(getLr('tinker-studio/arith-gpt'), 3e-3);
      assertLr(getLr('tinker-studio/random-gpt', false), 3e-4, 'full');
    });

    it('refuses uncalibrated and unknown models with a message saying to set the rate', () => {
      for (const m of ['deepseek-ai/DeepSeek-V3.1-Base', 'openai/gpt-oss-120b', 'moonshotai/Kimi-K2.6', 'thinkingmachines/Inkling', 'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16']) {
        assert.throws(() => getLr(m), /not yet calibrated.*set the learning rate explicitly/, m);
      }
      assert.throws(() => getLr('moonshotai/Kimi-K2.5'), /no learning-rate formula/);
      assert.throws(() => getLr('Qwen/Qwen7-1B'), /hidden size of Qwen\/Qwen7-1B is not known/);
    });
  });
});
