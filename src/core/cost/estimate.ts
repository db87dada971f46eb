// The estimate of a whole job before it starts (a run, a sweep, an eval): the tokens its shapes imply
// in each billing category and model, priced by the table in force. The kinds and the eval say how
// many tokens their shapes make (their own estimate.ts); this prices them, adds them up and words
// them, assumptions included, so a person sees what the figure rests on.
import { addUsage, emptyUsage, usageTokens, type UsageByModel, type UsageCounts } from '../tinker/usage';
import { costOfUsageByModel, ENGINE_MODEL_PREFIX, formatUsd, type PriceTable } from './prices';

/** The tokens a job's shapes imply, before pricing. */
export interface UsageEstimate {
  /** what is estimated, e.g. `GRPO run arith: 20 iterations × 4 groups × 8 samples` */
  what: string;
  usage: UsageByModel;
  /** what the figure rests on, e.g. `completions at max_tokens (an upper bound)` */
  assumptions: string[];
}

export interface CostEstimate extends UsageEstimate {
  /** estimated dollars of the models the table prices */
  usd: number;
  tokens: number;
  /** models the table does not price (their tokens are not in `usd`) */
  unpriced: string[];
  /** the price table's date and source */
  prices: { taken: string; source: string };
}

export { DEFAULT_CONFIRM_COST_ABOVE_USD } from './budget';

/**
 * Tokens of a text for an estimate, without loading a tokenizer: the engine's models are byte-level
 * (one token per UTF-8 byte); for the others, characters ÷ 4 (rounded up).
 */
export function estimateTextTokens(text: string, model: string): number {
  if (model.startsWith(ENGINE_MODEL_PREFIX)) return Buffer.byteLength(text, 'utf8');
  return Math.ceil(text.length / 4);
}

/** The assumption estimateTextTokens makes, worded for `model`. */
export function textTokensAssumption(model: string): string {
  return model.startsWith(ENGINE_MODEL_PREFIX)
    ? `${model} is byte-level: one token per byte of text (chat template tokens not counted)`
    : `text tokens of ${model} estimated as characters ÷ 4 (its tokenizer is not loaded; chat template tokens not counted)`;
}

/** Adds `c` to `model`'s counts in `into`. */
export function addModelUsage(into: UsageByModel, model: string, c: Partial<UsageCounts>): UsageByModel {
  let u = into.get(model);
  if (!u) into.set(model, (u = emptyUsage()));
  addUsage(u, c);
  return into;
}

/** Several estimates as one (a sweep's runs, an eval's targets): their usage summed, their assumptions once each. */
export function combineEstimates(what: string, parts: readonly UsageEstimate[], assumptions: readonly string[] = []): UsageEstimate {
  const usage: UsageByModel = new Map();
  for (const p of parts) for (const [m, u] of p.usage) addModelUsage(usage, m, u);
  return { what, usage, assumptions: [...new Set([...assumptions, ...parts.flatMap((p) => p.assumptions)])] };
}

/** Prices an estimate with the table in force. */
export function priceEstimate(table: PriceTable, e: UsageEstimate): CostEstimate {
  const { usd, unpriced } = costOfUsageByModel(table, e.usage);
  const tokens = [...e.usage.values()].reduce((a, u) => a + usageTokens(u), 0);
  return { ...e, usd, tokens, unpriced, prices: { taken: table.taken, source: table.source } };
}

/** Whether a start flow asks before starting: the estimate is above the threshold, or a model is not priced at all. */
export function needsCostConfirmation(e: CostEstimate, thresholdUsd: number): boolean {
  return e.usd > thresholdUsd;
}

const millions = (n: number) => (n >= 1e6 ? `${Number((n / 1e6).toPrecision(3))} M` : n >= 1e3 ? `${Number((n / 1e3).toPrecision(3))} k` : String(Math.round(n)));

/** The headline: `Estimated cost: $1.23 (estimate) for 4.5 M tokens`. */
export function estimateHeadline(e: CostEstimate): string {
  const unpriced = e.unpriced.length ? `; not priced: ${e.unpriced.join(', ')} (set tinker.prices)` : '';
  return `Estimated cost of ${e.what}: ${formatUsd(e.usd)} (estimate) for ${millions(e.tokens)} tokens${unpriced}`;
}

/** The estimate in lines: the headline, tokens per model and category, the prices' date and source, the assumptions. */
export function estimateLines(e: CostEstimate): string[] {
  const lines = [estimateHeadline(e)];
  for (const [model, u] of [...e.usage].sort(([a], [b]) => a.localeCompare(b)))
    lines.push(`  ${model}: train ${millions(u.train)}, prefill ${millions(u.prefill)}, cached prefill ${millions(u.cached_prefill)}, sampled ${millions(u.sampled)}`);
  lines.push(`  prices taken ${e.prices.taken} (${e.prices.source})`);
  for (const a of e.assumptions) lines.push(`  assumes: ${a}`);
  return lines;
}
