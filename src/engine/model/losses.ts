// The service-side losses of the Tinker protocol (§4.3, grpo-reference §2), per token and summed:
// each returns the loss and dL/dℓ for every position from the learner's log-probs ℓ of the targets.
import type { InputTensor, LossFn } from '../contract';

export interface LossInputs {
  /** per target (row-major over target_tokens' shape): learner log-prob of the target */
  logprobs: Float64Array;
  /** target_tokens' shape, (N,) or (N, K) (cross_entropy's top-K form); default (N,) */
  targetShape?: readonly number[];
  inputs: Record<string, InputTensor>;
  config: Record<string, number>;
}

export interface LossOut {
  loss: number;
  /** dL/dℓ per position */
  grad: Float64Array;
  elementwise: Float32Array;
}

function need(inputs: Record<string, InputTensor>, name: string, n: number, datum: number): InputTensor['data'] {
  const t = inputs[name];
  if (!t) throw new Error(`datum ${datum}: loss_fn_inputs.${name} is required by this loss`);
  if (t.data.length !== n) throw new Error(`datum ${datum}: loss_fn_inputs.${name} has ${t.data.length} values but the datum has ${n} targets`);
  return t.data;
}

const ALLOWED: Record<LossFn, string[]> = {
  cross_entropy: [],
  importance_sampling: [],
  ppo: ['clip_low_threshold', 'clip_high_threshold'],
  cispo: ['clip_low_threshold', 'clip_high_threshold'],
  dro: ['beta'],
};

export function checkLossConfig(loss: LossFn, config: Record<string, number>): void {
  for (const k of Object.keys(config)) {
    if (!ALLOWED[loss].includes(k)) throw new Error(`loss_fn_config key "${k}" is not accepted by ${loss} (accepted: ${ALLOWED[loss].join(', ') || 'none'})`);
  }
}

export function computeLoss(loss: LossFn, x: LossInputs, datum: number): LossOut {
  const n = x.logprobs.length;
  const lp = x.logprobs;
  const grad = new Float64Array(n);
  // elementwise losses in float64 while summing; reported as float32
  const el = new Float64Array(n);
  let total = 0;
  switch (loss) {
    case 'cross_entropy': {
      const w = need(x.inputs, 'weights', n, datum);
      const ts = x.targetShape ?? [n];
      const ws = x.inputs.weights!.shape;
      if (ts.length !== ws.length || ts.some((v, i) => v !== ws[i])) {
        throw new Error(`datum ${datum}: loss_fn_inputs.weights has shape (${ws.join(', ')}) but target_tokens has shape (${ts.join(', ')}); cross_entropy needs them equal`);
      }
      for (let t = 0; t < n; t++) {
        el[t] = -lp[t]! * w[t]!;
        grad[t] = -w[t]!;
      }
      break;
    }
    case 'importance_sampling':
    case 'ppo':
    case 'cispo':
    case 'dro': {
      const samp = need(x.inputs, 'logprobs', n, datum);
      const adv = need(x.inputs, 'advantages', n, datum);
      const lo = x.config.clip_low_threshold ?? (loss === 'cispo' ? 0 : 0.8);
      const hi = x.config.clip_high_threshold ?? (loss === 'cispo' ? 4 : 1.2);
      const beta = x.config.beta ?? 0.05;
      for (let t = 0; t < n; t++) {
        const A = adv[t]!;
        const ratio = Math.exp(lp[t]! - samp[t]!);
        if (loss === 'importance_sampling') {
          el[t] = -ratio * A;
          grad[t] = -ratio * A;
        } else if (loss === 'ppo') {
          const clipped = Math.min(Math.max(ratio, lo), hi);
          const unclippedTerm = ratio * A;
          const clippedTerm = clipped * A;
          el[t] = -Math.min(unclippedTerm, clippedTerm);
          // gradient flows only through the unclipped term when it is the minimum
          grad[t] = unclippedTerm <= clippedTerm ? -ratio * A : 0;
        } else if (loss === 'cispo') {
          const w = Math.min(Math.max(ratio, lo), hi);
          el[t] = -w * lp[t]! * A;
          grad[t] = -w * A;
        } else {
          const diff = lp[t]! - samp[t]!;
          el[t] = -(lp[t]! * A - 0.5 * beta * diff * diff);
          grad[t] = -(A - beta * diff);
        }
      }
      break;
    }
  }
  for (let t = 0; t < n; t++) total += el[t]!;
  return { loss: total, grad, elementwise: Float32Array.from(el) };
}
