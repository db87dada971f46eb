// The metrics.jsonl keys that code reads by name, under the cookbook's names (grpo-reference §3.1).
// The loops write them; the CLI, the views, the agent's report and the doctor read them from here.
export const METRIC = {
  reward: 'env/all/reward/total',
  testReward: 'test/env/all/reward/total',
  testCorrect: 'test/env/all/correct',
  testFormat: 'test/env/all/format',
  testEpisodes: 'test/env/all/total_episodes',
  fracMixed: 'env/all/by_group/frac_mixed',
  fracAllGood: 'env/all/by_group/frac_all_good',
  fracAllBad: 'env/all/by_group/frac_all_bad',
  fracTruncated: 'env/all/frac_truncated',
  acTokensPerTurn: 'env/all/ac_tokens_per_turn',
  obTokensPerTurn: 'env/all/ob_tokens_per_turn',
  klV1: 'optim/kl_sample_train_v1',
  klV2: 'optim/kl_sample_train_v2',
  entropy: 'optim/entropy',
  lr: 'optim/lr',
  timeTotal: 'time/total',
  trainNll: 'train_mean_nll',
  testNll: 'test/nll',
  /** cumulative tokens sent to forward_backward so far (GRPO: the datums' tokens; SFT: the batches' tokens) */
  tokensTrained: 'progress/tokens_trained',
  /** on-policy distillation: mean reverse KL of the samples to the teacher, per action token (teacher_kl/dataset_<i> per dataset) */
  teacherKl: 'teacher_kl',
  /** the KL penalty to a reference model (grpo-reference §1.7): mean log π_sampler − log π_reference per action token */
  klPolicyBase: 'kl_policy_base',
  /** this step's tokens per billing category (all models of the run: policy, teachers, references) */
  usageTrain: 'usage/train_tokens',
  usagePrefill: 'usage/prefill_tokens',
  usageCachedPrefill: 'usage/cached_prefill_tokens',
  usageSampled: 'usage/sampled_tokens',
  /** cumulative tokens of every category since the run began (resumes included) */
  usageTotal: 'usage/total_tokens',
  /** this step's estimated dollars, and the run's cumulative estimate (price table in the run's config) */
  costStep: 'cost/step_usd',
  costTotal: 'cost/total_usd',
  /** seconds this step's requests spent with the service's queue paused (capacity, rate limit) or the client paused on 402 */
  queuePaused: 'time/queue_paused',
} as const;

/** teacher_kl/dataset_<i>: a multi-teacher run's KL to each dataset's teacher. */
export const TEACHER_KL_OF = /^teacher_kl\/dataset_(\d+)$/;

/** The keys of an inline evaluator named `name` (a GRPO/SFT spec's `evals`): the holdout's shapes under test/<name>/. */
export const INLINE_EVAL_KEY = {
  reward: (name: string) => `test/${name}/env/all/reward/total`,
  passAt: (name: string, k: number) => `test/${name}/env/all/pass@${k}`,
  nll: (name: string) => `test/${name}/nll`,
} as const;

/** An inline evaluator as its metric keys show it: its name, kind and the k of its pass@k keys (ascending). */
export interface InlineEvalSeen {
  name: string;
  kind: 'sampling' | 'nll';
  passAt: number[];
}

const SAMPLING_KEY = /^test\/([A-Za-z0-9_][A-Za-z0-9_.-]*)\/env\/all\/(reward\/total|pass@(\d+))$/;
const NLL_KEY = /^test\/([A-Za-z0-9_][A-Za-z0-9_.-]*)\/nll$/;

/** The inline evaluators whose keys appear in `keys`, by name (the holdout's test/env/… is not one). */
export function inlineEvalsIn(keys: Iterable<string>): InlineEvalSeen[] {
  const byName = new Map<string, InlineEvalSeen>();
  const seen = (name: string, kind: InlineEvalSeen['kind']) => {
    let e = byName.get(name);
    if (!e) byName.set(name, (e = { name, kind, passAt: [] }));
    return e;
  };
  for (const k of keys) {
    const m = SAMPLING_KEY.exec(k);
    if (m && m[1] !== 'env') {
      const e = seen(m[1]!, 'sampling');
      if (m[3] !== undefined && !e.passAt.includes(Number(m[3]))) e.passAt.push(Number(m[3]));
      continue;
    }
    const n = NLL_KEY.exec(k);
    if (n) seen(n[1]!, 'nll');
  }
  for (const e of byName.values()) e.passAt.sort((a, b) => a - b);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
