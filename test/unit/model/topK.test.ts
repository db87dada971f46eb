// cross_entropy with (N, K) targets and weights (top-K distillation, Tinker's loss docs:
// L = −Σ_t Σ_k w_tk · log p(x_tk)): finite-difference gradients through the model at a tiny width,
// over a long (200-token) sequence and a continuation of it; the (N, 1) form equal to today's (N,)
// path bit for bit; the errors for shapes the loss does not take.
import * as assert from 'assert';
import type { EngineDatum, InputTensor } from '../../../src/engine/contract';
import { LocalBackend } from '../../../src/engine/model';
import { Gpt } from '../../../src/engine/model/gpt';
import { GptConfig, LoraSpec, Params, Rng, initBase, initLora } from '../../../src/engine/model/gptWeights';
import { computeLoss } from '../../../src/engine/model/losses';

const f64 = (n: number) => new Float64Array(n);

describe('cross_entropy with (N, K) targets (top-K)', () => {
  it('the loss is −Σ w·ℓ over every (position, target) and its gradient is −w', () => {
    const lp = Float64Array.from([-0.5, -2, -1, -3]);
    const weights: InputTensor = { dtype: 'float32', data: Float32Array.from([0.7, 0.3, 1, 0]), shape: [2, 2] };
    const out = computeLoss('cross_entropy', { logprobs: lp, inputs: { weights }, config: {}, targetShape: [2, 2] }, 0);
    assert.ok(Math.abs(out.loss - (0.35 + 0.6 + 1)) < 1e-6, `loss ${out.loss}`);
    assert.deepStrictEqual(Array.from(out.grad).map((g) => Math.round(g * 1e6) / 1e6), [-0.7, -0.3, -1, -0]);
    assert.throws(
      () => computeLoss('cross_entropy', { logprobs: lp, inputs: { weights: { ...weights, shape: [4] } }, config: {}, targetShape: [2, 2] }, 5),
      /datum 5: loss_fn_inputs\.weights has shape \(4\) but target_tokens has shape \(2, 2\)/,
    );
  });

  describe('finite differences through the model, 256 positions, a 200-token sequence and its continuation (float64)', () => {
    const cfg: GptConfig = { vocabSize: 11, ctx: 256, d: 8, nLayer: 2, nHead: 2, ffn: 12 };
    const spec: LoraSpec = { rank: 2, alpha: 4, attn: true, mlp: true, unembed: true };
    const rng = new Rng(11);
    const base = initBase(cfg, 3, f64);
    for (const [k, v] of base) if (!k.endsWith('.g') && !k.endsWith('.b')) for (let i = 0; i < v.length; i++) v[i] = rng.normal() * 0.3;
    const lora = initLora(cfg, spec, 5, f64);
    for (const [k, v] of lora) if (k.endsWith('.B')) for (let i = 0; i < v.length; i++) v[i] = rng.normal() * 0.3;
    const gpt = new Gpt(cfg, base, lora, spec, f64);
    // a 200-token root and a 40-token continuation attending to it (positions 200..239)
    const lens = [200, 40];
    const parents = [-1, 0];
    const T = 240;
    const K = 3;
    const tokens = Int32Array.from({ length: T }, () => Math.floor(rng.next() * cfg.vocabSize));
    const targets = Int32Array.from({ length: T * K }, () => Math.floor(rng.next() * cfg.vocabSize));
    const weights = Float64Array.from({ length: T * K }, () => rng.next());
    const rows = Int32Array.from({ length: T * K }, (_, e) => Math.floor(e / K));

    /** −Σ_t Σ_k w_tk · log p(x_tk), as cross_entropy computes it from the gathered log-probs */
    function loss(): number {
      const f = gpt.forward(tokens, lens, parents);
      const lp = Float64Array.from(targets, (x, e) => f.logprobs[rows[e]! * cfg.vocabSize + x]!);
      return computeLoss('cross_entropy', { logprobs: lp, inputs: { weights: { dtype: 'float32', data: weights, shape: [T, K] } }, config: {}, targetShape: [T, K] }, 0).loss;
    }

    const grads: Params = new Map();
    for (const [k, v] of [...base, ...lora]) grads.set(k, new Float64Array(v.length));
    before(() => {
      const f = gpt.forward(tokens, lens, parents);
      const lp = Float64Array.from(targets, (x, e) => f.logprobs[rows[e]! * cfg.vocabSize + x]!);
      const out = computeLoss('cross_entropy', { logprobs: lp, inputs: { weights: { dtype: 'float32', data: weights, shape: [T, K] } }, config: {}, targetShape: [T, K] }, 0);
      gpt.backward(f, targets, out.grad, grads, rows);
    });

    for (const name of ['pos', 'tok', 'h0.wq', 'h1.wk', 'h0.wv', 'h1.w1', 'h0.wo.B', 'h1.w2.A', 'unembed.B', 'lnf.g']) {
      it(`∂L/∂${name}`, () => {
        const p = base.get(name) ?? lora.get(name)!;
        const g = grads.get(name)!;
        const pick = new Rng(name.length * 17 + 1);
        for (let trial = 0; trial < 6; trial++) {
          // for the positions, check rows late in the sequence (the long-context part)
          const i = name === 'pos' ? (150 + Math.floor(pick.next() * 89)) * cfg.d + Math.floor(pick.next() * cfg.d) : Math.floor(pick.next() * p.length);
          const eps = 1e-5;
          const old = p[i]!;
          p[i] = old + eps;
          const up = loss();
          p[i] = old - eps;
          const down = loss();
          p[i] = old;
          const numeric = (up - down) / (2 * eps);
          assert.ok(Math.abs(numeric - g[i]!) < 1e-5 * Math.max(1, Math.abs(numeric)), `${name}[${i}]: analytic ${g[i]}, numeric ${numeric}`);
        }
      });
    }
  });

  describe('in the engine backend', () => {
    const cfg: GptConfig = { vocabSize: 259, ctx: 64, d: 16, nLayer: 2, nHead: 2, ffn: 32 };
    const lora = { rank: 4, seed: 3, trainAttn: true, trainMlp: true, trainUnembed: true };
    const adam = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 };
    const seqs = [
      [5, 60, 61, 62, 63, 64, 65, 66],
      [5, 60, 61, 62, 70, 71],
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 100, 101],
    ];
    const f32 = (xs: number[], shape: number[]): InputTensor => ({ dtype: 'float32', data: Float32Array.from(xs), shape });
    const i64 = (xs: number[], shape: number[]): InputTensor => ({ dtype: 'int64', data: Float64Array.from(xs), shape });

    it('(N, 1) targets and weights give exactly what (N,) gives: log-probs, losses, gradients', async () => {
      const flat: EngineDatum[] = [];
      const column: EngineDatum[] = [];
      seqs.forEach((s, k) => {
        const n = s.length - 1;
        const w = s.slice(1).map((_, t) => (t + k) % 3 === 0 ? 0 : 0.25 * (t + 1));
        flat.push({ tokens: Int32Array.from(s.slice(0, -1)), lossFnInputs: { target_tokens: i64(s.slice(1), [n]), weights: f32(w, [n]) } });
        column.push({ tokens: Int32Array.from(s.slice(0, -1)), lossFnInputs: { target_tokens: i64(s.slice(1), [n, 1]), weights: f32(w, [n, 1]) } });
      });
      const backend = new LocalBackend({ config: cfg, weightsDir: '/nonexistent' });
      try {
        await backend.createTrainingModel('a', 'tinker-studio/random-gpt', lora);
        await backend.createTrainingModel('b', 'tinker-studio/random-gpt', lora);
        const a = await backend.forwardBackward('a', flat, 'cross_entropy', {}, false);
        const b = await backend.forwardBackward('b', column, 'cross_entropy', {}, false);
        assert.strictEqual(b.metrics['loss:sum'], a.metrics['loss:sum']);
        a.outputs.forEach((o, k) => {
          assert.deepStrictEqual(Array.from(b.outputs[k]!.logprobs!.data), Array.from(o.logprobs!.data), `datum ${k} log-probs`);
          assert.deepStrictEqual(Array.from(b.outputs[k]!.elementwise_loss!.data), Array.from(o.elementwise_loss!.data), `datum ${k} elementwise`);
          assert.deepStrictEqual(b.outputs[k]!.logprobs!.shape, [seqs[k]!.length - 1, 1]);
        });
        assert.deepStrictEqual(await backend.optimStep('b', adam), await backend.optimStep('a', adam));
        const [sa, sb] = [await backend.exportState('a', true), await backend.exportState('b', true)];
        assert.ok(Buffer.from(sa).equals(Buffer.from(sb)), 'weights and Adam moments');
      } finally {
        await backend.close();
      }
    });

    it('(N, K) is the weighted sum of its K columns sent as (N,) datums', async () => {
      const K = 3;
      const s = seqs[0]!;
      const n = s.length - 1;
      const tg = Array.from({ length: n * K }, (_, e) => (s[1 + Math.floor(e / K)]! + 7 * (e % K)) % 259);
      const w = Array.from({ length: n * K }, (_, e) => [0.6, 0.3, 0.1][e % K]!);
      const topK: EngineDatum = { tokens: Int32Array.from(s.slice(0, -1)), lossFnInputs: { target_tokens: i64(tg, [n, K]), weights: f32(w, [n, K]) } };
      const cols: EngineDatum[] = Array.from({ length: K }, (_, j) => ({
        tokens: Int32Array.from(s.slice(0, -1)),
        lossFnInputs: { target_tokens: i64(tg.filter((_, e) => e % K === j), [n]), weights: f32(w.filter((_, e) => e % K === j), [n]) },
      }));
      const backend = new LocalBackend({ config: cfg, weightsDir: '/nonexistent' });
      try {
        await backend.createTrainingModel('m', 'tinker-studio/random-gpt', lora);
        const one = await backend.forwardBackward('m', [topK], 'cross_entropy', {}, true);
        const sep = await backend.forwardBackward('m', cols, 'cross_entropy', {}, true);
        assert.deepStrictEqual(one.outputs[0]!.logprobs!.shape, [n, K]);
        const lp = one.outputs[0]!.logprobs!.data;
        // (the three column datums share their prompt, which the engine forwards once: float32 rounding may differ)
        for (let j = 0; j < K; j++) {
          for (let t = 0; t < n; t++) assert.ok(Math.abs(lp[t * K + j]! - sep.outputs[j]!.logprobs!.data[t]!) < 1e-5, `position ${t}, target ${j}: ${lp[t * K + j]} vs ${sep.outputs[j]!.logprobs!.data[t]}`);
        }
        assert.ok(Math.abs(one.metrics['loss:sum']! - sep.metrics['loss:sum']!) < 1e-4, `${one.metrics['loss:sum']} vs ${sep.metrics['loss:sum']}`);
      } finally {
        await backend.close();
      }
    });

    it('refuses (N, K) targets for the policy losses and a wrong number of rows, naming the datum', async () => {
      const backend = new LocalBackend({ config: cfg, weightsDir: '/nonexistent' });
      try {
        await backend.createTrainingModel('m', 'tinker-studio/random-gpt', lora);
        const s = seqs[1]!;
        const n = s.length - 1;
        const two = i64(Array.from({ length: n * 2 }, () => 60), [n, 2]);
        const rl: EngineDatum = { tokens: Int32Array.from(s.slice(0, -1)), lossFnInputs: { target_tokens: two, logprobs: f32(new Array(n * 2).fill(-1), [n, 2]), advantages: f32(new Array(n * 2).fill(1), [n, 2]) } };
        await assert.rejects(backend.forwardBackward('m', [rl], 'importance_sampling', {}, false), /datum 0: target_tokens of shape \(N, K\) = \(5, 2\) are taken by cross_entropy only/);
        const short: EngineDatum = { tokens: Int32Array.from(s.slice(0, -1)), lossFnInputs: { target_tokens: i64(new Array(8).fill(60), [4, 2]), weights: f32(new Array(8).fill(1), [4, 2]) } };
        await assert.rejects(backend.forwardBackward('m', [short], 'cross_entropy', {}, false), /datum 0: target_tokens has 4 rows but model_input has 5 tokens/);
      } finally {
        await backend.close();
      }
    });
  });
});
