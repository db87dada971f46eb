// Top-K soft-target distillation (off-policy, the cookbook's distillation/train_off_policy.py): an SFT
// datum's (N,) targets become (N, K) — at each position the teacher's K most likely next tokens, read
// from its top-k prompt log-probs of the whole chat (teacher forcing), with weights the teacher's
// probabilities renormalised over those K tokens times the position's weight (the SFT datum's, so a
// chat still counts once: see datums.ts). Positions the chat does not train keep weight 0.
import type { SamplingClient } from '../tinker/client';
import { textInput } from '../tinker/types';
import type { SftDatum } from './datums';

/** What the sampler returns for `topk_prompt_logprobs`: per prompt token, its top (token, log-prob) pairs (null at position 0). */
export type TopKPromptLogprobs = ReadonlyArray<ReadonlyArray<readonly [number, number]> | null>;

/**
 * The datum with (N, K) soft targets from `topk`, the teacher's top-k prompt log-probs of the full
 * sequence (modelInput followed by the last target: N + 1 tokens). Position t of the datum predicts
 * token t + 1 of that sequence, so it takes entry t + 1. A position with fewer than K entries pads
 * with its first token at weight 0 (as the cookbook pads with log-prob −∞).
 */
export function softTargetDatum(d: SftDatum, topk: TopKPromptLogprobs, K: number, what = 'teacher'): SftDatum {
  if (!(Number.isInteger(K) && K >= 1)) throw new Error(`K must be a positive integer, got ${K}`);
  if ((d.k ?? 1) !== 1) throw new Error('the datum already has soft targets');
  const n = d.targetTokens.length;
  if (topk.length !== n + 1) throw new Error(`${what}: ${topk.length} top-k prompt log-prob entries for a sequence of ${n + 1} tokens`);
  const targets = new Array<number>(n * K);
  const weights = new Float32Array(n * K);
  for (let t = 0; t < n; t++) {
    const w = d.weights[t]!;
    const entries = topk[t + 1];
    if (w === 0 || !entries || entries.length === 0) {
      if (w !== 0) throw new Error(`${what}: no top-k log-probs at position ${t + 1}, which the chat trains`);
      // an untrained position: the chat's own token, weight 0
      for (let j = 0; j < K; j++) targets[t * K + j] = d.targetTokens[t]!;
      continue;
    }
    const top = entries.slice(0, K);
    // renormalise over the K tokens: exp(ℓ_j − max) / Σ exp(ℓ_i − max)
    let max = -Infinity;
    for (const [, lp] of top) if (lp > max) max = lp;
    let sum = 0;
    const p = top.map(([, lp]) => {
      const e = Number.isFinite(lp) ? Math.exp(lp - max) : 0;
      sum += e;
      return e;
    });
    if (!(sum > 0)) throw new Error(`${what}: the top-k log-probs at position ${t + 1} are not finite`);
    for (let j = 0; j < K; j++) {
      targets[t * K + j] = j < top.length ? top[j]![0] : top[0]![0];
      weights[t * K + j] = j < top.length ? (p[j]! / sum) * w : 0;
    }
  }
  return { modelInput: d.modelInput, targetTokens: targets, weights, truncated: d.truncated, k: K };
}

/** The teacher's top-K prompt log-probs of a datum's full sequence (one sampling request of one token, teacher forcing). */
export async function teacherTopK(teacher: Pick<SamplingClient, 'sample'>, d: SftDatum, K: number, signal?: AbortSignal): Promise<TopKPromptLogprobs> {
  const full = [...d.modelInput, d.targetTokens[d.targetTokens.length - 1]!];
  const r = await teacher.sample(textInput(full), { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 }, { promptLogprobs: true, topkPromptLogprobs: K, ...(signal ? { signal } : {}) });
  if (!r.topk_prompt_logprobs) throw new Error('the teacher\'s sampler returned no top-k prompt log-probs');
  return r.topk_prompt_logprobs;
}

/** Soft-target datums for `datums` from the teacher, at most `concurrency` requests at a time, in order. */
export async function softTargetDatums(
  teacher: Pick<SamplingClient, 'sample'>,
  datums: readonly SftDatum[],
  K: number,
  o: { concurrency?: number; signal?: AbortSignal; onDone?: (done: number) => void } = {},
): Promise<SftDatum[]> {
  const out = new Array<SftDatum>(datums.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < datums.length) {
      const i = next++;
      out[i] = softTargetDatum(datums[i]!, await teacherTopK(teacher, datums[i]!, K, o.signal), K, `teacher (datum ${i})`);
      o.onDone?.(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 16, datums.length) }, worker));
  return out;
}
