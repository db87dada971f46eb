// forward_backward_custom (the Tinker docs' "Custom Loss Functions"): a loss that is any function of
// the per-token log-probs of the datums, computed in the client. A forward pass gives the log-probs;
// the loss function returns the loss, its gradient with respect to each log-prob, and metrics; then a
// cross_entropy forward_backward whose weights are −gradient applies it. The server's cross_entropy is
// −Σ w·logp (sum-reduced), so with w = −∂L/∂logp its parameter gradient is Σ ∂L/∂logp · ∂logp/∂θ =
// ∂L/∂θ at the current weights (the surrogate's value is not L, only its gradient is).
import { TinkerError } from './errors';
import type { Datum, ForwardBackwardOutput, TensorData } from './types';

/** What a custom loss returns: the loss, ∂loss/∂logprob for every target token of every datum, and metrics. */
export interface CustomLossOutput {
  loss: number;
  /** one array per datum, as long as its log-probs */
  gradients: readonly ArrayLike<number>[];
  metrics?: Record<string, number>;
}

/** A loss over the datums' per-token log-probs (one array per datum, in the datums' order). */
export type CustomLossFn = (data: readonly Datum[], logprobs: readonly Float64Array[]) => CustomLossOutput;

/** The answer of forwardBackwardCustom: the surrogate step's output, with the custom loss and its metrics. */
export interface CustomForwardBackwardOutput extends ForwardBackwardOutput {
  /** the custom loss at the weights of the forward pass */
  loss: number;
  /** the per-token log-probs the loss was computed on, per datum */
  logprobs: Float64Array[];
}

/** The part of a training client forwardBackwardCustom drives (TrainingClient has it). */
export interface ForwardBackwardClient {
  forward(data: Datum[], lossFn: 'cross_entropy', config?: Record<string, number>, signal?: AbortSignal): Promise<{ result(signal?: AbortSignal): Promise<ForwardBackwardOutput> }>;
  forwardBackward(data: Datum[], lossFn: 'cross_entropy', config?: Record<string, number>, signal?: AbortSignal): Promise<{ result(signal?: AbortSignal): Promise<ForwardBackwardOutput> }>;
}

function targetLength(d: Datum, i: number): number {
  const t = d.loss_fn_inputs['target_tokens'];
  if (!t) throw new TinkerError(`forwardBackwardCustom: datum ${i} has no target_tokens`);
  return t.data.length;
}

/** The datum with its weights replaced (the forward pass needs weights; any will do). */
function withWeights(d: Datum, weights: Float32Array): Datum {
  return { model_input: d.model_input, loss_fn_inputs: { ...d.loss_fn_inputs, weights: { dtype: 'float32', data: weights } satisfies TensorData } };
}

/** The per-datum log-probs of a forward(_backward) output, checked against the datums' lengths. */
export function logprobsOf(out: ForwardBackwardOutput, data: readonly Datum[]): Float64Array[] {
  if (out.loss_fn_outputs.length !== data.length) throw new TinkerError(`the server returned ${out.loss_fn_outputs.length} outputs for ${data.length} datums`);
  return out.loss_fn_outputs.map((o, i) => {
    const lp = o['logprobs'];
    if (!lp) throw new TinkerError(`the server returned no logprobs for datum ${i}`);
    const n = targetLength(data[i]!, i);
    if (lp.data.length !== n) throw new TinkerError(`datum ${i}: ${n} target tokens but ${lp.data.length} log-probs`);
    return Float64Array.from(lp.data as ArrayLike<number>);
  });
}

/**
 * Forward, the custom loss in the client, then the surrogate cross_entropy forward_backward (weights =
 * −gradient). Gradients accumulate on the server as any forward_backward's until the next optim_step.
 * The loss function's non-finite loss or gradient is refused before anything is applied.
 */
export async function forwardBackwardCustom(client: ForwardBackwardClient, data: Datum[], lossFn: CustomLossFn, signal?: AbortSignal): Promise<CustomForwardBackwardOutput> {
  if (data.length === 0) throw new TinkerError('forwardBackwardCustom needs at least one datum');
  const lengths = data.map(targetLength);
  const probe = data.map((d, i) => (d.loss_fn_inputs['weights'] ? d : withWeights(d, new Float32Array(lengths[i]!).fill(1))));
  const fwd = await (await client.forward(probe, 'cross_entropy', undefined, signal)).result(signal);
  const logprobs = logprobsOf(fwd, data);
  const out = lossFn(data, logprobs);
  if (!Number.isFinite(out.loss)) throw new TinkerError(`the custom loss is ${out.loss}`);
  if (out.gradients.length !== data.length) throw new TinkerError(`the custom loss returned ${out.gradients.length} gradients for ${data.length} datums`);
  const surrogate = data.map((d, i) => {
    const g = out.gradients[i]!;
    if (g.length !== lengths[i]) throw new TinkerError(`the custom loss's gradient of datum ${i} has ${g.length} entries for ${lengths[i]} log-probs`);
    const w = new Float32Array(g.length);
    for (let t = 0; t < g.length; t++) {
      const x = g[t]!;
      if (!Number.isFinite(x)) throw new TinkerError(`the custom loss's gradient of datum ${i} is ${x} at token ${t}`);
      // −0 would be harmless, but keeps tests' equality checks simple
      w[t] = x === 0 ? 0 : -x;
    }
    return withWeights(d, w);
  });
  const fb = await (await client.forwardBackward(surrogate, 'cross_entropy', undefined, signal)).result(signal);
  return { ...fb, metrics: { ...fb.metrics, ...(out.metrics ?? {}), loss: out.loss }, loss: out.loss, logprobs };
}
