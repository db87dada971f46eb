// Each loss pinned to values worked out by hand from the formulas of tinker-protocol.md §4.3 (per
// token, summed; ratio = exp(ℓ − ℓ_samp)), with the clips active on both sides. The literals below
// are the hand computation; exp(±0.5) = 1.6487212707 / 0.6065306597, exp(0.1) = 1.1051709181.
import * as assert from 'assert';
import type { InputTensor, LossFn } from '../../../src/engine/contract';
import { computeLoss } from '../../../src/engine/model/losses';

const t = (xs: number[]): InputTensor => ({ dtype: 'float32', data: Float32Array.from(xs), shape: [xs.length] });

function run(loss: LossFn, lp: number[], inputs: Record<string, number[]>, config: Record<string, number> = {}) {
  const tensors: Record<string, InputTensor> = {};
  for (const [k, v] of Object.entries(inputs)) tensors[k] = t(v);
  return computeLoss(loss, { logprobs: Float64Array.from(lp), inputs: tensors, config }, 0);
}

function close(actual: ArrayLike<number> | number, expected: number[] | number, what: string): void {
  const a = typeof actual === 'number' ? [actual] : Array.from(actual);
  const e = typeof expected === 'number' ? [expected] : expected;
  assert.strictEqual(a.length, e.length, `${what}: length`);
  a.forEach((v, i) => assert.ok(Math.abs(v - e[i]!) < 1e-6, `${what}[${i}]: ${v}, expected ${e[i]}`));
}

describe('loss values pinned to hand-computed figures', () => {
  it('cross_entropy = −Σ w·ℓ (a sum, not a mean)', () => {
    const out = run('cross_entropy', [-0.5, -2, -1], { weights: [1, 0.5, 0] });
    close(out.elementwise, [0.5, 1, 0], 'elementwise');
    close(out.loss, 1.5, 'loss');
    close(out.grad, [-1, -0.5, 0], 'dL/dℓ');
  });

  it('importance_sampling = −Σ exp(ℓ − ℓ_samp)·A', () => {
    // ratios 1 and e^0.5
    const out = run('importance_sampling', [-1, -0.5], { logprobs: [-1, -1], advantages: [2, -1] });
    close(out.elementwise, [-2, 1.6487212707], 'elementwise');
    close(out.loss, -0.3512787293, 'loss');
    close(out.grad, [-2, 1.6487212707], 'dL/dℓ = −ratio·A');
  });

  it('ppo = −Σ min(ratio·A, clip(ratio, 0.8, 1.2)·A), the clip active above and below', () => {
    const out = run(
      'ppo',
      [-0.5, -1.5, -0.9, -0.5, -1.5],
      { logprobs: [-1, -1, -1, -1, -1], advantages: [1, -1, 2, -1, 1] },
      { clip_low_threshold: 0.8, clip_high_threshold: 1.2 },
    );
    // 0: ratio 1.649, A>0 → clipped at 1.2, no gradient
    // 1: ratio 0.607, A<0 → clipped at 0.8, no gradient
    // 2: ratio 1.105 inside the band → −ratio·A
    // 3: ratio 1.649, A<0 → the unclipped term is the minimum
    // 4: ratio 0.607, A>0 → the unclipped term is the minimum
    close(out.elementwise, [-1.2, 0.8, -2.2103418362, 1.6487212707, -0.6065306597], 'elementwise');
    close(out.loss, -1.5681512252, 'loss');
    close(out.grad, [0, 0, -2.2103418362, 1.6487212707, -0.6065306597], 'dL/dℓ');
  });

  it('ppo defaults to the 0.8 / 1.2 band', () => {
    const out = run('ppo', [-0.5, -1.5], { logprobs: [-1, -1], advantages: [1, -1] });
    close(out.elementwise, [-1.2, 0.8], 'elementwise');
  });

  it('cispo = −Σ sg(clip(ratio, lo, hi))·ℓ·A, the clip active on both sides', () => {
    const out = run('cispo', [-0.5, -2, -1], { logprobs: [-1, -1.5, -1], advantages: [1, 1, -2] }, { clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
    // weights clip(1.649) = 1.2, clip(0.607) = 0.8, 1
    close(out.elementwise, [0.6, 1.6, -2], 'elementwise');
    close(out.loss, 0.2, 'loss');
    close(out.grad, [-1.2, -0.8, 2], 'dL/dℓ = −w·A');
  });

  it('dro = −Σ (ℓ·A − ½·β·(ℓ − ℓ_samp)²)', () => {
    const out = run('dro', [-1, -0.5], { logprobs: [-1.5, -0.5], advantages: [2, -1] }, { beta: 0.1 });
    close(out.elementwise, [2.0125, -0.5], 'elementwise');
    close(out.loss, 1.5125, 'loss');
    close(out.grad, [-1.95, 1], 'dL/dℓ = −(A − β·(ℓ − ℓ_samp))');
  });

  it('the loss of several positions is the sum of the single-position losses', () => {
    const lp = [-0.3, -1.7, -0.9, -2.2];
    const inputs = { logprobs: [-0.5, -1.2, -1.1, -2], advantages: [0.7, -0.4, 1.3, -1.1] };
    const whole = run('importance_sampling', lp, inputs).loss;
    let parts = 0;
    for (let i = 0; i < lp.length; i++) parts += run('importance_sampling', [lp[i]!], { logprobs: [inputs.logprobs[i]!], advantages: [inputs.advantages[i]!] }).loss;
    close(whole, parts, 'sum over positions');
  });
});
