// SFT datums (grpo-reference §3.4): the renderer's supervised example, cut to max_length, shifted by
// one (input = tokens[:-1], targets = tokens[1:]), its weights those of the targets divided by their
// sum (the cookbook's reduction "mean", so each chat counts once whatever its length). A weight is
// non-zero exactly on the tokens the chat trains. A datum with soft targets (top-K distillation,
// topK.ts) has K targets per position: target_tokens and weights of shape (N, K), row-major.
import type { Message, Renderer, TrainOnWhat } from '../render/types';
import { tensor2d } from '../tinker/tensors';
import { Datum, textInput } from '../tinker/types';

export interface SftDatum {
  modelInput: number[];
  /** N targets, or N·K (row-major) with `k` */
  targetTokens: number[];
  /** one per target */
  weights: Float32Array;
  /** targets per position when they are soft targets of shape (N, K); absent: (N,) */
  k?: number;
  /** the example was longer than max_length and cut */
  truncated: boolean;
}

/** A chat as a datum, or undefined when nothing is left to train on (e.g. cut before the answer). */
export function chatToDatum(renderer: Renderer, messages: readonly Message[], trainOnWhat: TrainOnWhat, maxLength?: number): SftDatum | undefined {
  const ex = renderer.buildSupervisedExample(messages, trainOnWhat);
  const truncated = maxLength !== undefined && ex.tokens.length > maxLength;
  const tokens = truncated ? ex.tokens.slice(0, maxLength) : ex.tokens;
  const w = truncated ? ex.weights.slice(0, maxLength) : ex.weights;
  if (tokens.length < 2) return undefined;
  const targetWeights = w.slice(1);
  const sum = targetWeights.reduce((a, b) => a + b, 0);
  if (sum <= 0) return undefined;
  return { modelInput: tokens.slice(0, -1), targetTokens: tokens.slice(1), weights: Float32Array.from(targetWeights, (x) => x / sum), truncated };
}

export function toWireSftDatum(d: SftDatum): Datum {
  if (d.k !== undefined) {
    const shape: [number, number] = [d.modelInput.length, d.k];
    return {
      model_input: textInput(d.modelInput),
      loss_fn_inputs: {
        target_tokens: tensor2d({ data: d.targetTokens, shape }, 'int64'),
        weights: tensor2d({ data: d.weights, shape }, 'float32'),
      },
    };
  }
  return {
    model_input: textInput(d.modelInput),
    loss_fn_inputs: {
      target_tokens: { dtype: 'int64', data: d.targetTokens },
      weights: { dtype: 'float32', data: d.weights },
    },
  };
}

/** −Σ(ℓ·w) / Σw over the batch, from the per-datum log-probs forward(_backward) returned. */
export function meanNll(datums: readonly SftDatum[], logprobs_D: readonly ArrayLike<number>[]): number {
  if (datums.length !== logprobs_D.length) throw new Error(`${datums.length} datums but ${logprobs_D.length} log-prob arrays`);
  let num = 0;
  let den = 0;
  datums.forEach((d, i) => {
    const lp = logprobs_D[i]!;
    if (lp.length !== d.weights.length) throw new Error(`datum ${i}: ${d.weights.length} positions but ${lp.length} log-probs`);
    for (let t = 0; t < d.weights.length; t++) {
      num -= lp[t]! * d.weights[t]!;
      den += d.weights[t]!;
    }
  });
  return den > 0 ? num / den : NaN;
}
