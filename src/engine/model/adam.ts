// Adam as torch.optim.AdamW: bias-corrected moments, decoupled weight decay, optional clipping of the
// global gradient norm. Applies and clears the accumulated gradients.
import type { AdamParams } from '../contract';
import type { Params } from './gptWeights';

export interface AdamState {
  step: number;
  m: Params;
  v: Params;
}

export function newAdamState(params: Params): AdamState {
  const m: Params = new Map();
  const v: Params = new Map();
  for (const [k, p] of params) {
    m.set(k, new Float32Array(p.length));
    v.set(k, new Float32Array(p.length));
  }
  return { step: 0, m, v };
}

export function adamStep(params: Params, grads: Params, state: AdamState, a: AdamParams): Record<string, number> {
  let sq = 0;
  for (const g of grads.values()) for (let i = 0; i < g.length; i++) sq += g[i]! * g[i]!;
  const gradNorm = Math.sqrt(sq);
  const clip = a.gradClipNorm > 0 && gradNorm > a.gradClipNorm ? a.gradClipNorm / (gradNorm + 1e-6) : 1;
  state.step++;
  const bc1 = 1 - a.beta1 ** state.step;
  const bc2 = 1 - a.beta2 ** state.step;
  let updateSq = 0;
  for (const [k, p] of params) {
    const g = grads.get(k)!;
    const m = state.m.get(k)!;
    const v = state.v.get(k)!;
    for (let i = 0; i < p.length; i++) {
      const gi = g[i]! * clip;
      m[i] = a.beta1 * m[i]! + (1 - a.beta1) * gi;
      v[i] = a.beta2 * v[i]! + (1 - a.beta2) * gi * gi;
      const update = a.learningRate * ((m[i]! / bc1) / (Math.sqrt(v[i]! / bc2) + a.eps) + a.weightDecay * p[i]!);
      p[i] -= update;
      updateSq += update * update;
    }
    g.fill(0);
  }
  return { 'grad_norm:last': gradNorm, 'update_norm:last': Math.sqrt(updateSq), 'learning_rate:last': a.learningRate, 'clipped:last': clip < 1 ? 1 : 0 };
}
