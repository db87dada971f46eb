// Per-token advantages from a second model's log-probs of the sampled tokens, as the tinker-cookbook
// computes them:
//   - the KL penalty to a reference model (grpo-reference §1.7, rl/metrics.incorporate_kl_penalty):
//     δ_t = (ℓ_samp,t − ℓ_ref,t)·mask_t, δ̄ = Σδ / Σmask over the batch,
//     kl_adv_t = β·mask_t·(δ̄ − δ_t), optionally a discounted future sum; metric kl_policy_base = δ̄;
//   - on-policy distillation (distillation/train_on_policy.incorporate_kl_penalty): the reverse KL to
//     a teacher, kl_adv_t = −β·mask_t·(ℓ_samp,t − ℓ_teacher,t), not re-centred, optionally
//     discounted; metrics teacher_kl and teacher_kl/dataset_<i>.
// Both add kl_adv to the datum's advantages in place. The second model's log-probs come aligned with
// the datum's positions (position j scores target j), 0 where the mask is 0.
import type { RLDatum } from '../rollouts/datums';
import type { SequenceScorer } from '../training/teachers';

export const KL_METRIC = {
  policyBase: 'kl_policy_base',
  teacher: 'teacher_kl',
  teacherOf: (dataset: number) => `teacher_kl/dataset_${dataset}`,
} as const;

/** For each position t: Σ_{k≥0} γ^k·x[t+k] (one backward pass, float32 as the cookbook's tensors). */
export function discountedFutureSum(x: ArrayLike<number>, gamma: number): Float32Array {
  const out = new Float32Array(x.length);
  let running = 0;
  for (let t = x.length - 1; t >= 0; t--) {
    running = Math.fround(x[t]! + Math.fround(gamma * running));
    out[t] = running;
  }
  return out;
}

function checkAligned(datums: readonly RLDatum[], other_D: readonly ArrayLike<number>[], what: string): void {
  if (datums.length !== other_D.length) throw new Error(`${datums.length} datums but ${other_D.length} ${what} log-prob arrays`);
  datums.forEach((d, i) => {
    if (other_D[i]!.length !== d.mask.length) throw new Error(`datum ${i}: ${d.mask.length} positions but ${other_D[i]!.length} ${what} log-probs`);
  });
}

/** δ_t = (ℓ_samp,t − ℓ_other,t)·mask_t of one datum (float32). */
function maskedDiff(d: RLDatum, other: ArrayLike<number>): Float32Array {
  const out = new Float32Array(d.mask.length);
  for (let t = 0; t < out.length; t++) out[t] = d.mask[t]! > 0 ? Math.fround(Math.fround(d.logprobs[t]! - other[t]!) * d.mask[t]!) : 0;
  return out;
}

function addAdvantages(d: RLDatum, klAdv: Float32Array, gamma: number): void {
  const add = gamma > 0 ? discountedFutureSum(klAdv, gamma) : klAdv;
  for (let t = 0; t < add.length; t++) d.advantages[t] = Math.fround(d.advantages[t]! + add[t]!);
}

/**
 * §1.7: the KL penalty to a reference model, re-centred on the batch mean; adds it to each datum's
 * advantages and returns `kl_policy_base` (δ̄, NaN when the batch has no action token).
 */
export function applyReferenceKlPenalty(datums: readonly RLDatum[], refLogprobs_D: readonly ArrayLike<number>[], coef: number, discount: number): Record<string, number> {
  checkAligned(datums, refLogprobs_D, 'reference');
  const diffs = datums.map((d, i) => maskedDiff(d, refLogprobs_D[i]!));
  let sum = 0;
  let count = 0;
  datums.forEach((d, i) => {
    for (let t = 0; t < d.mask.length; t++) {
      sum = Math.fround(sum + diffs[i]![t]!);
      count = Math.fround(count + d.mask[t]!);
    }
  });
  const mean = count > 0 ? Math.fround(sum / count) : NaN;
  if (count > 0)
    datums.forEach((d, i) => {
      const kl = new Float32Array(d.mask.length);
      for (let t = 0; t < kl.length; t++) kl[t] = Math.fround(Math.fround(coef * d.mask[t]!) * Math.fround(mean - diffs[i]![t]!));
      addAdvantages(d, kl, discount);
    });
  return { [KL_METRIC.policyBase]: mean };
}

/**
 * On-policy distillation: adds −coef·mask·(ℓ_samp − ℓ_teacher) (discounted when discount > 0) to each
 * datum's advantages; `dataset_D[i]` is the dataset (and teacher) of datum i. Returns teacher_kl (the
 * batch's mean reverse KL per action token) and teacher_kl/dataset_<i> for each dataset present.
 */
export function applyTeacherKl(datums: readonly RLDatum[], teacherLogprobs_D: readonly ArrayLike<number>[], dataset_D: readonly number[], coef: number, discount: number): Record<string, number> {
  checkAligned(datums, teacherLogprobs_D, 'teacher');
  if (dataset_D.length !== datums.length) throw new Error(`${datums.length} datums but ${dataset_D.length} dataset indices`);
  const perDataset = new Map<number, { kl: number; n: number }>();
  let klSum = 0;
  let maskSum = 0;
  datums.forEach((d, i) => {
    const diff = maskedDiff(d, teacherLogprobs_D[i]!);
    const kl = new Float32Array(diff.length);
    let s = 0;
    let n = 0;
    for (let t = 0; t < diff.length; t++) {
      kl[t] = Math.fround(Math.fround(-coef * d.mask[t]!) * diff[t]!);
      s = Math.fround(s + diff[t]!);
      n = Math.fround(n + d.mask[t]!);
    }
    addAdvantages(d, kl, discount);
    const acc = perDataset.get(dataset_D[i]!) ?? { kl: 0, n: 0 };
    perDataset.set(dataset_D[i]!, { kl: acc.kl + s, n: acc.n + n });
    klSum += s;
    maskSum += n;
  });
  const metrics: Record<string, number> = { [KL_METRIC.teacher]: maskSum > 0 ? klSum / maskSum : NaN };
  for (const [k, { kl, n }] of [...perDataset].sort((a, b) => a[0] - b[0])) if (n > 0) metrics[KL_METRIC.teacherOf(k)] = kl / n;
  return metrics;
}

/**
 * A model's log-probs of the sampled tokens, aligned with the datum of (prompt ++ sampled): 0 on the
 * m − 1 prompt-target positions, then `sampled` (one per sampled token).
 */
export function alignToDatum(promptLength: number, sampled: readonly number[]): Float32Array {
  const out = new Float32Array(promptLength - 1 + sampled.length);
  out.set(sampled, promptLength - 1);
  return out;
}

/** The scorer's log-probs of the `sampled` tokens after `prompt` (the last sampled.length entries of compute_logprobs). */
export async function scoreSampled(scorer: SequenceScorer, prompt: readonly number[], sampled: readonly number[], signal?: AbortSignal): Promise<number[]> {
  const all = await scorer.computeLogprobs([...prompt, ...sampled], signal);
  if (all.length !== prompt.length + sampled.length) throw new Error(`compute_logprobs returned ${all.length} log-probs for ${prompt.length + sampled.length} tokens`);
  return all.slice(prompt.length).map((v, j) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`compute_logprobs returned no log-prob for sampled token ${j}`);
    return v;
  });
}
