// The tokens a GRPO run implies before it starts: per iteration, each group's prompt is prefilled once
// (one request samples the whole group), every sample is taken at max_tokens (an upper bound) and
// trained on whole (prompt + completion); a teacher or a KL reference scores every sample's sequence
// (prefill at its own model's rate).
import type { UsageEstimate } from '../cost/estimate';
import { addModelUsage, textTokensAssumption } from '../cost/estimate';
import type { UsageByModel } from '../tinker/usage';
import { loadPromptPool } from '../data/pool';
import type { KindEstimateOptions } from '../training/runKind';
import { meanOf as mean, messagesTokens } from '../training/estimateShapes';
import { specDatasets, type ResolvedGrpoSpec } from './spec';

export async function estimateGrpoRun(spec: ResolvedGrpoSpec, o: KindEstimateOptions): Promise<UsageEstimate> {
  const usage: UsageByModel = new Map();
  const assumptions = [
    `every completion at max_tokens (${spec.max_tokens}): an upper bound`,
    textTokensAssumption(spec.model),
    'a group\'s prompt is prefilled once per iteration (no prefix-cache hits counted)',
    'holdout evaluations and inline evals not counted',
  ];
  if (spec.env) assumptions.push(`an environment episode counted as one turn (up to ${spec.env.max_turns} turns: more)`);
  let groups = 0;
  for (const d of specDatasets(spec)) {
    const pool = await loadPromptPool(d.dataset, { specDir: o.specDir, seed: spec.seed, cacheDir: o.cacheDir, ...(o.signal ? { signal: o.signal } : {}), groundTruthOptional: true, ...(spec.env ? { environment: true } : {}) });
    const prompt = mean(pool.train.map((p) => messagesTokens(p.messages, spec.model)));
    const perIteration = d.groups_per_batch;
    const samples = spec.iterations * perIteration * spec.group_size;
    groups += spec.iterations * perIteration;
    addModelUsage(usage, spec.model, {
      prefill: spec.iterations * perIteration * prompt,
      sampled: samples * spec.max_tokens,
      train: samples * (prompt + spec.max_tokens),
    });
    // the teacher of these prompts, or the KL reference, reads every sampled sequence whole
    const scorer = d.teacher ?? ((spec.kl_penalty_coef ?? 0) > 0 ? spec.kl_reference : undefined);
    if (scorer) addModelUsage(usage, scorer.model ?? spec.model, { prefill: samples * (prompt + spec.max_tokens) });
    if (scorer && scorer.model === undefined) assumptions.push('a checkpoint teacher or reference is priced as the base model');
  }
  for (const u of usage.values()) for (const k of ['train', 'prefill', 'cached_prefill', 'sampled'] as const) u[k] = Math.round(u[k]);
  return { what: `GRPO run ${spec.name} (${spec.iterations} iterations, ${Math.round(groups / spec.iterations)} groups × ${spec.group_size} samples)`, usage, assumptions };
}
