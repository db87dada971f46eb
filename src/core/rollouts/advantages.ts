// GRPO advantages and group statistics, as the tinker-cookbook computes them (grpo-reference §1.3,
// §3.1): per group, A_g = r_g − mean(r); no std normalisation, no clipping; computed in float32.

/** Centres each group's rewards on the group mean. `rewards_P_G[p][g]` → `advantages_P_G[p][g]`. */
export function computeAdvantages(rewards_P_G: readonly (readonly number[])[]): number[][] {
  return rewards_P_G.map((rewards_G) => {
    const r = Float32Array.from(rewards_G);
    let sum = 0;
    for (const v of r) sum = Math.fround(sum + v);
    const mean = r.length ? Math.fround(sum / r.length) : 0;
    return Array.from(r, (v) => Math.fround(v - mean));
  });
}

/** Every reward of the group compares exactly equal (no learning signal under GRPO). */
export function isConstantGroup(rewards_G: readonly number[]): boolean {
  return rewards_G.every((r) => r === rewards_G[0]);
}

export interface GroupBreakdown {
  /** fraction of groups whose rewards are not all equal */
  frac_mixed: number;
  /** all equal and ≥ 0.5 */
  frac_all_good: number;
  /** all equal and < 0.5 */
  frac_all_bad: number;
}

/** The env/all/by_group/frac_* metrics (threshold 0.5). */
export function groupBreakdown(rewards_P_G: readonly (readonly number[])[]): GroupBreakdown {
  const n = rewards_P_G.length;
  if (n === 0) return { frac_mixed: 0, frac_all_good: 0, frac_all_bad: 0 };
  let mixed = 0;
  let good = 0;
  let bad = 0;
  for (const g of rewards_P_G) {
    if (!isConstantGroup(g)) mixed++;
    else if ((g[0] ?? 0) >= 0.5) good++;
    else bad++;
  }
  return { frac_mixed: mixed / n, frac_all_good: good / n, frac_all_bad: bad / n };
}
