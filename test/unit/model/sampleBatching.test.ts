// Sampling requests served together: many concurrent requests decode as one batch, and each gets
// exactly — token for token, log-prob for log-prob — what it gets when served alone with the same
// seed; a request that fails (bad prompt) or whose sampler is released meanwhile does not disturb
// the others.
import * as assert from 'assert';
import * as path from 'path';
import { initCompute } from '../../../src/engine/compute';
import type { SampleRequest, SampleResult, SamplingParams } from '../../../src/engine/contract';
import { LocalBackend, createComputeBackend } from '../../../src/engine/model';
import { mergeLora, initBase } from '../../../src/engine/model/gptWeights';
import { BYTE_TOKENIZER, RANDOM_MODEL, SMALL_GPT, encodeChat } from '../../../src/engine/model/models';
import { DecodeParams, GenerationRequest, Sampler } from '../../../src/engine/model/sampler';

const EOS = BYTE_TOKENIZER.specialTokens[BYTE_TOKENIZER.eosToken]!;
/** bytes '0'..'9' stop a sequence: with the random model's near-uniform output, streams end at different steps */
const DIGITS = Array.from({ length: 10 }, (_, i) => 48 + i);

function prompt(i: number): Int32Array {
  return Int32Array.from(encodeChat(`<|im_start|>user\n${'x'.repeat(i % 7)}${i * 13} + ${i}?<|im_end|>\n<|im_start|>assistant\n`));
}

function decodeParams(i: number): DecodeParams {
  return {
    maxTokens: 3 + (i % 6),
    temperature: [1, 0.7, 1.3, 0][i % 4]!,
    topK: i % 5 === 0 ? 20 : -1,
    topP: i % 3 === 0 ? 0.9 : 1,
    stopTokens: i % 2 === 0 ? DIGITS : [],
    stopBytes: i % 4 === 1 ? [new TextEncoder().encode('ab')] : [],
    eosToken: EOS,
    seed: 1000 + i,
  };
}

describe('sampling: requests batched across callers', function () {
  this.timeout(120_000);
  before(() => initCompute({ threads: 1, log: () => undefined }));

  it('generateMany gives each request, bit for bit, what it gets alone', () => {
    const sampler = new Sampler(SMALL_GPT, mergeLora(SMALL_GPT, initBase(SMALL_GPT, 0, (n) => new Float32Array(n)), undefined, undefined));
    const reqs: GenerationRequest[] = Array.from({ length: 24 }, (_, i) => ({ prompt: prompt(i), numSamples: 1 + (i % 3), params: decodeParams(i) }));
    const together = sampler.generateMany(reqs);
    let stopped = 0;
    let long = 0;
    reqs.forEach((r, i) => {
      const alone = sampler.generate(r.prompt, r.numSamples, r.params);
      assert.deepStrictEqual(together[i], alone, `request ${i}`);
      for (const s of alone) {
        if (s.stopReason === 'stop') stopped++;
        if (s.tokens.length === r.params.maxTokens) long++;
      }
    });
    // the batch really had streams finishing at different steps
    assert.ok(stopped > 0 && long > 0, `${stopped} stopped early, ${long} ran to max_tokens`);
  });

  describe('the backend', () => {
    let b: LocalBackend;
    before(async () => {
      b = (await createComputeBackend({ weightsDir: path.join(__dirname, 'no-weights') })) as LocalBackend;
      await b.createSampler('s', { baseModel: RANDOM_MODEL });
    });
    after(() => b.close());

    const params = (i: number): SamplingParams => ({
      maxTokens: 2 + (i % 7),
      temperature: 1,
      topP: 1,
      topK: -1,
      stopStrings: [],
      stopTokens: i % 2 === 0 ? DIGITS : [],
      seed: 77 + i,
    });
    const request = (i: number, over: Partial<SampleRequest> = {}): SampleRequest => ({
      prompt: prompt(i),
      numSamples: 1,
      params: params(i),
      promptLogprobs: i % 5 === 0,
      topkPromptLogprobs: 0,
      ...over,
    });

    it('64 concurrent single-sequence requests get what each gets when sent one at a time', async () => {
      const alone: SampleResult[] = [];
      for (let i = 0; i < 64; i++) alone.push(await b.sample('s', request(i)));
      const together = await Promise.all(Array.from({ length: 64 }, (_, i) => b.sample('s', request(i))));
      assert.deepStrictEqual(together, alone);
    });

    it('a request that fails fails alone; the others in its batch are served unchanged', async () => {
      const good = await Promise.all([0, 1, 2].map((i) => b.sample('s', request(i))));
      const outcomes = await Promise.allSettled([
        b.sample('s', request(0)),
        b.sample('s', request(1, { prompt: Int32Array.from([257, 9999, 10]) })),
        b.sample('s', request(1)),
        b.sample('s', request(3, { prompt: new Int32Array(SMALL_GPT.ctx).fill(65) })),
        b.sample('s', request(2)),
        b.sample('missing', request(2)),
      ]);
      const reason = (k: number) => {
        const o = outcomes[k]!;
        assert.strictEqual(o.status, 'rejected', `outcome ${k}`);
        return (o.reason as Error).message;
      };
      assert.match(reason(1), /prompt token id 9999 is outside the vocabulary/);
      assert.match(reason(3), /the prompt has 64 tokens; the model's context is 64/);
      assert.match(reason(5), /sampler missing is not loaded/);
      assert.deepStrictEqual(
        [0, 2, 4].map((k) => (outcomes[k] as PromiseFulfilledResult<SampleResult>).value),
        good,
      );
    });

    it('requests already queued finish when their sampler is released meanwhile', async () => {
      await b.createSampler('t', { baseModel: RANDOM_MODEL });
      const expected = await Promise.all([4, 5].map((i) => b.sample('t', request(i))));
      const pending = [4, 5].map((i) => b.sample('t', request(i)));
      await b.releaseSampler('t');
      assert.deepStrictEqual(await Promise.all(pending), expected);
      await assert.rejects(b.sample('t', request(4)), /sampler t is not loaded/);
    });
  });
});
