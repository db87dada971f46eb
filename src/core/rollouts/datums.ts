// Turning a sampled trajectory into a training datum exactly as the cookbook does
// (grpo-reference §1.5): the full sequence shifted by one; every sampled token, including the first
// and the final stop token, is a target carrying the sampler's log-prob and the trajectory's
// advantage; prompt targets get advantage 0 and placeholder log-prob 0. The mask is kept for metrics
// and never sent.

export interface RLDatum {
  /** full sequence without its last token */
  modelInput: number[];
  /** full sequence without its first token (int64 on the wire) */
  targetTokens: number[];
  /** sampler log-probs on action positions, 0 elsewhere (float32) */
  logprobs: Float32Array;
  /** the trajectory advantage on action positions, 0 elsewhere (float32) */
  advantages: Float32Array;
  /** 1 where the target is a sampled token (local only) */
  mask: Float32Array;
}

export function trajectoryToDatum(
  promptTokens: readonly number[],
  sampledTokens: readonly number[],
  sampledLogprobs: ArrayLike<number>,
  advantage: number,
): RLDatum {
  const m = promptTokens.length;
  const n = sampledTokens.length;
  if (m < 1) throw new Error('a datum needs at least one prompt token');
  if (n < 1) throw new Error('a datum needs at least one sampled token');
  if (sampledLogprobs.length !== n) {
    throw new Error(`sampled tokens and log-probs differ in length (${n} tokens, ${sampledLogprobs.length} log-probs)`);
  }
  const full = [...promptTokens, ...sampledTokens];
  const N = m + n - 1;
  const logprobs = new Float32Array(N);
  const advantages = new Float32Array(N);
  const mask = new Float32Array(N);
  for (let j = 0; j < n; j++) {
    const pos = m - 1 + j;
    logprobs[pos] = sampledLogprobs[j]!;
    advantages[pos] = advantage;
    mask[pos] = 1;
  }
  return { modelInput: full.slice(0, N), targetTokens: full.slice(1), logprobs, advantages, mask };
}

export interface SampleTrainKl {
  /** mean over action tokens of ℓ_samp − ℓ_train */
  kl_sample_train_v1: number;
  /** 0.5 · mean((ℓ_samp − ℓ_train)²) */
  kl_sample_train_v2: number;
  /** −mean(ℓ_samp) over action tokens */
  entropy: number;
}

/**
 * optim/kl_sample_train_v1|v2 and optim/entropy: token-weighted over the whole batch (all action
 * tokens concatenated), in float32, from the datums' sampler log-probs and the trainer's log-probs
 * returned by forward_backward (one array per datum, same length as the datum).
 */
export function sampleTrainKl(datums: readonly RLDatum[], trainLogprobs_D: readonly ArrayLike<number>[]): SampleTrainKl {
  if (datums.length !== trainLogprobs_D.length) {
    throw new Error(`${datums.length} datums but ${trainLogprobs_D.length} trainer log-prob arrays`);
  }
  let count = 0;
  let d1 = 0;
  let d2 = 0;
  let nll = 0;
  datums.forEach((d, i) => {
    const train = trainLogprobs_D[i]!;
    if (train.length !== d.mask.length) throw new Error(`datum ${i}: ${d.mask.length} positions but ${train.length} trainer log-probs`);
    for (let t = 0; t < d.mask.length; t++) {
      if (d.mask[t]! <= 0) continue;
      const diff = Math.fround(d.logprobs[t]! - train[t]!);
      d1 = Math.fround(d1 + diff);
      d2 = Math.fround(d2 + Math.fround(diff * diff));
      nll = Math.fround(nll - d.logprobs[t]!);
      count++;
    }
  });
  if (count === 0) return { kl_sample_train_v1: NaN, kl_sample_train_v2: NaN, entropy: NaN };
  return { kl_sample_train_v1: d1 / count, kl_sample_train_v2: (0.5 * d2) / count, entropy: nll / count };
}
