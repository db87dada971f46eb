// Prompt log-probs come from the prefill that sampling runs anyway: a prompt is run through the model
// once whether its log-probs are asked for or not, and the log-probs (and the samples) are bit for bit
// what a separate pass over the prompt gives.
import * as assert from 'assert';
import { initCompute } from '../../../src/engine/compute';
import { initBase, mergeLora } from '../../../src/engine/model/gptWeights';
import { BYTE_TOKENIZER, SMALL_GPT, encodeChat } from '../../../src/engine/model/models';
import { DecodeParams, GenerationRequest, KvModel, Sampler } from '../../../src/engine/model/sampler';

const EOS = BYTE_TOKENIZER.specialTokens[BYTE_TOKENIZER.eosToken]!;
const merged = mergeLora(SMALL_GPT, initBase(SMALL_GPT, 3, (n) => new Float32Array(n)), undefined, undefined);

function prompt(i: number): Int32Array {
  return Int32Array.from(encodeChat(`<|im_start|>user\nWhat is ${i} + ${2 * i}?<|im_end|>\n<|im_start|>assistant\n`));
}

function params(i: number): DecodeParams {
  return { maxTokens: 4 + (i % 3), temperature: 1, topP: 1, topK: -1, stopTokens: [], stopBytes: [], eosToken: EOS, seed: 40 + i };
}

/** Counts the tokens every model call is given, while `body` runs. */
function tokensFed<T>(body: () => T): { fed: number; value: T } {
  const step = KvModel.prototype.step;
  let fed = 0;
  KvModel.prototype.step = function (this: KvModel, ...args: Parameters<KvModel['step']>) {
    fed += args[0].length;
    return step.apply(this, args);
  };
  try {
    const value = body();
    return { fed, value };
  } finally {
    KvModel.prototype.step = step;
  }
}

/** The prompt's log-probs and top k from a pass of its own (how the engine computed them before). */
function separatePass(p: Int32Array, topk: number): { logprobs: Float32Array; topk: Array<Array<[number, number]> | null> } {
  const { vocabSize: V, nLayer, d } = SMALL_GPT;
  const L = p.length;
  const cache = { k: Array.from({ length: nLayer }, () => new Float32Array(L * d)), v: Array.from({ length: nLayer }, () => new Float32Array(L * d)) };
  const rows = new KvModel(SMALL_GPT, merged).step(p, [L], [0], [cache], 'all');
  const logprobs = new Float32Array(L).fill(NaN);
  const top: Array<Array<[number, number]> | null> = [null];
  for (let i = 1; i < L; i++) {
    logprobs[i] = rows[(i - 1) * V + p[i]!]!;
    top.push(Array.from({ length: V }, (_, j) => [j, rows[(i - 1) * V + j]!] as [number, number]).sort((a, b) => b[1] - a[1]).slice(0, topk));
  }
  return { logprobs, topk: top };
}

describe('sampling: prompt log-probs from the prefill', function () {
  this.timeout(120_000);
  before(() => initCompute({ threads: 1, log: () => undefined }));

  it('runs a prompt through the model once when its log-probs are asked for', () => {
    const sampler = new Sampler(SMALL_GPT, merged);
    const p = prompt(1);
    const { fed, value } = tokensFed(() => sampler.serve([{ prompt: p, numSamples: 3, params: params(1), promptLogprobs: { topk: 2 } }]));
    const r = value[0]!;
    assert.ok(!(r instanceof Error));
    // the prompt once, then each sample's tokens but its last (nothing follows it)
    const decoded = r.sequences.reduce((n, s) => n + s.tokens.length - 1, 0);
    assert.strictEqual(fed, p.length + decoded);
    assert.strictEqual(r.prompt?.logprobs.length, p.length);

    const only = tokensFed(() => sampler.serve([{ prompt: p, numSamples: 0, params: params(1), promptLogprobs: { topk: 0 } }]));
    assert.strictEqual(only.fed, p.length, 'log-probs alone: one pass over the prompt');
    const none = tokensFed(() => sampler.serve([{ prompt: p, numSamples: 0, params: params(1) }]));
    assert.strictEqual(none.fed, 0, 'nothing asked, nothing run');
  });

  it('gives bit for bit the log-probs of a separate pass, and the samples it gives without them, alone or batched', () => {
    const sampler = new Sampler(SMALL_GPT, merged);
    const reqs: GenerationRequest[] = [
      { prompt: prompt(1), numSamples: 2, params: params(1), promptLogprobs: { topk: 3 } },
      { prompt: prompt(2), numSamples: 1, params: params(2) },
      { prompt: prompt(1), numSamples: 1, params: params(5) },
      { prompt: prompt(3), numSamples: 0, params: params(3), promptLogprobs: { topk: 0 } },
      { prompt: prompt(2), numSamples: 2, params: params(4), promptLogprobs: { topk: 1 } },
    ];
    const batched = sampler.serve(reqs);
    reqs.forEach((req, i) => {
      const got = batched[i]!;
      assert.ok(!(got instanceof Error), `request ${i}`);
      assert.deepStrictEqual(got.sequences, sampler.generate(req.prompt, req.numSamples, req.params), `request ${i}: samples as without prompt log-probs`);
      const [alone] = sampler.serve([req]);
      assert.deepStrictEqual(got, alone, `request ${i}: batched as alone`);
      if (!req.promptLogprobs) {
        assert.strictEqual(got.prompt, undefined);
        return;
      }
      const want = separatePass(req.prompt, req.promptLogprobs.topk);
      assert.deepStrictEqual(got.prompt!.logprobs, want.logprobs, `request ${i}: log-probs`);
      if (req.promptLogprobs.topk > 0) assert.deepStrictEqual(got.prompt!.topk, want.topk, `request ${i}: top k`);
      else assert.strictEqual(got.prompt!.topk, undefined);
    });
  });
});
