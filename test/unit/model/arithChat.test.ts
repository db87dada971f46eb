// tinker-studio/arith-chat, the engine's 256-position chat model: it loads from its shipped weights
// file, its gradients are right over a 256-position sequence (finite differences on a tiny model of
// the same context), and sampling past position 64 — where arith-gpt ends — gives the trainer's
// log-probs from the KV cache.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineDatum } from '../../../src/engine/contract';
import { LocalBackend, createComputeBackend } from '../../../src/engine/model';
import { Gpt, GptConfig, Params, Rng, initBase } from '../../../src/engine/model/gpt';
import { ARITH_CHAT_MODEL, ARITH_MODEL, CHAT_GPT, CHAT_WEIGHTS_FILE, findWeightsFile } from '../../../src/engine/model/models';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { ARITH_PHRASES, CALCULATOR_TOOL } from '../../../src/core/data/arithChat';

describe('arith-chat: gradients over 256 positions (finite differences, float64)', () => {
  // tiny width, the real context: one sequence fills all 256 positions, a second one shares the batch
  const cfg: GptConfig = { vocabSize: 11, ctx: 256, d: 8, nLayer: 2, nHead: 2, ffn: 12 };
  const f64 = (n: number) => new Float64Array(n);
  const base = initBase(cfg, 3, f64);
  const rng = new Rng(17);
  for (const [k, v] of base) for (let i = 0; i < v.length; i++) v[i] = k.endsWith('.g') ? 1 + rng.normal() * 0.1 : k.endsWith('.b') ? rng.normal() * 0.1 : rng.normal() * 0.3;
  const gpt = new Gpt(cfg, base, undefined, undefined, f64);
  const lens = [256, 37];
  const total = lens[0]! + lens[1]!;
  const tokens = Int32Array.from({ length: total }, () => Math.floor(rng.next() * cfg.vocabSize));
  const targets = Int32Array.from({ length: total }, () => Math.floor(rng.next() * cfg.vocabSize));
  // the objective weighs the late positions of the long sequence most, so their paths carry gradient
  const coef = Float64Array.from({ length: total }, (_, t) => rng.normal() * (t >= 64 && t < 256 ? 3 : 1));
  const objective = () => {
    const f = gpt.forward(tokens, lens);
    let L = 0;
    for (let t = 0; t < total; t++) L += coef[t]! * f.logprobs[t * cfg.vocabSize + targets[t]!]!;
    return L;
  };
  const grads: Params = new Map([...base].map(([k, v]) => [k, new Float64Array(v.length)]));
  before(() => gpt.backward(gpt.forward(tokens, lens), targets, coef, grads));

  const check = (name: string, indices: number[]) => {
    const p = base.get(name)!;
    const g = grads.get(name)!;
    for (const i of indices) {
      const old = p[i]!;
      const eps = 1e-5;
      p[i] = old + eps;
      const up = objective();
      p[i] = old - eps;
      const down = objective();
      p[i] = old;
      const numeric = (up - down) / (2 * eps);
      assert.ok(Math.abs(numeric) > 1e-9, `${name}[${i}] carries a gradient`);
      const err = Math.abs(numeric - g[i]!) / (Math.abs(numeric) + Math.abs(g[i]!));
      assert.ok(err < 1e-5, `${name}[${i}]: analytic ${g[i]} vs numeric ${numeric}`);
    }
  };

  it('position embeddings past 64, up to the last position', () => {
    // rows 64, 130, 200 and 255 (only the long sequence reaches them), row 10 (both sequences)
    check('pos', [64 * cfg.d + 1, 130 * cfg.d + 3, 200 * cfg.d + 5, 255 * cfg.d + 7, 10 * cfg.d]);
  });
  for (const name of ['tok', 'h0.wq', 'h0.wk', 'h0.wv', 'h1.wo', 'h1.w1', 'h1.w2', 'h0.ln1.g', 'lnf.b']) {
    it(`∂L/∂${name}`, () => {
      const n = base.get(name)!.length;
      check(name, [0, 1, 2, 3].map((k) => Math.floor(((k * 7919 + 13) % 1000) / 1000 * n)));
    });
  }
});

describe('arith-chat: the shipped model', function () {
  this.timeout(120_000);
  let b: LocalBackend;
  before(async () => {
    b = (await createComputeBackend({})) as LocalBackend;
  });
  after(async () => b.close());

  it('loads from its weights file (at most 8 MB) next to arith-gpt, with 256 positions', () => {
    const file = findWeightsFile(undefined, CHAT_WEIGHTS_FILE);
    assert.ok(file, `${CHAT_WEIGHTS_FILE} is found`);
    assert.ok(fs.statSync(file).size <= 8e6, `${path.basename(file)}: ${fs.statSync(file).size} bytes`);
    const models = new Map(b.listBaseModels().map((m) => [m.name, m]));
    const chat = models.get(ARITH_CHAT_MODEL);
    assert.ok(chat, `served: ${[...models.keys()].join(', ')}`);
    assert.strictEqual(chat.maxContextLength, CHAT_GPT.ctx);
    assert.ok(CHAT_GPT.ctx >= 256);
    assert.strictEqual(chat.renderer, 'chatml');
    assert.match(chat.provenance, /pretrain-arith-chat\.mjs/);
    assert.strictEqual(models.get(ARITH_MODEL)?.maxContextLength, 64, 'arith-gpt is unchanged');
  });

  it('samples past position 64 with the trainer\'s log-probs', async () => {
    const chatml = getRenderer('chatml', new ByteTokenizer());
    const messages = [
      ...chatml.createConversationPrefixWithTools([CALCULATOR_TOOL]),
      { role: 'user' as const, content: ARITH_PHRASES.question(12, 30) },
      { role: 'assistant' as const, content: '42' },
      { role: 'user' as const, content: ARITH_PHRASES.followUp(17) },
    ];
    const prompt = Int32Array.from(chatml.buildGenerationPrompt(messages));
    assert.ok(prompt.length > 64 && prompt.length < 120, `${prompt.length}-token prompt`);
    await b.createSampler('chat', { baseModel: ARITH_CHAT_MODEL });
    await b.createTrainingModel('chat-t', ARITH_CHAT_MODEL, { rank: 1, seed: 1, trainAttn: true, trainMlp: false, trainUnembed: false });
    const r = await b.sample('chat', { prompt, numSamples: 3, params: { maxTokens: 120, temperature: 1, topP: 1, topK: -1, stopStrings: [], stopTokens: [], seed: 3 }, promptLogprobs: false, topkPromptLogprobs: 0 });
    let past = 0;
    for (const seq of r.sequences) {
      const full = [...prompt, ...seq.tokens];
      past = Math.max(past, full.length);
      const td: EngineDatum = {
        tokens: Int32Array.from(full.slice(0, -1)),
        lossFnInputs: {
          target_tokens: { dtype: 'int64', data: Float64Array.from(full.slice(1)), shape: [full.length - 1] },
          weights: { dtype: 'float32', data: new Float32Array(full.length - 1), shape: [full.length - 1] },
        },
      };
      // a fresh LoRA adapter is a no-op (B = 0): the trainer's log-probs are the base model's
      const out = await b.forwardBackward('chat-t', [td], 'cross_entropy', {}, true);
      const train = out.outputs[0]!.logprobs!.data.slice(prompt.length - 1);
      seq.logprobs.forEach((lp, i) => assert.ok(Math.abs(lp - train[i]!) < 1e-3, `position ${prompt.length + i}: sampler ${lp} vs trainer ${train[i]}`));
    }
    assert.ok(past > 64 + 40, `sampled up to position ${past}`);
  });
});
