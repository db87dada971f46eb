// The engine's results do not depend on its GEMM thread count under the real call pattern: two
// engine workers, one GEMM thread and two, run the same GRPO-like steps (seeded sampling of many
// concurrent requests, importance_sampling forward_backward, optim_step, a fresh sampler) and must
// agree bit for bit. (The CLI's engine uses 2 threads, the benchmarks 1.)
import * as assert from 'assert';
import { trajectoryToDatum } from '../../../src/core/rollouts/datums';
import type { ComputeBackend, EngineDatum } from '../../../src/engine/contract';
import { createComputeBackend } from '../../../src/engine/model';
import { ARITH_MODEL, RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';

describe('GEMM threads 1 and 2 give the same engine results', function () {
  this.timeout(180_000);
  const backends: ComputeBackend[] = [];
  before(async () => {
    backends.push(await createComputeBackend({ inWorker: true, gemmThreads: 1 }), await createComputeBackend({ inWorker: true, gemmThreads: 2 }));
  });
  after(async () => {
    for (const b of backends) await b.close();
  });

  it('samples, trainer log-probs and weights are bit-identical over two steps', async () => {
    const model = backends[0]!.listBaseModels().some((m) => m.name === ARITH_MODEL) ? ARITH_MODEL : RANDOM_MODEL;
    const lora = { rank: 8, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: true };
    for (const b of backends) await b.createTrainingModel('m', model, lora);
    for (let step = 0; step < 2; step++) {
      const prompts = Array.from({ length: 16 }, (_, k) => encodeChat(`<|im_start|>user\nWhat is ${k * 3 + step} + ${k * 5}?<|im_end|>\n<|im_start|>assistant\n`));
      const results = await Promise.all(
        backends.map(async (b) => {
          await b.createSampler(`s${step}`, { state: await b.exportState('m', false) });
          return Promise.all(
            prompts.map((p, k) =>
              b.sample(`s${step}`, { prompt: Int32Array.from(p), numSamples: 4, params: { maxTokens: 6, temperature: 1, topP: 1, topK: -1, stopStrings: [], stopTokens: [258], seed: step * 100 + k }, promptLogprobs: false, topkPromptLogprobs: 0 }),
            ),
          );
        }),
      );
      const [one, two] = results as [typeof results[0], typeof results[0]];
      const seqs = (r: typeof one) => r.map((x) => x.sequences.map((s) => [Array.from(s.tokens), Array.from(s.logprobs)]));
      assert.deepStrictEqual(seqs(two), seqs(one), `step ${step}: samples and sampler log-probs`);
      const data: EngineDatum[] = one.flatMap((r, k) =>
        r.sequences.map((s, j) => {
          const d = trajectoryToDatum(prompts[k]!, Array.from(s.tokens), Array.from(s.logprobs), j % 2 === 0 ? 0.5 : -0.5);
          const n = d.targetTokens.length;
          return {
            tokens: Int32Array.from(d.modelInput),
            lossFnInputs: {
              target_tokens: { dtype: 'int64', data: Float64Array.from(d.targetTokens), shape: [n] },
              logprobs: { dtype: 'float32', data: Float32Array.from(d.logprobs), shape: [n] },
              advantages: { dtype: 'float32', data: Float32Array.from(d.advantages), shape: [n] },
            },
          };
        }),
      );
      const outs = [];
      for (const b of backends) {
        const fb = await b.forwardBackward('m', data, 'importance_sampling', {}, false);
        const opt = await b.optimStep('m', { learningRate: 4e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 });
        outs.push({ lp: fb.outputs.map((o) => Array.from(o.logprobs!.data)), opt });
      }
      assert.deepStrictEqual(outs[1]!.lp, outs[0]!.lp, `step ${step}: trainer log-probs`);
      assert.deepStrictEqual(outs[1]!.opt, outs[0]!.opt, `step ${step}: optimizer metrics`);
      const [w1, w2] = await Promise.all(backends.map((b) => b.exportState('m', true)));
      assert.ok(Buffer.from(w1!).equals(Buffer.from(w2!)), `step ${step}: weights and Adam moments`);
    }
  });

  for (const rope of [false, true]) it(`long sequences (256 ${rope ? 'rotary' : 'learned'} positions), shared prefixes and top-K cross_entropy are bit-identical too`, async () => {
    const config = { vocabSize: 259, ctx: 256, d: 32, nLayer: 2, nHead: 4, ffn: 64, rope };
    const pair = [await createComputeBackend({ inWorker: true, gemmThreads: 1, config, weightsDir: '/nonexistent' }), await createComputeBackend({ inWorker: true, gemmThreads: 2, config, weightsDir: '/nonexistent' })];
    try {
      const lora = { rank: 4, seed: 2, trainAttn: true, trainMlp: true, trainUnembed: true };
      const K = 3;
      const data: EngineDatum[] = Array.from({ length: 6 }, (_, i) => {
        // three datums share a 180-token prefix; the others are full-context sequences of their own
        const n = i < 3 ? 200 + i * 10 : 256 - i;
        const tokens = Int32Array.from({ length: n }, (_, t) => (i < 3 && t < 180 ? (t * 7) % 256 : (t * 13 + i * 31) % 256));
        const targets = Float64Array.from({ length: n * K }, (_, e) => (Math.floor(e / K) * 11 + (e % K) * 5 + i) % 259);
        const weights = Float32Array.from({ length: n * K }, (_, e) => [0.6, 0.3, 0.1][e % K]!);
        return { tokens, lossFnInputs: { target_tokens: { dtype: 'int64', data: targets, shape: [n, K] }, weights: { dtype: 'float32', data: weights, shape: [n, K] } } };
      });
      const outs = [];
      for (const b of pair) {
        await b.createTrainingModel('m', RANDOM_MODEL, lora);
        const fb = await b.forwardBackward('m', data, 'cross_entropy', {}, false);
        const opt = await b.optimStep('m', { learningRate: 4e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
        outs.push({ lp: fb.outputs.map((o) => Array.from(o.logprobs!.data)), loss: fb.metrics, opt, state: Buffer.from(await b.exportState('m', true)) });
      }
      assert.deepStrictEqual(outs[1]!.lp, outs[0]!.lp, 'log-probs');
      assert.deepStrictEqual(outs[1]!.loss, outs[0]!.loss, 'loss');
      assert.deepStrictEqual(outs[1]!.opt, outs[0]!.opt, 'optimizer metrics');
      assert.ok(outs[1]!.state.equals(outs[0]!.state), 'weights and Adam moments');
    } finally {
      for (const b of pair) await b.close();
    }
  });
});
