// The price table a user gives (the tinker.prices setting, a --prices file) over the shipped one: a
// model replaces the shipped model's prices, the rest stays; a value that is not a price table is
// refused naming where it came from and the field, never replaced by the defaults in silence.
import * as assert from 'assert';
import { DEFAULT_PRICES } from '../../../src/core/cost/defaultPrices';
import { pricesFrom, PriceTableError } from '../../../src/core/cost/priceSettings';
import { costOfUsage, PriceTableSchema } from '../../../src/core/cost/prices';

describe('price table settings', () => {
  it('the shipped table is a valid table with its date and source, and prices its models in every category', () => {
    assert.deepStrictEqual(PriceTableSchema.parse(DEFAULT_PRICES), DEFAULT_PRICES);
    assert.match(DEFAULT_PRICES.source, /^https:\/\/tinker-docs\.thinkingmachines\.ai\//);
    for (const model of Object.keys(DEFAULT_PRICES.models))
      assert.ok(costOfUsage(DEFAULT_PRICES, model, { train: 1e6, prefill: 1e6, cached_prefill: 1e6, sampled: 1e6 })! > 0, model);
  });

  it('an override replaces a model and the storage rate and keeps the rest', () => {
    const t = pricesFrom({ taken: '2026-11-28', models: { 'org/new-model': { prefill: 1, sample: 2, train: 3 } }, storage_usd_per_gb_month: 0.5 }, 'the tinker.prices setting');
    assert.strictEqual(t.taken, '2026-11-28');
    assert.strictEqual(t.source, DEFAULT_PRICES.source);
    assert.strictEqual(t.storage_usd_per_gb_month, 0.5);
    assert.deepStrictEqual(t.models['org/new-model'], { prefill: 1, sample: 2, train: 3 });
    for (const m of Object.keys(DEFAULT_PRICES.models)) assert.deepStrictEqual(t.models[m], DEFAULT_PRICES.models[m]);
    assert.deepStrictEqual(pricesFrom(undefined, 'x'), DEFAULT_PRICES);
  });

  it('a bad value names its origin and the field', () => {
    assert.throws(() => pricesFrom({ models: { 'Qwen/Qwen3-8B': { prefill: -1, sample: 1, train: 1 } } }, 'the tinker.prices setting'), (e: Error) => e instanceof PriceTableError && /^the tinker\.prices setting: models\.Qwen\/Qwen3-8B\.prefill: /.test(e.message));
    assert.throws(() => pricesFrom({ storage: 1 }, 'the tinker.prices setting'), /the tinker\.prices setting: .*storage/);
    assert.throws(() => pricesFrom({ taken: 'yesterday' }, 'prices.json'), /^PriceTableError: prices\.json: taken: /);
  });
});
