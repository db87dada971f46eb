import * as assert from 'assert';
import { requestSeed } from '../../../src/core/rollouts/samplingSeed';

describe('sampling request seeds of a seeded run', () => {
  it('are fixed by (run seed, iteration, purpose, index), 32-bit, and distinct across them', () => {
    assert.strictEqual(requestSeed(3, 5, 'train', 9), requestSeed(3, 5, 'train', 9));
    const seen = new Set<number>();
    for (const run of [0, 1, 2])
      for (let it = 0; it < 20; it++)
        for (const purpose of ['train', 'eval'] as const)
          for (let k = 0; k < 64; k++) {
            const s = requestSeed(run, it, purpose, k);
            assert.ok(Number.isInteger(s) && s >= 0 && s <= 0xffffffff);
            seen.add(s);
          }
    assert.strictEqual(seen.size, 3 * 20 * 2 * 64, 'no two requests share a seed');
  });
});
