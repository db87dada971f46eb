// The DPO loss (Rafailov et al. 2023, the cookbook's preference/train_dpo.py compute_dpo_loss) and its
// gradient with respect to each token's log-prob, for forwardBackwardCustom. Per pair i:
//   log π(x) = Σ_t w_t·logp_t over the completion's weighted tokens (weights 0/1: the sequence log-prob),
//   ρ_c = log π(chosen) − log π_ref(chosen),  ρ_r = log π(rejected) − log π_ref(rejected),
//   z_i = β·(ρ_c − ρ_r),  ℓ_i = −log σ(z_i);  L = mean_i ℓ_i.
//   ∂L/∂logp_{c,t} = −σ(−z_i)·β·w_t / N,  ∂L/∂logp_{r,t} = +σ(−z_i)·β·w_t / N.
// Metrics as the cookbook's: dpo_loss, accuracy (share of pairs with ρ_c > ρ_r), margin (mean of
// β·ρ_c − β·ρ_r), chosen_reward (mean β·ρ_c), rejected_reward (mean β·ρ_r), and num_pairs; plus
// chosen_nll, the chosen completions' mean NLL per token (mean over pairs of −Σ_t w_t·logp_t / Σ_t w_t).
// With a chosen-NLL weight α > 0 (the spec's `nll_weight`; 0, the cookbook's DPO, by default) the loss
// adds α·chosen_nll (Pang et al. 2024, "Iterative Reasoning Preference Optimization": DPO + NLL on the
// winners): ∂/∂logp_{c,t} gains −α·w_t / (N·Σ_t w_t). It keeps the chosen completions likely where DPO
// alone lowers both sides (pairs that differ in a token or two: "146" vs "144"); dpo_loss stays the
// DPO term alone, `loss` is the sum.
import type { CustomLossFn, CustomLossOutput } from '../tinker/customLoss';
import type { Datum } from '../tinker/types';

/** log σ(z), stable for large |z|. */
export function logSigmoid(z: number): number {
  return z >= 0 ? -Math.log1p(Math.exp(-z)) : z - Math.log1p(Math.exp(z));
}

/** σ(z), stable for large |z|. */
export function sigmoid(z: number): number {
  if (z >= 0) return 1 / (1 + Math.exp(-z));
  const e = Math.exp(z);
  return e / (1 + e);
}

/** Σ_t w_t·logp_t. */
export function weightedSum(logprobs: ArrayLike<number>, weights: ArrayLike<number>): number {
  if (logprobs.length !== weights.length) throw new Error(`${weights.length} weights but ${logprobs.length} log-probs`);
  let s = 0;
  for (let t = 0; t < weights.length; t++) s += logprobs[t]! * weights[t]!;
  return s;
}

/** One pair's inputs: the policy's per-token log-probs and weights of each side, and the reference's sequence log-probs. */
export interface DpoPairInput {
  chosenLogprobs: ArrayLike<number>;
  chosenWeights: ArrayLike<number>;
  rejectedLogprobs: ArrayLike<number>;
  rejectedWeights: ArrayLike<number>;
  /** log π_ref(chosen): Σ_t w_t·logp_ref,t over the same tokens */
  refChosen: number;
  refRejected: number;
}

export const DPO_METRIC_KEYS = ['dpo_loss', 'accuracy', 'margin', 'chosen_reward', 'rejected_reward', 'num_pairs', 'chosen_nll'] as const;
export type DpoMetrics = Record<(typeof DPO_METRIC_KEYS)[number], number>;

export interface DpoLossOutput {
  /** the DPO loss plus α·chosen_nll */
  loss: number;
  /** ∂L/∂logp per token of each pair's chosen and rejected completion */
  chosenGradients: Float64Array[];
  rejectedGradients: Float64Array[];
  metrics: DpoMetrics;
  /** per pair: β·ρ_c − β·ρ_r (the implicit reward margin) */
  margins: number[];
}

/** The DPO loss, its gradients and metrics over a batch of pairs. */
export function dpoLoss(pairs: readonly DpoPairInput[], beta: number, nllWeight = 0): DpoLossOutput {
  const n = pairs.length;
  if (n === 0) throw new Error('the DPO loss needs at least one pair');
  if (!(beta > 0)) throw new Error(`dpo_beta must be positive (got ${beta})`);
  if (!(nllWeight >= 0)) throw new Error(`nll_weight must be ≥ 0 (got ${nllWeight})`);
  let loss = 0;
  let chosenNll = 0;
  let correct = 0;
  let chosenReward = 0;
  let rejectedReward = 0;
  const chosenGradients: Float64Array[] = [];
  const rejectedGradients: Float64Array[] = [];
  const margins: number[] = [];
  for (const p of pairs) {
    const rc = weightedSum(p.chosenLogprobs, p.chosenWeights) - p.refChosen;
    const rr = weightedSum(p.rejectedLogprobs, p.rejectedWeights) - p.refRejected;
    const z = beta * (rc - rr);
    loss -= logSigmoid(z) / n;
    if (rc > rr) correct++;
    chosenReward += (beta * rc) / n;
    rejectedReward += (beta * rr) / n;
    margins.push(beta * rc - beta * rr);
    const k = (sigmoid(-z) * beta) / n;
    let wSum = 0;
    for (let t = 0; t < p.chosenWeights.length; t++) wSum += p.chosenWeights[t]!;
    const nll = wSum > 0 ? -weightedSum(p.chosenLogprobs, p.chosenWeights) / wSum : 0;
    chosenNll += nll / n;
    const a = wSum > 0 ? nllWeight / (n * wSum) : 0;
    chosenGradients.push(Float64Array.from(p.chosenWeights as ArrayLike<number>, (w) => -(k + a) * w));
    rejectedGradients.push(Float64Array.from(p.rejectedWeights as ArrayLike<number>, (w) => k * w));
  }
  const margin = margins.reduce((a, b) => a + b, 0) / n;
  return {
    loss: loss + nllWeight * chosenNll,
    chosenGradients,
    rejectedGradients,
    margins,
    metrics: { dpo_loss: loss, accuracy: correct / n, margin, chosen_reward: chosenReward, rejected_reward: rejectedReward, num_pairs: n, chosen_nll: chosenNll },
  };
}

/** The weights of a datum (its `weights` input), as numbers. */
export function datumWeights(d: Datum): ArrayLike<number> {
  const w = d.loss_fn_inputs['weights'];
  if (!w) throw new Error('a DPO datum needs weights');
  return w.data as ArrayLike<number>;
}

/**
 * The DPO loss as a custom loss over interleaved datums [chosen₀, rejected₀, chosen₁, …] (the cookbook's
 * layout), given the reference's sequence log-probs of each datum in the same order.
 * `onPairs` receives each pair's implicit reward margin (the pairs panel shows them).
 */
export function dpoCustomLoss(refSums: readonly number[], beta: number, onPairs?: (margins: number[]) => void, nllWeight = 0): CustomLossFn {
  return (data, logprobs): CustomLossOutput => {
    if (data.length % 2 !== 0) throw new Error(`DPO datums come in pairs (got ${data.length})`);
    if (refSums.length !== data.length) throw new Error(`${data.length} datums but ${refSums.length} reference log-probs`);
    const pairs: DpoPairInput[] = [];
    for (let i = 0; i < data.length; i += 2)
      pairs.push({
        chosenLogprobs: logprobs[i]!,
        chosenWeights: datumWeights(data[i]!),
        rejectedLogprobs: logprobs[i + 1]!,
        rejectedWeights: datumWeights(data[i + 1]!),
        refChosen: refSums[i]!,
        refRejected: refSums[i + 1]!,
      });
    const out = dpoLoss(pairs, beta, nllWeight);
    onPairs?.(out.margins);
    const gradients: Float64Array[] = [];
    for (let j = 0; j < pairs.length; j++) gradients.push(out.chosenGradients[j]!, out.rejectedGradients[j]!);
    return { loss: out.loss, gradients, metrics: { ...out.metrics } };
  };
}

/**
 * The reference's per-target log-probs from its prompt log-probs over the whole sequence: target t of a
 * datum (input tokens[:-1], targets tokens[1:]) is token t+1 of the sequence, whose prompt log-prob is
 * entry t+1 (entry 0, the first token's, is null).
 */
export function targetLogprobsFromPrompt(promptLogprobs: ReadonlyArray<number | null>, nTargets: number): Float64Array {
  if (promptLogprobs.length !== nTargets + 1) throw new Error(`${promptLogprobs.length} prompt log-probs for ${nTargets} targets (expected ${nTargets + 1})`);
  return Float64Array.from({ length: nTargets }, (_, t) => {
    const v = promptLogprobs[t + 1];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`the reference returned no log-prob for token ${t + 1}`);
    return v;
  });
}
