// forwardBackwardCustom against the embedded engine over real HTTP: the surrogate cross_entropy step's
// parameter gradient is the custom loss's. Checked by finite differences of the true loss through the
// engine: Adam with beta1 = beta2 = 0 and an eps far above every gradient entry is plain gradient
// descent with step η = lr/eps, so one update must change the true loss by −η·‖∇L‖² to first order,
// ‖∇L‖ being the grad_norm the optimizer reports for the surrogate's gradient.
import * as assert from 'assert';
import type { CustomLossFn } from '../../../src/core/tinker/client';
import { logprobsOf } from '../../../src/core/tinker/customLoss';
import { TinkerError } from '../../../src/core/tinker/errors';
import type { Datum } from '../../../src/core/tinker/types';
import { RANDOM_MODEL } from '../../../src/engine/model/models';
import { sftDatum, useEngineClient } from './engineFixtures';

const DATA: Datum[] = [
  sftDatum('<|im_start|>user\n2+3=<|im_end|>\n<|im_start|>assistant\n5<|im_end|>'),
  sftDatum('<|im_start|>user\n4+4=<|im_end|>\n<|im_start|>assistant\n8<|im_end|>'),
  sftDatum('<|im_start|>user\n1+6=<|im_end|>\n<|im_start|>assistant\n7<|im_end|>'),
];

/** A loss no built-in loss computes: ½·mean_i (s_i − c_i)², s_i = Σ_t logp, with per-datum targets. */
const TARGETS = [-40, -80, -10];
const squaredLoss: CustomLossFn = (_data, lps) => {
  const n = lps.length;
  let loss = 0;
  const gradients = lps.map((lp, i) => {
    const s = lp.reduce((a, b) => a + b, 0);
    const r = s - TARGETS[i]!;
    loss += (0.5 * r * r) / n;
    return new Float64Array(lp.length).fill(r / n);
  });
  return { loss, gradients, metrics: { 'custom/first_sum': lps[0]!.reduce((a, b) => a + b, 0) } };
};

describe('forwardBackwardCustom (client loss, surrogate cross_entropy step) on the engine', function () {
  this.timeout(120_000);
  const engine = useEngineClient('tinker-custom-loss-');

  async function trueLoss(tc: Awaited<ReturnType<typeof engine.client.createLoraTrainingClient>>): Promise<number> {
    const out = await (await tc.forward(DATA, 'cross_entropy')).result();
    return squaredLoss(DATA, logprobsOf(out, DATA)).loss;
  }

  it('the surrogate gradient is the true loss gradient (finite differences through the engine)', async () => {
    const tc = await engine.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 3 });
    // move off the LoRA init (B = 0) so every adapter matrix has a gradient
    await (await tc.forwardBackward(DATA, 'cross_entropy')).result();
    await (await tc.optimStep({ learning_rate: 1e-2 })).result();

    const l0 = await trueLoss(tc);
    // the gradient's norm at these weights: lr 0 applies nothing and clears the gradients
    const probe = await tc.forwardBackwardCustom(DATA, squaredLoss);
    assert.ok(Math.abs(probe.loss - l0) <= 1e-9 * Math.max(1, Math.abs(l0)), `the loss of the custom pass ${probe.loss} is the loss of a forward ${l0}`);
    assert.strictEqual(probe.metrics.loss, probe.loss);
    assert.ok(Number.isFinite(probe.metrics['custom/first_sum']), 'the loss function metrics are returned');
    assert.strictEqual(probe.logprobs.length, DATA.length);
    const g = (await (await tc.optimStep({ learning_rate: 0 })).result()).metrics!['grad_norm:last']!;
    assert.ok(g > 0, `grad_norm ${g}`);

    // one gradient-descent step of size η chosen to lower L by about 1 %
    const eta = (0.01 * l0) / (g * g);
    const eps = 1e4 * g;
    await tc.forwardBackwardCustom(DATA, squaredLoss);
    const step = (await (await tc.optimStep({ learning_rate: eta * eps, beta1: 0, beta2: 0, eps, weight_decay: 0, grad_clip_norm: 0 })).result()).metrics!;
    assert.ok(Math.abs(step['grad_norm:last']! - g) <= 1e-3 * g, `the same gradient: ${step['grad_norm:last']} vs ${g}`);
    assert.ok(Math.abs(step['update_norm:last']! - eta * g) <= 2e-3 * eta * g, `the update is η·∇L: ‖Δθ‖ ${step['update_norm:last']} vs ${eta * g}`);
    const l1 = await trueLoss(tc);
    const predicted = -eta * g * g;
    const ratio = (l1 - l0) / predicted;
    console.log(`      L ${l0.toFixed(4)} → ${l1.toFixed(4)}: ΔL ${(l1 - l0).toExponential(4)}, −η‖∇L‖² ${predicted.toExponential(4)} (ratio ${ratio.toFixed(4)})`);
    assert.ok(Math.abs(ratio - 1) < 0.05, `ΔL / (−η‖∇L‖²) = ${ratio}`);
  });

  it('with the loss −Σ w·logp it is exactly the built-in cross_entropy', async () => {
    const ce: CustomLossFn = (data, lps) => ({
      loss: -lps.reduce((a, lp, i) => a + lp.reduce((b, x, t) => b + x * (data[i]!.loss_fn_inputs['weights']!.data[t] as number), 0), 0),
      gradients: lps.map((lp, i) => Float64Array.from(lp, (_, t) => -(data[i]!.loss_fn_inputs['weights']!.data[t] as number))),
    });
    const a = await engine.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 5 });
    const b = await engine.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 5 });
    const custom = await a.forwardBackwardCustom(DATA, ce);
    const builtin = await (await b.forwardBackward(DATA, 'cross_entropy')).result();
    assert.ok(Math.abs(custom.loss - builtin.metrics['loss:sum']!) < 1e-3, `${custom.loss} vs ${builtin.metrics['loss:sum']}`);
    const ga = (await (await a.optimStep({ learning_rate: 1e-3 })).result()).metrics!['grad_norm:last']!;
    const gb = (await (await b.optimStep({ learning_rate: 1e-3 })).result()).metrics!['grad_norm:last']!;
    assert.ok(Math.abs(ga - gb) <= 1e-5 * gb, `grad_norm ${ga} vs ${gb}`);
  });

  it('refuses a non-finite loss or gradient and a gradient of the wrong length before applying anything', async () => {
    const tc = await engine.client.createLoraTrainingClient(RANDOM_MODEL, { rank: 4, seed: 7 });
    await assert.rejects(tc.forwardBackwardCustom(DATA, (_d, lps) => ({ loss: NaN, gradients: lps })), (e: unknown) => e instanceof TinkerError && /custom loss is NaN/.test(e.message));
    await assert.rejects(tc.forwardBackwardCustom(DATA, (_d, lps) => ({ loss: 1, gradients: lps.map((lp) => lp.slice(1)) })), /gradient of datum 0 has/);
    await assert.rejects(tc.forwardBackwardCustom(DATA, (_d, lps) => ({ loss: 1, gradients: lps.map((lp) => Float64Array.from(lp, () => Infinity)) })), /is Infinity at token 0/);
    // nothing was applied: no gradient waits for the optimizer
    const m = (await (await tc.optimStep({ learning_rate: 1e-3 })).result()).metrics!;
    assert.strictEqual(m['grad_norm:last'], 0);
  });
});
