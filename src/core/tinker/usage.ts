// Token usage in the service's billing categories (the billing route's event types: training,
// sampling_prefill cached or not, sampling_sample), counted by the clients as they send requests, per
// base model (a teacher's or a reference model's prefill is billed at its own model's rate). A run
// owns one meter; the loop takes what was counted since the last step when it records a step.

/** Tokens of one model in each billing category. `prefill` is uncached prompt tokens; `cached_prefill` the prompt tokens billed as prefix-cache hits. */
export interface UsageCounts {
  train: number;
  prefill: number;
  cached_prefill: number;
  sampled: number;
}

export const USAGE_CATEGORIES = ['train', 'prefill', 'cached_prefill', 'sampled'] as const satisfies ReadonlyArray<keyof UsageCounts>;

export function emptyUsage(): UsageCounts {
  return { train: 0, prefill: 0, cached_prefill: 0, sampled: 0 };
}

export function addUsage(into: UsageCounts, c: Partial<UsageCounts>): UsageCounts {
  for (const k of USAGE_CATEGORIES) into[k] += c[k] ?? 0;
  return into;
}

export function usageTokens(c: UsageCounts): number {
  return c.train + c.prefill + c.cached_prefill + c.sampled;
}

/** Usage per base model. */
export type UsageByModel = Map<string, UsageCounts>;

/**
 * What a run's clients report their requests to. `take()` returns what was counted since the last
 * take (a step's usage) and starts a new count; `total()` what was counted since the meter was made.
 */
export class UsageMeter {
  private pending: UsageByModel = new Map();
  private readonly all: UsageByModel = new Map();

  add(model: string, c: Partial<UsageCounts>): void {
    for (const m of [this.pending, this.all]) {
      let u = m.get(model);
      if (!u) m.set(model, (u = emptyUsage()));
      addUsage(u, c);
    }
  }

  take(): UsageByModel {
    const out = this.pending;
    this.pending = new Map();
    return out;
  }

  total(): UsageByModel {
    return new Map([...this.all].map(([m, u]) => [m, { ...u }]));
  }
}
