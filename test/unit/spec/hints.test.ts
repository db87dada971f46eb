// Spec hints from tinker-cookbook's hyperparameter utilities: a learning rate more than 4× from the
// model's recommended one (get_lr, Llama and Qwen families only), and for SFT with LoRA the adapter's
// parameters against the dataset's completion tokens (known dimensions only). Info level, positioned
// at the value, in run specs and at each swept learning rate of a sweep file.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MODELS } from '../../../src/core/render/modelInfo';
import { completionTokens, learningRateHint, loraCapacityHint, loraParamCount, recommendedLr, specHintDiagnostics, specHints } from '../../../src/core/kinds/hints';
import { sweepDiagnostics } from '../../../src/core/experiments/sweepDiagnostics';
import { getLr } from '../../../src/core/render/modelInfo';
import { registerKind } from '../../../src/core/kinds/registry';
import { TOY_KIND } from '../kinds/toyKind';

const sftExample = path.resolve(__dirname, '../../../../examples/sft-arithmetic');

describe('spec hints', () => {
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spec-hints-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe('learning rate (get_lr)', () => {
    it('known families (Llama, Qwen) have a recommendation; others, and the engine\'s models, none', () => {
      assert.strictEqual(recommendedLr('Qwen/Qwen3-8B'), getLr('Qwen/Qwen3-8B'));
      assert.ok(recommendedLr('meta-llama/Llama-3.1-8B')! > 0);
      for (const m of ['tinker-studio/arith-gpt', 'openai/gpt-oss-20b', 'deepseek-ai/DeepSeek-V3.1', 'someone/unknown-7b', 'Qwen/Qwen9-unknown']) assert.strictEqual(recommendedLr(m), undefined, m);
    });

    it('within 4× either way: no hint; beyond: a hint that says which way and by how much', () => {
      const rec = getLr('Qwen/Qwen3-8B');
      assert.strictEqual(learningRateHint('Qwen/Qwen3-8B', rec), undefined);
      assert.strictEqual(learningRateHint('Qwen/Qwen3-8B', rec * 4), undefined, 'exactly 4× is not flagged');
      assert.strictEqual(learningRateHint('Qwen/Qwen3-8B', rec / 4), undefined);
      assert.match(learningRateHint('Qwen/Qwen3-8B', rec * 4.5)!, /^learning_rate \S+ is 4\.5× above the recommended \S+ for Qwen\/Qwen3-8B/);
      assert.match(learningRateHint('Qwen/Qwen3-8B:peft', rec / 10)!, /is 10× below the recommended/);
      assert.strictEqual(learningRateHint('tinker-studio/arith-gpt', 1), undefined, "the engine's models: no recommendation, no hint");
      assert.match(learningRateHint('openai/gpt-oss-20b', 1e-4)!, /no recommended learning rate for openai\/gpt-oss-20b: tinker-cookbook's get_lr covers only Llama and Qwen models/);
      assert.match(learningRateHint('deepseek-ai/DeepSeek-V3.1', 1e-4)!, /covers only Llama and Qwen/);
    });
  });

  describe('LoRA capacity', () => {
    it("counts the adapter as the cookbook's get_lora_param_count does: Tinker's measured table for the lineup, the dense formula for the engine", () => {
      // the cookbook's table (hyperparam_utils.py v0.5.5), per unit of rank: mlp + attn + unembed
      assert.strictEqual(loraParamCount('meta-llama/Llama-3.2-1B', 32), 32 * (491_520 + 212_992 + 130_304));
      // the dense formula agrees with the table's attention and MLP for a dense model
      const perLayerAttn = 2048 + 2048 + 2 * (2048 + 512) + (2048 + 2048);
      assert.strictEqual(16 * perLayerAttn, 212_992);
      assert.strictEqual(loraParamCount('Qwen/Qwen3-30B-A3B', 8), 8 * (14_450_688 + 835_584 + 153_984), 'mixture of experts: the measured count');
      assert.strictEqual(loraParamCount('moonshotai/Kimi-K2.6:peft', 1), 144_583_680 + 1_940_288 + 171_008);
      // the engine's GPT: 3 blocks of 4 d×d attention linears and d↔ffn MLP, plus the unembedding d→259
      assert.strictEqual(loraParamCount('tinker-studio/arith-gpt', 8), 8 * (3 * (4 * 256 + 2 * 640) + 128 + 259));
      assert.strictEqual(loraParamCount('someone/x', 8), undefined);
      assert.strictEqual(loraParamCount('thinkingmachines/Inkling-Small', 8), undefined, 'not in the table: unknown');
    });

    it('covers every model of the lineup but Inkling-Small', () => {
      const missing = MODELS.filter((m) => loraParamCount(m.name, 1) === undefined).map((m) => m.name);
      assert.deepStrictEqual(missing, []);
    });

    it('hints only when the parameters fall below the tokens, and suggests a rank that covers them', () => {
      const params = loraParamCount('Qwen/Qwen3-8B', 1)!;
      assert.strictEqual(loraCapacityHint('Qwen/Qwen3-8B', 1, { tokens: params, exact: false, chats: 10 }, 'd.jsonl'), undefined);
      const m = loraCapacityHint('Qwen/Qwen3-8B', 1, { tokens: params * 3, exact: false, chats: 10 }, 'd.jsonl')!;
      assert.match(m, /^lora_rank 1 gives \S+ M trainable LoRA parameters for Qwen\/Qwen3-8B, fewer than the ≈ \S+ M completion tokens of d\.jsonl \(estimated as characters ÷ 4\).*lora_rank 4 would$/);
      assert.strictEqual(loraCapacityHint('someone/x', 1, { tokens: 1e12, exact: false, chats: 1 }, 'd.jsonl'), undefined, 'unknown dimensions: no hint');
    });

    it('completion tokens: exact with the engine\'s renderer, estimated (characters ÷ 4) for other models; train_on_what counts', async () => {
      const file = path.join(dir, 'chats.jsonl');
      fs.writeFileSync(file, [JSON.stringify({ prompt: 'hi', completion: 'abcdefgh' }), '', 'not json', JSON.stringify({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'abcd' }, { role: 'user', content: 'q2' }, { role: 'assistant', content: 'efghijkl' }] })].join('\n'));
      const fields = { messagesField: 'messages', promptField: 'prompt', completionField: 'completion' };
      const last = await completionTokens({ file, model: 'Qwen/Qwen3-8B', trainOnWhat: 'last_assistant_message', fields });
      assert.deepStrictEqual(last, { tokens: 4, exact: false, chats: 2 }, '(8 + 8 characters) ÷ 4');
      const all = await completionTokens({ file, model: 'Qwen/Qwen3-8B', trainOnWhat: 'all_assistant_messages', fields });
      assert.strictEqual(all!.tokens, 5);
      const bytes = await completionTokens({ file, model: 'tinker-studio/arith-gpt', trainOnWhat: 'last_assistant_message', fields });
      assert.strictEqual(bytes!.exact, true);
      // the byte renderer trains each answer's bytes and its end-of-turn token
      assert.ok(bytes!.tokens >= 16 && bytes!.tokens <= 20, String(bytes!.tokens));
      assert.strictEqual(await completionTokens({ file: path.join(dir, 'missing.jsonl'), model: 'Qwen/Qwen3-8B', trainOnWhat: 'last_assistant_message', fields }), undefined);
      // kept per file version: an edited dataset is counted again
      fs.appendFileSync(file, `\n${JSON.stringify({ prompt: 'x', completion: 'y'.repeat(40) })}\n`);
      assert.deepStrictEqual(await completionTokens({ file, model: 'Qwen/Qwen3-8B', trainOnWhat: 'last_assistant_message', fields }), { tokens: 14, exact: false, chats: 3 });
    });

    it('an SFT spec whose rank is too small for its chats gets the hint at lora_rank; the example does not', async () => {
      const chats = Array.from({ length: 400 }, (_, i) => JSON.stringify({ prompt: `q${i}`, completion: 'x'.repeat(40) })).join('\n');
      fs.writeFileSync(path.join(dir, 'many.jsonl'), chats);
      const spec = { model: 'tinker-studio/arith-gpt', lora_rank: 1, dataset: { path: 'many.jsonl' } };
      const hints = await specHints('sft', spec, path.join(dir, 'a.sft.json'));
      assert.strictEqual(hints.length, 1);
      assert.deepStrictEqual(hints[0]!.path, ['lora_rank']);
      assert.match(hints[0]!.message, /^lora_rank 1 gives 7299 trainable LoRA parameters for tinker-studio\/arith-gpt, fewer than the 16\.4 k completion tokens of many\.jsonl \(counted with the renderer\)/);
      assert.deepStrictEqual(await specHints('grpo', spec, path.join(dir, 'a.grpo.json')), [], 'GRPO: no capacity hint');
      const example = path.join(sftExample, 'arith.sft.json');
      assert.deepStrictEqual(await specHints('sft', JSON.parse(fs.readFileSync(example, 'utf8')), example), []);
    });
  });

  describe('as diagnostics', () => {
    it('in a spec file: info level, at the learning rate\'s value', async () => {
      const text = '{\n  "model": "Qwen/Qwen3-8B",\n  "learning_rate": 0.05,\n  "dataset": {"path": "x.jsonl"}\n}\n';
      const ds = await specHintDiagnostics('grpo', text, path.join(dir, 'q.grpo.json'));
      assert.strictEqual(ds.length, 1);
      assert.strictEqual(ds[0]!.severity, 'info');
      assert.strictEqual(text.slice(ds[0]!.offset, ds[0]!.offset + ds[0]!.length), '0.05');
      assert.deepStrictEqual([ds[0]!.line, ds[0]!.column], [3, 20]);
      assert.deepStrictEqual(await specHintDiagnostics('grpo', text.replace('0.05', String(getLr('Qwen/Qwen3-8B'))), path.join(dir, 'q.grpo.json')), []);
      assert.deepStrictEqual(await specHintDiagnostics('grpo', '{"model": ', path.join(dir, 'q.grpo.json')), [], 'a text being typed: nothing');
    });

    it('a kind gets the hints its descriptor asks for (specHints): a registered kind without them none, with them the learning rate\'s; DPO none', async () => {
      const spec = { model: 'Qwen/Qwen3-8B', learning_rate: 0.05 };
      const file = path.join(dir, 'q.toy.json');
      let remove = registerKind(TOY_KIND);
      try {
        assert.deepStrictEqual(await specHints('toy', spec, file), []);
      } finally {
        remove();
      }
      remove = registerKind({ ...TOY_KIND, specHints: { learningRate: true } });
      try {
        assert.deepStrictEqual((await specHints('toy', spec, file)).map((h) => h.path), [['learning_rate']]);
      } finally {
        remove();
      }
      assert.deepStrictEqual(await specHints('dpo', spec, path.join(dir, 'q.dpo.json')), []);
      assert.deepStrictEqual((await specHints('grpo', spec, path.join(dir, 'q.grpo.json'))).map((h) => h.path), [['learning_rate']]);
    });

    it('in a sweep file: one hint per swept learning rate that is far off, at that value (once, however many points share it)', async () => {
      fs.copyFileSync(path.join(sftExample, 'chats.jsonl'), path.join(dir, 'chats.jsonl'));
      fs.writeFileSync(path.join(dir, 'q.sft.json'), JSON.stringify({ backend: 'cloud', model: 'Qwen/Qwen3-8B', dataset: { path: 'chats.jsonl' } }));
      const text = 'base: q.sft.json\nmethod: grid\nparameters:\n  learning_rate:\n    values: [0.0002, 0.0005, 0.01]\n  lora_rank: {values: [8, 16]}\nmetric: {name: test/nll, goal: minimize}\n';
      const ds = await sweepDiagnostics(text, path.join(dir, 'q.sweep.yaml'));
      assert.deepStrictEqual(ds.map((d) => [d.severity, text.slice(d.offset, d.offset + d.length)]), [['info', '0.01']]);
      assert.match(ds[0]!.message, /^learning_rate 0\.01 is \S+× above the recommended/);
    });
  });
});
