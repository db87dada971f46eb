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
} as const;
