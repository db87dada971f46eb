// tinker-studio/arith-chat, the engine's 256-position chat model: it loads from its shipped weights
// file, its gradients are right over a 256-position sequence (finite differences on a tiny model of
// the same context), and sampling past position 64 — where arith-gpt ends — gives the trainer's
// log-probs from the KV cache.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineDatum } from '../../../src/engine/contract';
import { LocalBackend, createComputeBackend } from '../../../src/engine/model';
import { Gpt } from '../../../src/engine/model/gpt';
import { GptConfig, Params, Rng, initBase, mergeLora } from '../../../src/engine/model/gptWeights';
import { applyRope } from '../../../src/engine/model/rope';
import { KvModel } from '../../../src/engine/model/sampler';
import { ARITH_CHAT_MODEL, ARITH_MODEL, CHAT_GPT, CHAT_WEIGHTS_FILE, findWeightsFile } from '../../../src/engine/model/models';
import { ByteTokenizer } from '../../../src/core/render/byteTokenizer';
import { getRenderer } from '../../../src/core/render/registry';
import { ARITH_PHRASES, CALCULATOR_TOOL } from '../../../src/core/data/arithChat';
import { allocF32, computeInfo, initCompute } from '../../../src/engine/compute';

for (const rope of [false, true]) describe(`arith-chat: gradients over 256 positions (finite differences, float64), ${rope ? 'rotary' : 'learned'} positions`, () => {
  // tiny width, the real context: one sequence fills all 256 positions, a second one shares the batch
  const cfg: GptConfig = { vocabSize: 11, ctx: 256, d: 8, nLayer: 2, nHead: 2, ffn: 12, rope };
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

  if (!rope)
    it('position embeddings past 64, up to the last position', () => {
      // rows 64, 130, 200 and 255 (only the long sequence reaches them), row 10 (both sequences)
      check('pos', [64 * cfg.d + 1, 130 * cfg.d + 3, 200 * cfg.d + 5, 255 * cfg.d + 7, 10 * cfg.d]);
    });
  else
    it('no position weights: the rotations carry the positions', () => {
      assert.ok(!base.has('pos'));
      assert.ok(!grads.has('pos'));
      // the queries and keys of the long sequence's last positions get gradients through the rotation
      check('h1.wq', [5, 17, 40]);
      check('h1.wk', [3, 21, 60]);
    });
  for (const name of ['tok', 'h0.wq', 'h0.wk', 'h0.wv', 'h1.wo', 'h1.w1', 'h1.w2', 'h0.ln1.g', 'lnf.b']) {
    it(`∂L/∂${name}`, () => {
      const n = base.get(name)!.length;
      check(name, [0, 1, 2, 3].map((k) => Math.floor(((k * 7919 + 13) % 1000) / 1000 * n)));
    });
  }
});

for (const rope of [false, true]) describe(`attention over more than 64 positions: the float32 GEMM path agrees with float64, ${rope ? 'rotary' : 'learned'} positions`, function () {
  this.timeout(60_000);
  // sequences attending to more than 64 positions run their attention as WASM GEMMs in the compute
  // tasks (float32); shorter ones, and float64 arrays, as dot products: both must give the same model
  const cfg: GptConfig = { vocabSize: 11, ctx: 256, d: 16, nLayer: 2, nHead: 2, ffn: 24, rope };
  const rng = new Rng(29);
  const base64 = initBase(cfg, 4, (n) => new Float64Array(n));
  for (const [k, v] of base64) for (let i = 0; i < v.length; i++) v[i] = k.endsWith('.g') ? 1 + rng.normal() * 0.1 : k.endsWith('.b') ? rng.normal() * 0.1 : rng.normal() * 0.3;
  const base32: Params = new Map([...base64].map(([k, v]) => [k, Float32Array.from(v)]));
  // a 150-token root, a 70-token continuation of it (attends to 220), a short sequence, a long one
  const lens = [150, 70, 30, 120];
  const parents = [-1, 0, -1, -1];
  const total = lens.reduce((a, b) => a + b, 0);
  const tokens = Int32Array.from({ length: total }, () => Math.floor(rng.next() * cfg.vocabSize));
  const targets = Int32Array.from({ length: total }, () => Math.floor(rng.next() * cfg.vocabSize));
  const coef = Float64Array.from({ length: total }, () => rng.normal());
  const run = (base: Params, alloc: (n: number) => Float32Array | Float64Array) => {
    const gpt = new Gpt(cfg, base, undefined, undefined, alloc);
    const f = gpt.forward(tokens, lens, parents);
    const grads: Params = new Map([...base].map(([k, v]) => [k, alloc(v.length)]));
    gpt.backward(f, targets, alloc(total).map((_, t) => coef[t]!), grads);
    return { lp: Array.from(f.logprobs), grads };
  };
  before(() => initCompute({ threads: 1, log: () => undefined }));

  it('log-probs and every gradient tensor, to float32 rounding', () => {
    assert.strictEqual(computeInfo().kernel, 'wasm-simd', 'the WASM kernel (and so the GEMM path) is in use');
    const ref = run(base64, (n) => new Float64Array(n));
    const got = run(base32, allocF32);
    let worst = 0;
    ref.lp.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - got.lp[i]!))));
    assert.ok(worst < 1e-4, `log-probs differ by up to ${worst}`);
    for (const [k, g] of ref.grads) {
      const h = got.grads.get(k)!;
      let num = 0;
      let den = 0;
      g.forEach((v, i) => {
        num += (v - h[i]!) ** 2;
        den += v * v;
      });
      assert.ok(den > 0, `${k} carries a gradient`);
      assert.ok(Math.sqrt(num / den) < 1e-4, `${k}: relative error ${Math.sqrt(num / den)}`);
    }
  });
});

describe('rotary positions (RoPE)', () => {
  const d = 16;
  const nHead = 2;
  const rng = new Rng(41);
  const row = () => Float64Array.from({ length: d }, () => rng.normal());
  const rot = (x: Float64Array, m: number, inverse = false) => {
    const y = Float64Array.from(x);
    applyRope(y, Int32Array.of(m), d, nHead, 256, inverse);
    return y;
  };
  const headDot = (a: Float64Array, b: Float64Array, h: number) => {
    let s = 0;
    for (let e = 0; e < d / nHead; e++) s += a[h * (d / nHead) + e]! * b[h * (d / nHead) + e]!;
    return s;
  };

  it('a query-key score depends on how far apart they are, not where', () => {
    const q = row();
    const k = row();
    for (const [m, n, shift] of [[7, 3, 100], [200, 0, 55], [64, 64, 191], [30, 29, 1]] as const) {
      for (let h = 0; h < nHead; h++) {
        const a = headDot(rot(q, m), rot(k, n), h);
        const b = headDot(rot(q, m + shift), rot(k, n + shift), h);
        assert.ok(Math.abs(a - b) < 1e-9, `head ${h}, positions ${m}/${n} shifted by ${shift}: ${a} vs ${b}`);
      }
    }
    // and it does depend on the distance
    assert.ok(Math.abs(headDot(rot(q, 10), rot(k, 3), 0) - headDot(rot(q, 10), rot(k, 4), 0)) > 1e-6);
  });

  it('the inverse rotation undoes it; position 0 is the identity', () => {
    const x = row();
    const back = rot(rot(x, 173), 173, true);
    x.forEach((v, i) => assert.ok(Math.abs(v - back[i]!) < 1e-12));
    assert.deepStrictEqual(Array.from(rot(x, 0)), Array.from(x));
    assert.throws(() => rot(x, 256), /position 256 is outside the context of 256/);
  });

  it('the KV-cache sampler gives the trainer\'s log-probs, past position 64', () => {
    const cfg: GptConfig = { vocabSize: 11, ctx: 256, d: 16, nLayer: 2, nHead: 2, ffn: 24, rope: true };
    const base = initBase(cfg, 5, (n) => new Float32Array(n));
    for (const [k, v] of base) if (!k.endsWith('.g') && !k.endsWith('.b')) for (let i = 0; i < v.length; i++) v[i] = rng.normal() * 0.3;
    const L = 200;
    const tokens = Int32Array.from({ length: L }, () => Math.floor(rng.next() * cfg.vocabSize));
    const train = new Gpt(cfg, base, undefined, undefined, (n) => new Float32Array(n)).forward(tokens, [L]).logprobs;
    const kv = new KvModel(cfg, mergeLora(cfg, base, undefined, undefined));
    const cache = { k: Array.from({ length: cfg.nLayer }, () => new Float32Array(cfg.ctx * cfg.d)), v: Array.from({ length: cfg.nLayer }, () => new Float32Array(cfg.ctx * cfg.d)) };
    // the first 90 tokens as one prompt, then one token at a time: every row where it belongs
    const first = kv.step(tokens.subarray(0, 90), [90], [0], [cache], 'all');
    let worst = 0;
    for (let i = 0; i < 90 * cfg.vocabSize; i++) worst = Math.max(worst, Math.abs(first[i]! - train[i]!));
    for (let t = 90; t < L; t++) {
      const lp = kv.step(tokens.subarray(t, t + 1), [1], [t], [cache], 'last');
      for (let j = 0; j < cfg.vocabSize; j++) worst = Math.max(worst, Math.abs(lp[j]! - train[t * cfg.vocabSize + j]!));
    }
    assert.ok(worst < 1e-4, `sampler and trainer differ by up to ${worst}`);
  });
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
