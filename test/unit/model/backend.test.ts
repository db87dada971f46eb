// The compute backend directly: bit-exact state round trips, determinism given seeds, sampler
// log-probs that agree with the trainer's, and stop conditions.
import * as assert from 'assert';
import * as path from 'path';
import type { EngineDatum } from '../../../src/engine/contract';
import { LocalBackend, createComputeBackend } from '../../../src/engine/model';
import { RANDOM_MODEL, encodeChat } from '../../../src/engine/model/models';

const lora = { rank: 4, seed: 3, trainAttn: true, trainMlp: true, trainUnembed: true };
const adam = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01, gradClipNorm: 1 };

function datum(text: string): EngineDatum {
  const t = encodeChat(text);
  return {
    tokens: Int32Array.from(t.slice(0, -1)),
    lossFnInputs: {
      target_tokens: { dtype: 'int64', data: Float64Array.from(t.slice(1)), shape: [t.length - 1] },
      weights: { dtype: 'float32', data: new Float32Array(t.length - 1).fill(1), shape: [t.length - 1] },
    },
  };
}

/** an importance_sampling datum over d's tokens with one sampler log-prob and advantage everywhere */
function rlDatum(sft: EngineDatum, samplerLogprob: number, advantage: number): EngineDatum {
  const n = sft.tokens.length;
  return {
    tokens: sft.tokens,
    lossFnInputs: {
      target_tokens: sft.lossFnInputs.target_tokens!,
      logprobs: { dtype: 'float32', data: new Float32Array(n).fill(samplerLogprob), shape: [n] },
      advantages: { dtype: 'float32', data: new Float32Array(n).fill(advantage), shape: [n] },
    },
  };
}

describe('compute backend', function () {
  this.timeout(60_000);
  let b: LocalBackend;
  const d = datum('<|im_start|>user\nWhat is 12 + 30?<|im_end|>\n<|im_start|>assistant\n42<|im_end|>');
  before(async () => {
    b = (await createComputeBackend({ weightsDir: path.join(__dirname, 'no-weights') })) as LocalBackend;
  });

  it('exports, imports and re-exports a state bit for bit, Adam moments included', async () => {
    await b.createTrainingModel('a', RANDOM_MODEL, lora);
    for (let i = 0; i < 2; i++) {
      await b.forwardBackward('a', [d], 'cross_entropy', {}, false);
      await b.optimStep('a', adam);
    }
    const s1 = await b.exportState('a', true);
    await b.createTrainingModel('b', RANDOM_MODEL, { ...lora, seed: 99 });
    await b.importState('b', s1, true);
    const s2 = await b.exportState('b', true);
    assert.ok(Buffer.from(s1).equals(Buffer.from(s2)), 'identical bytes');
    assert.deepStrictEqual(b.describeState(s1), { baseModel: RANDOM_MODEL, lora, hasOptimizerState: true });
    assert.throws(() => b.describeState(s1.slice(0, 20)), /checkpoint: (header length|expected)/);
    assert.throws(() => b.describeState(new TextEncoder().encode('not a checkpoint at all')), /not a TSSTATE1 file/);
  });

  it('trains deterministically: same seed and data, same weights', async () => {
    const run = async (id: string) => {
      await b.createTrainingModel(id, RANDOM_MODEL, lora);
      for (let i = 0; i < 2; i++) {
        await b.forwardBackward(id, [d, d], 'cross_entropy', {}, false);
        await b.optimStep(id, adam);
      }
      return Buffer.from(await b.exportState(id, true));
    };
    assert.ok((await run('x')).equals(await run('y')));
  });

  it('samples deterministically for a seed, and reports log-probs equal to the trainer\'s at temperature 1', async () => {
    await b.createTrainingModel('s', RANDOM_MODEL, lora);
    await b.forwardBackward('s', [d], 'cross_entropy', {}, false);
    await b.optimStep('s', adam);
    await b.createSampler('smp', { state: await b.exportState('s', false) });
    const prompt = Int32Array.from(encodeChat('<|im_start|>user\nWhat is 12 + 30?<|im_end|>\n<|im_start|>assistant\n'));
    const req = { prompt, numSamples: 4, params: { maxTokens: 8, temperature: 1, topP: 1, topK: -1, stopStrings: [], stopTokens: [258], seed: 5 }, promptLogprobs: false, topkPromptLogprobs: 0 };
    const r1 = await b.sample('smp', req);
    const r2 = await b.sample('smp', req);
    assert.deepStrictEqual(r1.sequences.map((s) => Array.from(s.tokens)), r2.sequences.map((s) => Array.from(s.tokens)));
    // the trainer's log-probs of the same continuation
    for (const seq of r1.sequences) {
      const full = [...prompt, ...seq.tokens];
      const td: EngineDatum = {
        tokens: Int32Array.from(full.slice(0, -1)),
        lossFnInputs: {
          target_tokens: { dtype: 'int64', data: Float64Array.from(full.slice(1)), shape: [full.length - 1] },
          weights: { dtype: 'float32', data: new Float32Array(full.length - 1), shape: [full.length - 1] },
        },
      };
      const out = await b.forwardBackward('s', [td], 'cross_entropy', {}, true);
      const train = out.outputs[0]!.logprobs!.data.slice(prompt.length - 1);
      seq.logprobs.forEach((lp, i) => assert.ok(Math.abs(lp - train[i]!) < 1e-3, `token ${i}: sampler ${lp} vs trainer ${train[i]}`));
    }
  });

  it('sums the loss and the gradient over datums: [d, d] gives twice what [d] gives', async () => {
    const rl = rlDatum(d, -1, 0.5);
    await b.createTrainingModel('sum1', RANDOM_MODEL, lora);
    await b.createTrainingModel('sum2', RANDOM_MODEL, lora);
    const one = await b.forwardBackward('sum1', [rl], 'importance_sampling', {}, false);
    const two = await b.forwardBackward('sum2', [rl, rl], 'importance_sampling', {}, false);
    assert.ok(Math.abs(two.metrics['loss:sum']! - 2 * one.metrics['loss:sum']!) < 1e-4 * Math.abs(one.metrics['loss:sum']!), `${two.metrics['loss:sum']} vs 2 × ${one.metrics['loss:sum']}`);
    // the loss itself, from the learner log-probs: −Σ exp(ℓ + 1)·0.5
    const expected = -Array.from(one.outputs[0]!.logprobs!.data).reduce((a, lp) => a + Math.exp(lp + 1) * 0.5, 0);
    assert.ok(Math.abs(one.metrics['loss:sum']! - expected) < 1e-4 * Math.abs(expected), `loss:sum ${one.metrics['loss:sum']} vs ${expected}`);
    const g1 = (await b.optimStep('sum1', adam))['grad_norm:last']!;
    const g2 = (await b.optimStep('sum2', adam))['grad_norm:last']!;
    assert.ok(Math.abs(g2 - 2 * g1) < 1e-4 * g1, `grad norm ${g2} vs 2 × ${g1}`);
  });

  it('datums with zero advantage change nothing but still get their outputs, in the request order', async () => {
    const texts = ['What is 1 + 2?', 'What is 40 + 2?', 'Add 7 and 8, please', 'What is 123 + 456?', 'hi'];
    const data = texts.map((t, k) => rlDatum(datum(`<|im_start|>user\n${t}<|im_end|>\n<|im_start|>assistant\n${k}<|im_end|>`), -1.5, k % 2 === 1 ? 0.7 * k : 0));
    const moving = data.filter((_, k) => k % 2 === 1);
    await b.createTrainingModel('mixed', RANDOM_MODEL, lora);
    await b.createTrainingModel('moving', RANDOM_MODEL, lora);
    const first = await b.forwardBackward('mixed', data, 'importance_sampling', {}, false);
    await b.forwardBackward('moving', moving, 'importance_sampling', {}, false);
    for (const [k, x] of data.entries()) {
      const alone = await b.forwardBackward('moving', [x], 'importance_sampling', {}, true);
      const got = Array.from(first.outputs[k]!.logprobs!.data);
      const want = Array.from(alone.outputs[0]!.logprobs!.data);
      assert.strictEqual(got.length, want.length, `datum ${k}'s output`);
      got.forEach((v, t) => assert.ok(Math.abs(v - want[t]!) < 1e-5, `datum ${k} position ${t}: ${v} vs ${want[t]}`));
    }
    const gMixed = (await b.optimStep('mixed', adam))['grad_norm:last']!;
    const gMoving = (await b.optimStep('moving', adam))['grad_norm:last']!;
    assert.ok(gMoving > 0 && Math.abs(gMixed - gMoving) < 1e-5 * gMoving, `grad norm ${gMixed} vs ${gMoving}`);
    const after = async (id: string) => (await b.forwardBackward(id, data, 'importance_sampling', {}, true)).outputs.flatMap((o) => Array.from(o.logprobs!.data));
    const [x, y] = [await after('mixed'), await after('moving')];
    x.forEach((v, t) => assert.ok(Math.abs(v - y[t]!) < 1e-5, `after the step, position ${t}: ${v} vs ${y[t]}`));
  });

  for (const [sign, word] of [[1, 'raises'], [-1, 'lowers']] as const) {
    it(`an importance_sampling step with ${sign > 0 ? 'positive' : 'negative'} advantage ${word} the sampled tokens' log-probs`, async () => {
      const id = `dir${sign}`;
      await b.createTrainingModel(id, RANDOM_MODEL, lora);
      await b.createSampler(`${id}-s`, { state: await b.exportState(id, false) });
      const prompt = Int32Array.from(encodeChat('<|im_start|>user\nWhat is 12 + 30?<|im_end|>\n<|im_start|>assistant\n'));
      const r = await b.sample(`${id}-s`, { prompt, numSamples: 4, params: { maxTokens: 6, temperature: 1, topP: 1, topK: -1, stopStrings: [], stopTokens: [258], seed: 11 }, promptLogprobs: false, topkPromptLogprobs: 0 });
      const data = r.sequences.map((seq) => {
        const full = [...prompt, ...seq.tokens];
        const n = full.length - 1;
        const samp = new Float32Array(n);
        const adv = new Float32Array(n);
        seq.logprobs.forEach((lp, i) => {
          samp[prompt.length - 1 + i] = lp;
          adv[prompt.length - 1 + i] = sign;
        });
        const datum: EngineDatum = {
          tokens: Int32Array.from(full.slice(0, -1)),
          lossFnInputs: {
            target_tokens: { dtype: 'int64', data: Float64Array.from(full.slice(1)), shape: [n] },
            logprobs: { dtype: 'float32', data: samp, shape: [n] },
            advantages: { dtype: 'float32', data: adv, shape: [n] },
          },
        };
        return datum;
      });
      const sampled = (out: Awaited<ReturnType<LocalBackend['forwardBackward']>>) =>
        out.outputs.reduce((acc, o) => acc + Array.from(o.logprobs!.data).slice(prompt.length - 1).reduce((a, v) => a + v, 0), 0);
      const before = sampled(await b.forwardBackward(id, data, 'importance_sampling', {}, false));
      await b.optimStep(id, { ...adam, learningRate: 1e-3 });
      const after = sampled(await b.forwardBackward(id, data, 'importance_sampling', {}, true));
      assert.ok(sign * (after - before) > 0, `Σ log-prob of the sampled tokens ${before} → ${after}`);
    });
  }

  it('stops on a stop string and includes the bytes that completed it', async () => {
    await b.createSampler('base', { baseModel: RANDOM_MODEL });
    const prompt = Int32Array.from(encodeChat('<|im_start|>user\nhi<|im_end|>\n'));
    for (let seed = 0; seed < 20; seed++) {
      const r = await b.sample('base', { prompt, numSamples: 1, params: { maxTokens: 30, temperature: 1, topP: 1, topK: -1, stopStrings: ['e'], stopTokens: [], seed }, promptLogprobs: false, topkPromptLogprobs: 0 });
      const s = r.sequences[0]!;
      if (s.stopReason === 'stop' && s.tokens[s.tokens.length - 1] === 'e'.charCodeAt(0)) return;
      assert.ok(s.stopReason === 'length' || [256, 258].includes(s.tokens[s.tokens.length - 1]!) || s.tokens[s.tokens.length - 1] === 101);
    }
    assert.fail('no sample in 20 seeds produced the stop string "e"');
  });

  it('refuses sequences longer than the context and unknown token ids, naming the problem', async () => {
    await assert.rejects(b.forwardBackward('a', [datum('x'.repeat(80))], 'cross_entropy', {}, true), /79 tokens is longer than the model's context of 64/);
    const bad = datum('abc');
    (bad.tokens as Int32Array)[0] = 999;
    await assert.rejects(b.forwardBackward('a', [bad], 'cross_entropy', {}, true), /token id 999 is outside the vocabulary/);
    await assert.rejects(b.forwardBackward('a', [d], 'ppo', { beta: 1 }, true), /"beta" is not accepted by ppo/);
  });
});
