// The price table Tinker Studio ships: Tinker's list prices as its Models & Pricing page gave them on
// the day below, for the models whose prefill, sample and train prices were all found. A model left
// out is not guessed: its tokens are counted, and the cost says it is unpriced (the `tinker.prices`
// setting, or `--prices` for the CLI, adds it). The embedded engine's models cost 0 (prices.ts).
import type { PriceTable } from './prices';

export const DEFAULT_PRICES: PriceTable = {
  taken: '2026-10-07',
  source: 'https://tinker-docs.thinkingmachines.ai/tinker/models/models_and_pricing/ (cached prefill: the page\'s 80% discount on prefill)',
  models: {
    'Qwen/Qwen3-8B': { prefill: 0.195, cached_prefill: 0.039, sample: 0.6, train: 0.44 },
  },
  storage_usd_per_gb_month: 0.1,
};
