// Seeds of a run's sampling requests when the spec fixes `sampling_seed`: each request's seed is a
// hash of (run seed, iteration, train/eval, group or holdout index), so the same spec gives the same
// samples on a server that honours seeds (the local engine), whatever order requests are served in.
// The server derives each of a request's num_samples sequences from it and the sample's index.

export type SeedPurpose = 'train' | 'eval';

/** murmur3's 32-bit finaliser: every input bit moves every output bit */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The seed (0 … 2³²−1) of one sampling request of a seeded run. */
export function requestSeed(runSeed: number, iteration: number, purpose: SeedPurpose, index: number): number {
  let h = fmix32(runSeed >>> 0);
  h = fmix32((h ^ Math.imul(iteration + 1, 0x9e3779b1)) >>> 0);
  h = fmix32((h ^ (purpose === 'train' ? 0x5bd1e995 : 0x27d4eb2f)) >>> 0);
  return fmix32((h ^ Math.imul(index + 1, 0x68e31da4)) >>> 0);
}
