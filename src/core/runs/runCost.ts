// What a run has used and what it is estimated to cost, step by step: the run's meter (its clients
// count tokens per base model) is taken at each step's record and priced with the table in force;
// the cumulative figures continue from the run's metrics.jsonl on resume. The budget check before a
// step predicts that step from the last ones (cost/budget.ts).
import { METRIC } from '../../protocol/metricKeys';
import { checkBudget, predictNextStep, type Budget, type BudgetCheck, type Spent } from '../cost/budget';
import type { BudgetGate } from '../cost/sharedBudget';
import { costOfUsageByModel, PriceTableSchema, type PriceTable } from '../cost/prices';
import { DEFAULT_PRICES } from '../cost/defaultPrices';
import { emptyUsage, addUsage, usageTokens, type UsageMeter } from '../tinker/usage';
import { readMetricsRowsSync } from './runDirectory';

/** config.json's key for the price table a run's costs were estimated with (so they can be recomputed). */
export const PRICES_CONFIG_KEY = 'prices';

/** The table a run uses: the one the host gives, else the one its config.json recorded, else the shipped defaults. */
export function pricesInForce(given: PriceTable | undefined, config: Record<string, unknown> | undefined): PriceTable {
  if (given) return given;
  const recorded = PriceTableSchema.safeParse(config?.[PRICES_CONFIG_KEY]);
  return recorded.success ? recorded.data : DEFAULT_PRICES;
}

/** The spec's budget fields, or undefined when it sets none. */
export function budgetOf(spec: Budget): Budget | undefined {
  const b: Budget = {
    ...(spec.max_cost_usd !== undefined ? { max_cost_usd: spec.max_cost_usd } : {}),
    ...(spec.max_tokens_total !== undefined ? { max_tokens_total: spec.max_tokens_total } : {}),
  };
  return Object.keys(b).length ? b : undefined;
}

const num = (row: Record<string, unknown>, key: string): number | undefined => {
  const v = row[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

/** What the run spent before `step` and its last steps' cost and tokens, from metrics.jsonl (the last row of each step). */
export function spentBefore(runDir: string, step: number): Spent & { stepUsd: number[]; stepTokens: number[] } {
  const out = { usd: 0, tokens: 0, stepUsd: [] as number[], stepTokens: [] as number[] };
  if (step <= 0) return out;
  const byStep = new Map<number, Record<string, unknown>>();
  for (const row of readMetricsRowsSync(runDir)) if (row.step < step) byStep.set(row.step, row as Record<string, unknown>);
  for (const s of [...byStep.keys()].sort((a, b) => a - b)) {
    const row = byStep.get(s)!;
    const usd = num(row, METRIC.costStep);
    const tokens = [METRIC.usageTrain, METRIC.usagePrefill, METRIC.usageCachedPrefill, METRIC.usageSampled].map((k) => num(row, k));
    if (usd !== undefined) out.stepUsd.push(usd);
    if (tokens.some((t) => t !== undefined)) out.stepTokens.push(tokens.reduce<number>((a, t) => a + (t ?? 0), 0));
    out.usd = num(row, METRIC.costTotal) ?? out.usd;
    out.tokens = num(row, METRIC.usageTotal) ?? out.tokens;
  }
  return out;
}

export class RunCost {
  private spent: Spent;
  private readonly stepUsd: number[];
  private readonly stepTokens: number[];
  private readonly named = new Set<string>();
  /** a budget the run shares with others (a sweep's), asked after its own */
  gate: { run: string; gate: BudgetGate } | undefined;

  constructor(
    readonly meter: UsageMeter,
    readonly prices: PriceTable,
    public budget: Budget | undefined,
    before: ReturnType<typeof spentBefore>,
  ) {
    this.spent = { usd: before.usd, tokens: before.tokens };
    this.stepUsd = before.stepUsd;
    this.stepTokens = before.stepTokens;
  }

  /** Spent so far (estimate). */
  total(): Spent {
    return { ...this.spent };
  }

  /**
   * The step's usage/* and cost/* metrics from what the meter counted since the last step; `unpriced`
   * names models the table has no price for the first time they are met (their tokens are counted, not priced).
   */
  stepMetrics(): { metrics: Record<string, number>; unpriced: string[] } {
    const byModel = this.meter.take();
    const sum = emptyUsage();
    for (const u of byModel.values()) addUsage(sum, u);
    const tokens = usageTokens(sum);
    const cost = costOfUsageByModel(this.prices, byModel);
    this.spent = { usd: this.spent.usd + cost.usd, tokens: this.spent.tokens + tokens };
    this.stepUsd.push(cost.usd);
    this.stepTokens.push(tokens);
    const unpriced = cost.unpriced.filter((m) => !this.named.has(m));
    for (const m of unpriced) this.named.add(m);
    return {
      metrics: {
        [METRIC.usageTrain]: sum.train,
        [METRIC.usagePrefill]: sum.prefill,
        [METRIC.usageCachedPrefill]: sum.cached_prefill,
        [METRIC.usageSampled]: sum.sampled,
        [METRIC.usageTotal]: this.spent.tokens,
        [METRIC.costStep]: cost.usd,
        [METRIC.costTotal]: this.spent.usd,
      },
      unpriced,
    };
  }

  /** Whether the next step may start within the budget (its cost and tokens predicted from the last steps). */
  check(): BudgetCheck {
    const predicted = { usd: predictNextStep(this.stepUsd), tokens: predictNextStep(this.stepTokens) };
    const own = checkBudget(this.budget, this.spent, predicted);
    return own.ok && this.gate ? this.gate.gate.check(this.gate.run, this.spent, predicted) : own;
  }
}
