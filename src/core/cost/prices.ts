// The price table: dollars per million tokens in each billing category, per model of the lineup (and
// per context-length tier where the price list has tiers), and storage per GB-month. Shipped defaults
// carry the date they were taken and their source; the `tinker.prices` setting overrides them model
// by model; the embedded engine's models cost 0 unless a table prices them. Every figure made from it
// is an estimate, and says so.
import { z } from 'zod';
import type { UsageCounts, UsageByModel } from '../tinker/usage';

const usd = z.number().finite().min(0);

/** One model's prices, USD per million tokens. `cached_prefill` defaults to `prefill` when the list gives none. */
export const ModelPriceSchema = z
  .object({
    prefill: usd,
    cached_prefill: usd.optional(),
    sample: usd,
    train: usd,
    /** a longer context priced higher: the first tier whose `max_context` ≥ the request's context applies */
    tiers: z.array(z.object({ max_context: z.number().int().positive(), prefill: usd, cached_prefill: usd.optional(), sample: usd, train: usd }).strict()).optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

export const PriceTableSchema = z
  .object({
    /** the day the figures were taken (YYYY-MM-DD) */
    taken: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    source: z.string().min(1),
    models: z.record(z.string().min(1), ModelPriceSchema),
    storage_usd_per_gb_month: usd,
  })
  .strict();
export type PriceTable = z.infer<typeof PriceTableSchema>;

/** The `tinker.prices` setting: any part of a table; models merge over the defaults one by one. */
export const PriceOverrideSchema = z
  .object({
    taken: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
    source: z.string().min(1).optional(),
    models: z.record(z.string().min(1), ModelPriceSchema).optional(),
    storage_usd_per_gb_month: usd.optional(),
  })
  .strict();
export type PriceOverride = z.infer<typeof PriceOverrideSchema>;

/** The engine's models: free unless a table prices them. */
export const ENGINE_MODEL_PREFIX = 'tinker-studio/';

/** The price of `model` in `table` (exact name, then without an organisation prefix), or undefined when the table does not know it. */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  const exact = table.models[model];
  if (exact) return exact;
  const short = model.includes('/') ? model.slice(model.indexOf('/') + 1) : model;
  const byShort = Object.entries(table.models).find(([name]) => name === short || name.slice(name.indexOf('/') + 1) === short);
  if (byShort) return byShort[1];
  if (model.startsWith(ENGINE_MODEL_PREFIX)) return { prefill: 0, sample: 0, train: 0 };
  return undefined;
}

/** The table in force: the defaults with an override's models (and date, source, storage) over them. */
export function mergePrices(defaults: PriceTable, override: PriceOverride | undefined): PriceTable {
  if (!override) return defaults;
  return {
    taken: override.taken ?? defaults.taken,
    source: override.source ?? defaults.source,
    models: { ...defaults.models, ...(override.models ?? {}) },
    storage_usd_per_gb_month: override.storage_usd_per_gb_month ?? defaults.storage_usd_per_gb_month,
  };
}

function tierFor(p: ModelPrice, contextLength: number | undefined): Omit<ModelPrice, 'tiers'> {
  if (contextLength === undefined || !p.tiers?.length) return p;
  return [...p.tiers].sort((a, b) => a.max_context - b.max_context).find((t) => contextLength <= t.max_context) ?? p;
}

/** Dollars for one model's usage, or undefined when the table does not price the model. */
export function costOfUsage(table: PriceTable, model: string, u: UsageCounts, contextLength?: number): number | undefined {
  const p = priceOf(table, model);
  if (!p) return undefined;
  const t = tierFor(p, contextLength);
  return (u.train * t.train + u.prefill * t.prefill + u.cached_prefill * (t.cached_prefill ?? t.prefill) + u.sampled * t.sample) / 1e6;
}

export interface UsageCost {
  usd: number;
  /** models the table does not price (their usage is left out of `usd`) */
  unpriced: string[];
}

/** Dollars for usage over several models; models without a price are named, not guessed. */
export function costOfUsageByModel(table: PriceTable, byModel: UsageByModel, contextLength?: number): UsageCost {
  let usdTotal = 0;
  const unpriced: string[] = [];
  for (const [model, u] of byModel) {
    const c = costOfUsage(table, model, u, contextLength);
    if (c === undefined) unpriced.push(model);
    else usdTotal += c;
  }
  return { usd: usdTotal, unpriced: unpriced.sort() };
}

/** A month of storage for checkpoints of `bytes` in all. */
export function storageUsdPerMonth(table: PriceTable, bytes: number): number {
  return (bytes / 1e9) * table.storage_usd_per_gb_month;
}

/** "$4.92" — two decimals from a dollar up, three significant figures below (a step on a small model costs a fraction of a cent). */
export function formatUsd(usdValue: number): string {
  if (usdValue === 0) return '$0.00';
  if (Math.abs(usdValue) >= 1) return `$${usdValue.toFixed(2)}`;
  return `$${Number(usdValue.toPrecision(3))}`;
}
