// Integer axes (steps, iterations, tokens) get whole-number ticks in every chart: the metrics panel's
// iteration axis, the compare panel's step and tokens axes (src/protocol/axisTicks.ts).
import * as assert from 'assert';
import { INTEGER_INCRS, integerAxis, integerAxisTicks } from '../../../src/protocol/axisTicks';
import { mulberry32 } from '../../../src/core/data/prng';

describe('integer axis ticks', () => {
  it('a short run: 0, 1, 2, 3 — never 0.5 or 1.5', () => {
    assert.deepStrictEqual(integerAxisTicks(0, 3, 0.5), [0, 1, 2, 3]);
    assert.deepStrictEqual(integerAxisTicks(0, 1, 0.2), [0, 1]);
    assert.deepStrictEqual(integerAxisTicks(0, 0, 0.1), [0], 'one iteration');
    assert.deepStrictEqual(integerAxisTicks(0.3, 2.7, 0.5), [1, 2]);
  });

  it('longer runs keep a 1-2-5 step', () => {
    assert.deepStrictEqual(integerAxisTicks(0, 100, 20), [0, 20, 40, 60, 80, 100]);
    assert.deepStrictEqual(integerAxisTicks(0, 12, 2.5), [0, 5, 10]);
    assert.deepStrictEqual(integerAxisTicks(3, 11, 2), [4, 6, 8, 10]);
    assert.deepStrictEqual(integerAxisTicks(0, 2e6, 5e5), [0, 5e5, 1e6, 1.5e6, 2e6]);
  });

  it('every tick is a whole number within the range, for any range and increment', () => {
    const rand = mulberry32(11);
    for (let i = 0; i < 2000; i++) {
      const min = Math.floor(rand() * 50) - 5 + rand();
      const max = min + rand() * 10 ** (rand() * 6);
      const incr = 10 ** (rand() * 7 - 2);
      const ticks = integerAxisTicks(min, max, incr);
      for (const t of ticks) {
        assert.ok(Number.isInteger(t), `${t} in [${min}, ${max}] step ${incr}`);
        assert.ok(t >= min && t <= max);
      }
      assert.ok(ticks.length <= 1000);
    }
    assert.ok(INTEGER_INCRS.every((x) => Number.isInteger(x) && x >= 1));
    assert.deepStrictEqual(integerAxis.splits(undefined, 0, 0, 3, 0.5), [0, 1, 2, 3]);
  });
});
