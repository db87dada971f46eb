// Finite-difference checks of every gradient the model computes, in float64 on a tiny model: each
// layer's weights (embeddings, layer norms, attention, MLP, LoRA adapters on attention, MLP and
// unembedding) and each loss's derivative with respect to the learner's log-probs.
import * as assert from 'assert';
import { Gpt } from '../../../src/engine/model/gpt';
import { GptConfig, LoraSpec, Params, Rng, initBase, initLora } from '../../../src/engine/model/gptWeights';
import { computeLoss } from '../../../src/engine/model/losses';
import { gelu, geluBackward } from '../../../src/engine/model/ops';
import type { LossFn } from '../../../src/engine/contract';

const cfg: GptConfig = { vocabSize: 11, ctx: 8, d: 8, nLayer: 2, nHead: 2, ffn: 12 };
const spec: LoraSpec = { rank: 2, alpha: 4, attn: true, mlp: true, unembed: true };
const f64 = (n: number) => new Float64Array(n);

function setup() {
  const base = initBase(cfg, 3, f64);
  const rng = new Rng(7);
  // larger weights than GPT-2's init so every path carries a visible gradient
  for (const [k, v] of base) if (!k.endsWith('.g') && !k.endsWith('.b')) for (let i = 0; i < v.length; i++) v[i] = rng.normal() * 0.3;
  for (const [k, v] of base) if (k.endsWith('.g') || k.endsWith('.b')) for (let i = 0; i < v.length; i++) v[i] = (k.endsWith('.g') ? 1 : 0) + rng.normal() * 0.1;
  const lora = initLora(cfg, spec, 5, f64);
  for (const [k, v] of lora) if (k.endsWith('.B')) for (let i = 0; i < v.length; i++) v[i] = rng.normal() * 0.3;
  const gpt = new Gpt(cfg, base, lora, spec, f64);
  const tokens = Int32Array.from([1, 4, 2, 9, 3, 10, 0, 5, 7]);
  const lens = [5, 4];
  const targets = Int32Array.from([4, 2, 9, 3, 6, 0, 5, 7, 8]);
  const coef = Float64Array.from(tokens, () => rng.normal());
  return { base, lora, gpt, tokens, lens, targets, coef };
}

/** L = Σ_t coef_t · logprob_t(target_t) */
function objective(s: ReturnType<typeof setup>): number {
  const f = s.gpt.forward(s.tokens, s.lens);
  let L = 0;
  for (let t = 0; t < s.tokens.length; t++) L += s.coef[t]! * f.logprobs[t * cfg.vocabSize + s.targets[t]!]!;
  return L;
}

describe('model gradients (finite differences, float64)', () => {
  const s = setup();
  const grads: Params = new Map();
  for (const [k, v] of s.base) grads.set(k, new Float64Array(v.length));
  for (const [k, v] of s.lora) grads.set(k, new Float64Array(v.length));
  before(() => {
    const f = s.gpt.forward(s.tokens, s.lens);
    s.gpt.backward(f, s.targets, s.coef, grads);
  });

  // every parameter tensor of the model: all layers' base weights and every LoRA adapter
  const names = [...s.base.keys(), ...s.lora.keys()];
  it('covers every tensor of both layers', () => {
    for (const l of [0, 1]) for (const w of ['ln1.g', 'ln1.b', 'wq', 'wk', 'wv', 'wo', 'ln2.g', 'ln2.b', 'w1', 'w2', 'wq.A', 'wq.B', 'w2.A', 'w2.B']) assert.ok(names.includes(`h${l}.${w}`), `h${l}.${w}`);
  });
  for (const name of names) {
    it(`∂L/∂${name}`, () => {
      const p = s.base.get(name) ?? s.lora.get(name)!;
      const g = grads.get(name)!;
      const rng = new Rng(name.length * 31 + 7);
      let checked = 0;
      for (let trial = 0; trial < 12; trial++) {
        const i = Math.floor(rng.next() * p.length);
        const old = p[i]!;
        const eps = 1e-5;
        p[i] = old + eps;
        const up = objective(s);
        p[i] = old - eps;
        const down = objective(s);
        p[i] = old;
        const numeric = (up - down) / (2 * eps);
        const err = Math.abs(numeric - g[i]!) / Math.max(1e-6, Math.abs(numeric) + Math.abs(g[i]!));
        assert.ok(err < 1e-5, `${name}[${i}]: analytic ${g[i]} vs numeric ${numeric}`);
        if (Math.abs(numeric) > 1e-9) checked++;
      }
      assert.ok(checked > 0, `${name}: at least one non-zero gradient was compared`);
    });
  }
});

describe('loss gradients with respect to learner log-probs', () => {
  const n = 6;
  const rng = new Rng(11);
  const lp = Float64Array.from({ length: n }, () => -0.2 - rng.next() * 2);
  const inputs = {
    weights: { dtype: 'float32' as const, data: Float32Array.from({ length: n }, () => rng.next()), shape: [n] },
    logprobs: { dtype: 'float32' as const, data: Float32Array.from(lp, (v) => v + (rng.next() - 0.5) * 0.6), shape: [n] },
    advantages: { dtype: 'float32' as const, data: Float32Array.from({ length: n }, () => rng.normal()), shape: [n] },
  };
  const cases: Array<[LossFn, Record<string, number>]> = [
    ['cross_entropy', {}],
    ['importance_sampling', {}],
    ['ppo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 }],
    ['cispo', { clip_low_threshold: 0.5, clip_high_threshold: 1.5 }],
    ['dro', { beta: 0.1 }],
  ];
  for (const [loss, config] of cases) {
    it(loss, () => {
      const out = computeLoss(loss, { logprobs: lp, inputs, config }, 0);
      for (let t = 0; t < n; t++) {
        const eps = 1e-6;
        const plus = Float64Array.from(lp);
        const minus = Float64Array.from(lp);
        plus[t] += eps;
        minus[t] -= eps;
        let numeric = (computeLoss(loss, { logprobs: plus, inputs, config }, 0).loss - computeLoss(loss, { logprobs: minus, inputs, config }, 0).loss) / (2 * eps);
        if (loss === 'cispo') {
          // the clipped ratio is a stop-gradient weight: d/dℓ of −w·ℓ·A with w held constant
          const ratio = Math.exp(lp[t]! - inputs.logprobs.data[t]!);
          numeric = -Math.min(Math.max(ratio, 0.5), 1.5) * inputs.advantages.data[t]!;
        }
        assert.ok(Math.abs(numeric - out.grad[t]!) < 1e-4 * Math.max(1, Math.abs(numeric)), `${loss} position ${t}: ${out.grad[t]} vs ${numeric}`);
      }
      assert.ok(Math.abs(out.loss - out.elementwise.reduce((a, b) => a + b, 0)) < 1e-4, 'loss is the sum of the elementwise losses');
    });
  }

  it('a missing input or a wrong length is an error naming the datum and the field', () => {
    assert.throws(() => computeLoss('importance_sampling', { logprobs: lp, inputs: { logprobs: inputs.logprobs }, config: {} }, 3), /datum 3: loss_fn_inputs\.advantages is required/);
    assert.throws(
      () => computeLoss('cross_entropy', { logprobs: lp, inputs: { weights: { dtype: 'float32', data: new Float32Array(2), shape: [2] } }, config: {} }, 0),
      /weights has 2 values but the datum has 6 targets/,
    );
  });
});

describe('GELU (tanh approximation)', () => {
  it('matches 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))), including far out in both tails', () => {
    const x = Float64Array.from([1, -1, 0.5, -3, -30, 30, -400, 400]);
    const y = new Float64Array(x.length);
    gelu(x, y, x.length);
    const expected = [0.8411919906082768, -0.15880800939172324, 0.34571400982514394, -0.0036373920817729943, -0, 30, -0, 400];
    expected.forEach((e, i) => assert.ok(Math.abs(y[i]! - e) < 1e-12 * Math.max(1, Math.abs(e)), `gelu(${x[i]}) = ${y[i]}, expected ${e}`));
    const dx = new Float64Array(x.length);
    geluBackward(x, new Float64Array(x.length).fill(1), dx, x.length);
    x.forEach((v, i) => {
      const numeric = (0.5 * (v + 1e-6) * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * ((v + 1e-6) + 0.044715 * (v + 1e-6) ** 3))) - 0.5 * (v - 1e-6) * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * ((v - 1e-6) + 0.044715 * (v - 1e-6) ** 3)))) / 2e-6;
      assert.ok(Math.abs(dx[i]! - numeric) < 1e-6, `gelu'(${v}) = ${dx[i]}, numeric ${numeric}`);
    });
  });
});
