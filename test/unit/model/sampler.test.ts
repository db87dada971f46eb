// The sampler's token choice on a known four-token distribution p = (0.5, 0.25, 0.15, 0.1): which
// tokens temperature, top_k and top_p allow, how often each is drawn, and that the reported
// log-prob is the log of the probability the token was actually drawn with (docs/engine.md, "Sampling").
import * as assert from 'assert';
import { Rng } from '../../../src/engine/model/gptWeights';
import { pick } from '../../../src/engine/model/sampler';

const P = [0.5, 0.25, 0.15, 0.1];
const LP = Float32Array.from(P, Math.log);

/** draws n tokens; returns the frequency of each and the log-prob reported for each token seen */
function draw(params: { temperature: number; topK: number; topP: number }, n = 20000) {
  const rng = new Rng(1234);
  const counts = [0, 0, 0, 0];
  const reported = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const [tok, lp] = pick(LP, 0, 4, params, rng);
    counts[tok]!++;
    const seen = reported.get(tok);
    if (seen !== undefined) assert.strictEqual(lp, seen, `token ${tok} always reports the same log-prob`);
    reported.set(tok, lp);
  }
  return { freq: counts.map((c) => c / n), reported };
}

/** the distribution sampled from: frequencies within 4 standard errors, log-probs to 1e-6 */
function assertDistribution(r: ReturnType<typeof draw>, expected: number[], n = 20000): void {
  expected.forEach((q, i) => {
    const se = Math.sqrt(Math.max(q * (1 - q), 1e-12) / n);
    assert.ok(Math.abs(r.freq[i]! - q) <= 4 * se + 1e-12, `token ${i}: drawn with frequency ${r.freq[i]}, expected ${q}`);
    if (q === 0) assert.ok(!r.reported.has(i), `token ${i} is outside the allowed set`);
    else assert.ok(Math.abs(r.reported.get(i)! - Math.log(q)) < 1e-6, `token ${i}: reported log-prob ${r.reported.get(i)}, expected log ${q}`);
  });
}

describe('sampler: temperature, top_k and top_p on a known distribution', () => {
  it('temperature 1, no truncation: the model distribution itself', () => {
    assertDistribution(draw({ temperature: 1, topK: -1, topP: 1 }), P);
  });

  it('temperature 2 flattens: p^(1/2) renormalised', () => {
    // √p = (0.7071, 0.5, 0.3873, 0.3162), sum 1.9106
    assertDistribution(draw({ temperature: 2, topK: -1, topP: 1 }), [0.3700903444, 0.2616933922, 0.2027068299, 0.1655094336]);
  });

  it('temperature 0.5 sharpens: p² renormalised', () => {
    // p² = (0.25, 0.0625, 0.0225, 0.01), sum 0.345
    assertDistribution(draw({ temperature: 0.5, topK: -1, topP: 1 }), [0.25 / 0.345, 0.0625 / 0.345, 0.0225 / 0.345, 0.01 / 0.345]);
  });

  it('top_k 2 keeps the two most likely tokens and renormalises them', () => {
    assertDistribution(draw({ temperature: 1, topK: 2, topP: 1 }), [2 / 3, 1 / 3, 0, 0]);
  });

  it('top_p keeps the smallest most-likely-first prefix whose mass reaches p', () => {
    // 0.5 < 0.7 ≤ 0.75: tokens 0 and 1
    assertDistribution(draw({ temperature: 1, topK: -1, topP: 0.7 }), [2 / 3, 1 / 3, 0, 0]);
    // 0.5 reaches 0.5: token 0 alone, log-prob 0
    assertDistribution(draw({ temperature: 1, topK: -1, topP: 0.5, }), [1, 0, 0, 0]);
  });

  it('top_k, then top_p, then temperature-scaled probabilities together', () => {
    // top_k 3 keeps (0.5, 0.25, 0.15); top_p 0.8 needs all three (0.75 < 0.8); mass 0.9
    assertDistribution(draw({ temperature: 1, topK: 3, topP: 0.8 }), [0.5 / 0.9, 0.25 / 0.9, 0.15 / 0.9, 0]);
    // at temperature 0.5: (0.7246, 0.1812, 0.0652, 0.0290); top_p 0.8 keeps tokens 0 and 1
    assertDistribution(draw({ temperature: 0.5, topK: -1, topP: 0.8 }), [0.25 / 0.3125, 0.0625 / 0.3125, 0, 0]);
  });

  it('temperature 0 is greedy and reports the model log-prob of its choice', () => {
    const [tok, lp] = pick(LP, 0, 4, { temperature: 0, topK: -1, topP: 1 }, new Rng(1));
    assert.strictEqual(tok, 0);
    assert.ok(Math.abs(lp - Math.log(0.5)) < 1e-6);
  });
});
