// The cookbook's trajectory metrics under env/all, in the order it logs them: totals, reward, step
// metrics (format, correct), frac_truncated, by_group.
export const TRAJECTORY_KEYS = [
  'env/all/ac_tokens_per_turn',
  'env/all/ob_tokens_per_turn',
  'env/all/turns_per_episode',
  'env/all/total_episodes',
  'env/all/total_turns',
  'env/all/total_ac_tokens',
  'env/all/total_ob_tokens',
  'env/all/reward/total',
  'env/all/format',
  'env/all/correct',
  'env/all/frac_truncated',
  'env/all/by_group/frac_mixed',
  'env/all/by_group/frac_all_good',
  'env/all/by_group/frac_all_bad',
];
