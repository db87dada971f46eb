// The DPO loss, its gradient with respect to each token log-prob and its metrics: against a hand
// computation, against finite differences, and the identities the issue names (reference = policy ⇒
// every log-ratio 0; margin = chosen_reward − rejected_reward).
import * as assert from 'assert';
import { dpoCustomLoss, dpoLoss, DpoPairInput, logSigmoid, sigmoid, targetLogprobsFromPrompt } from '../../../src/core/dpo/loss';
import { textInput, type Datum } from '../../../src/core/tinker/types';

const PAIRS: DpoPairInput[] = [
  // ρ_c = (−1 −2) − (−4) = 1; ρ_r = (−3) − (−2.5) = −0.5 (the prompt token has weight 0)
  { chosenLogprobs: [-9, -1, -2], chosenWeights: [0, 1, 1], rejectedLogprobs: [-9, -3], rejectedWeights: [0, 1], refChosen: -4, refRejected: -2.5 },
  // ρ_c = −2 − (−1) = −1; ρ_r = −1 − (−1.5) = 0.5: mis-ranked
  { chosenLogprobs: [-2], chosenWeights: [1], rejectedLogprobs: [-0.25, -0.75], rejectedWeights: [1, 1], refChosen: -1, refRejected: -1.5 },
];

describe('DPO loss', () => {
  it('loss and metrics equal a hand computation', () => {
    const beta = 0.5;
    const out = dpoLoss(PAIRS, beta);
    // z₀ = 0.5·(1 − (−0.5)) = 0.75, z₁ = 0.5·(−1 − 0.5) = −0.75
    const l0 = Math.log(1 + Math.exp(-0.75));
    const l1 = Math.log(1 + Math.exp(0.75));
    assert.ok(Math.abs(out.loss - (l0 + l1) / 2) < 1e-12, `${out.loss}`);
    assert.strictEqual(out.metrics.dpo_loss, out.loss);
    assert.strictEqual(out.metrics.accuracy, 0.5);
    assert.strictEqual(out.metrics.num_pairs, 2);
    assert.ok(Math.abs(out.metrics.chosen_reward - (0.5 * 1 + 0.5 * -1) / 2) < 1e-12);
    assert.ok(Math.abs(out.metrics.rejected_reward - (0.5 * -0.5 + 0.5 * 0.5) / 2) < 1e-12);
    assert.ok(Math.abs(out.metrics.margin - (0.75 + -0.75) / 2) < 1e-12);
    assert.deepStrictEqual(out.margins.map((m) => Number(m.toFixed(12))), [0.75, -0.75]);
    // gradients: chosen −σ(−z)·β·w/N, rejected +σ(−z)·β·w/N
    const k0 = (1 / (1 + Math.exp(0.75))) * 0.5 / 2;
    assert.deepStrictEqual(Array.from(out.chosenGradients[0]!).map((x) => Number(x.toFixed(12))), [0, -k0, -k0].map((x) => Number(x.toFixed(12))));
    assert.deepStrictEqual(Array.from(out.rejectedGradients[0]!).map((x) => Number(x.toFixed(12))), [0, k0].map((x) => Number(x.toFixed(12))));
  });

  it('the gradient equals central finite differences of the loss', () => {
    const beta = 0.3;
    const base = dpoLoss(PAIRS, beta);
    const h = 1e-6;
    for (let i = 0; i < PAIRS.length; i++)
      for (const side of ['chosen', 'rejected'] as const) {
        const key = side === 'chosen' ? 'chosenLogprobs' : 'rejectedLogprobs';
        const grads = side === 'chosen' ? base.chosenGradients[i]! : base.rejectedGradients[i]!;
        for (let t = 0; t < PAIRS[i]![key].length; t++) {
          const shifted = (d: number) =>
            dpoLoss(
              PAIRS.map((p, j) => (j === i ? { ...p, [key]: Array.from(p[key], (x, u) => (u === t ? x + d : x)) } : p)),
              beta,
            ).loss;
          const fd = (shifted(h) - shifted(-h)) / (2 * h);
          assert.ok(Math.abs(fd - grads[t]!) < 1e-8, `pair ${i} ${side} token ${t}: analytic ${grads[t]} vs finite difference ${fd}`);
        }
      }
  });

  it('with a chosen-NLL weight α: loss = DPO + α·chosen_nll, chosen_nll by hand, and the gradient equals finite differences', () => {
    const beta = 0.3;
    const alpha = 0.7;
    const plain = dpoLoss(PAIRS, beta);
    const out = dpoLoss(PAIRS, beta, alpha);
    // chosen NLL per token: pair 0 (−1 −2)/2 → 1.5; pair 1: 2 → mean 1.75
    assert.ok(Math.abs(out.metrics.chosen_nll - 1.75) < 1e-12, `${out.metrics.chosen_nll}`);
    assert.strictEqual(plain.metrics.chosen_nll, out.metrics.chosen_nll, 'logged whatever α');
    assert.strictEqual(out.metrics.dpo_loss, plain.loss, 'dpo_loss stays the DPO term');
    assert.ok(Math.abs(out.loss - (plain.loss + alpha * 1.75)) < 1e-12);
    assert.deepStrictEqual(out.rejectedGradients, plain.rejectedGradients, 'the NLL term does not touch the rejected side');
    const h = 1e-6;
    for (let i = 0; i < PAIRS.length; i++)
      for (let t = 0; t < PAIRS[i]!.chosenLogprobs.length; t++) {
        const shifted = (d: number) => dpoLoss(PAIRS.map((p, j) => (j === i ? { ...p, chosenLogprobs: Array.from(p.chosenLogprobs, (x, u) => (u === t ? x + d : x)) } : p)), beta, alpha).loss;
        const fd = (shifted(h) - shifted(-h)) / (2 * h);
        assert.ok(Math.abs(fd - out.chosenGradients[i]![t]!) < 1e-8, `pair ${i} token ${t}: analytic ${out.chosenGradients[i]![t]} vs finite difference ${fd}`);
      }
    assert.throws(() => dpoLoss(PAIRS, beta, -1), /nll_weight must be ≥ 0/);
  });

  it('with the reference equal to the policy every log-ratio is 0: loss log 2, rewards 0, accuracy 0', () => {
    const same = PAIRS.map((p) => ({
      ...p,
      refChosen: Array.from(p.chosenLogprobs).reduce((a, x, t) => a + x * (p.chosenWeights[t] as number), 0),
      refRejected: Array.from(p.rejectedLogprobs).reduce((a, x, t) => a + x * (p.rejectedWeights[t] as number), 0),
    }));
    const out = dpoLoss(same, 0.1);
    assert.ok(Math.abs(out.loss - Math.log(2)) < 1e-12);
    assert.strictEqual(out.metrics.chosen_reward, 0);
    assert.strictEqual(out.metrics.rejected_reward, 0);
    assert.strictEqual(out.metrics.margin, 0);
    assert.strictEqual(out.metrics.accuracy, 0, 'a tie is not a correct ranking (ρ_c > ρ_r strictly, as the cookbook)');
    // the gradient then pushes chosen up and rejected down by β/2 per weighted token, over N pairs
    assert.ok(Math.abs(out.chosenGradients[0]![1]! - -0.1 * 0.5 / 2) < 1e-12);
  });

  it('margin = chosen_reward − rejected_reward to 1e-6 on random batches', () => {
    let s = 12345;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    for (let trial = 0; trial < 50; trial++) {
      const pairs: DpoPairInput[] = Array.from({ length: 1 + (trial % 7) }, () => ({
        chosenLogprobs: [rnd() * 5, rnd() * 5],
        chosenWeights: [1, 1],
        rejectedLogprobs: [rnd() * 5, rnd() * 5, rnd() * 5],
        rejectedWeights: [1, 0, 1],
        refChosen: rnd() * 10,
        refRejected: rnd() * 10,
      }));
      const m = dpoLoss(pairs, 0.05 + Math.abs(rnd())).metrics;
      assert.ok(Math.abs(m.margin - (m.chosen_reward - m.rejected_reward)) < 1e-6, JSON.stringify(m));
    }
  });

  it('log σ and σ are stable at large |z|', () => {
    assert.strictEqual(logSigmoid(1000), -0);
    assert.strictEqual(logSigmoid(-1000), -1000);
    assert.strictEqual(sigmoid(-1000), 0);
    assert.strictEqual(sigmoid(1000), 1);
    assert.ok(Number.isFinite(dpoLoss([{ ...PAIRS[0]!, refChosen: 1e5 }], 1).loss));
  });

  it('as a custom loss over interleaved datums [c₀, r₀, c₁, r₁]; refuses an odd count or a missing reference', () => {
    const datum = (lp: number[], w: number[]): Datum => ({
      model_input: textInput(lp.map(() => 1)),
      loss_fn_inputs: { target_tokens: { dtype: 'int64', data: lp.map(() => 2) }, weights: { dtype: 'float32', data: Float32Array.from(w) } },
    });
    const data = PAIRS.flatMap((p) => [datum(Array.from(p.chosenLogprobs), Array.from(p.chosenWeights)), datum(Array.from(p.rejectedLogprobs), Array.from(p.rejectedWeights))]);
    const lps = PAIRS.flatMap((p) => [Float64Array.from(p.chosenLogprobs), Float64Array.from(p.rejectedLogprobs)]);
    const refs = PAIRS.flatMap((p) => [p.refChosen, p.refRejected]);
    let seen: number[] = [];
    const out = dpoCustomLoss(refs, 0.5, (m) => (seen = m))(data, lps);
    const direct = dpoLoss(PAIRS, 0.5);
    assert.strictEqual(out.loss, direct.loss);
    assert.deepStrictEqual(out.gradients.map((g) => Array.from(g)), [0, 1].flatMap((i) => [Array.from(direct.chosenGradients[i]!), Array.from(direct.rejectedGradients[i]!)]));
    assert.deepStrictEqual(out.metrics, { ...direct.metrics });
    assert.deepStrictEqual(seen, direct.margins);
    assert.throws(() => dpoCustomLoss(refs.slice(0, 3), 0.5)(data.slice(0, 3), lps.slice(0, 3)), /come in pairs/);
    assert.throws(() => dpoCustomLoss(refs.slice(0, 2), 0.5)(data, lps), /4 datums but 2 reference/);
  });

  it('reads the reference per-target log-probs from prompt log-probs (entry t+1 for target t)', () => {
    assert.deepStrictEqual(Array.from(targetLogprobsFromPrompt([null, -1, -2, -3], 3)), [-1, -2, -3]);
    assert.throws(() => targetLogprobsFromPrompt([null, -1], 3), /2 prompt log-probs for 3 targets/);
    assert.throws(() => targetLogprobsFromPrompt([null, null, -1], 2), /no log-prob for token 1/);
  });
});
