// How a supervised run (SFT, DPO) walks its examples: the validation split, batches per epoch, the
// batch of each step (shuffled per epoch by the seed) and the run's length in steps.
import { holdoutCount } from '../data/pool';
import { mulberry32, shuffled } from '../data/prng';

/** The validation examples: the first round(fraction·n) of a shuffle by `seed`; train keeps file order. */
export function splitValidation<T>(items: readonly T[], fraction: number, seed: number): { train: T[]; validation: T[] } {
  const order = shuffled(
    items.map((_, i) => i),
    mulberry32(seed),
  );
  const k = holdoutCount(items.length, fraction);
  const held = new Set(order.slice(0, k));
  return { validation: order.slice(0, k).map((i) => items[i]!), train: items.filter((_, i) => !held.has(i)) };
}

/** Batches per epoch: the last partial batch is dropped (as the cookbook), but at least one batch. */
export function batchesPerEpoch(n: number, batchSize: number): number {
  return Math.max(1, Math.floor(n / batchSize));
}

/** The chats of global step `step`: epoch = ⌊step / nBatches⌋, the train set shuffled by (seed, epoch). */
export function batchAt<T>(train: readonly T[], step: number, batchSize: number, seed: number): { epoch: number; batch: number; items: T[] } {
  const n = batchesPerEpoch(train.length, batchSize);
  const epoch = Math.floor(step / n);
  const batch = step % n;
  const order = shuffled(train, mulberry32((seed ^ Math.imul(epoch + 1, 0x9e3779b1)) >>> 0));
  const size = Math.min(batchSize, order.length);
  return { epoch, batch, items: order.slice(batch * size, batch * size + size) };
}

/** The run's steps: `numEpochs` passes (default 1) unless only `maxSteps` is given; the smaller of the two. */
export function totalSteps(nTrain: number, c: { batchSize: number; numEpochs?: number | undefined; maxSteps?: number | undefined }): number {
  const byEpochs = c.numEpochs !== undefined || c.maxSteps === undefined ? batchesPerEpoch(nTrain, c.batchSize) * (c.numEpochs ?? 1) : Infinity;
  return Math.min(byEpochs, c.maxSteps ?? Infinity);
}
