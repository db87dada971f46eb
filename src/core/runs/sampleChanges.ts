// What changed between two sets of samples: the same holdout problem in two evaluations of a run,
// or the same prompt in two runs. Samples pair by a key (problem id, or rendered prompt) and their
// position among the samples with that key, so a group of G samples pairs sample by sample and a
// problem listed twice pairs first with first. Pure: the diff commands and the tests use it.
import type { SampleRecord } from '../../protocol/sampleSchema';

export interface SamplePair {
  /** the pairing key (problem id or prompt) */
  key: string;
  problemId: string;
  before: SampleRecord;
  after: SampleRecord;
}

export interface Pairing {
  /** in the order of `after` */
  pairs: SamplePair[];
  /** samples with no partner */
  onlyBefore: SampleRecord[];
  onlyAfter: SampleRecord[];
}

export type PairBy = 'problem' | 'prompt';

const keyOf = (by: PairBy) => (s: SampleRecord) => (by === 'problem' ? s.problem_id : s.prompt);

function bySampleOrder(a: SampleRecord, b: SampleRecord): number {
  return a.group_idx - b.group_idx || a.traj_idx - b.traj_idx;
}

/** Pairs the samples of `before` and `after` that share a key, k-th with k-th in sample order. */
export function pairSamples(before: readonly SampleRecord[], after: readonly SampleRecord[], by: PairBy = 'problem'): Pairing {
  const key = keyOf(by);
  const waiting = new Map<string, SampleRecord[]>();
  for (const s of [...before].sort(bySampleOrder)) {
    const list = waiting.get(key(s));
    if (list) list.push(s);
    else waiting.set(key(s), [s]);
  }
  const pairs: SamplePair[] = [];
  const onlyAfter: SampleRecord[] = [];
  for (const s of [...after].sort(bySampleOrder)) {
    const partner = waiting.get(key(s))?.shift();
    if (partner) pairs.push({ key: key(s), problemId: s.problem_id, before: partner, after: s });
    else onlyAfter.push(s);
  }
  const onlyBefore = [...waiting.values()].flat().sort(bySampleOrder);
  return { pairs, onlyBefore, onlyAfter };
}

/** Rewards closer than this count as unchanged (float noise of a reward function). */
export const REWARD_EPSILON = 1e-9;

export type Direction = 'improved' | 'regressed';

export interface RewardChange extends SamplePair {
  direction: Direction;
  /** after − before */
  delta: number;
}

/**
 * The pairs whose reward changed: improved first, then regressed; within each, the largest change
 * first, then sample order.
 */
export function rewardChanges(pairs: readonly SamplePair[]): RewardChange[] {
  const changed: RewardChange[] = [];
  for (const p of pairs) {
    const delta = p.after.reward - p.before.reward;
    if (Math.abs(delta) <= REWARD_EPSILON) continue;
    changed.push({ ...p, delta, direction: delta > 0 ? 'improved' : 'regressed' });
  }
  const rank = (c: RewardChange) => (c.direction === 'improved' ? 0 : 1);
  return changed.sort((a, b) => rank(a) - rank(b) || Math.abs(b.delta) - Math.abs(a.delta) || bySampleOrder(a.after, b.after));
}

/** A reward as the titles show it: up to 3 significant digits, no trailing zeros. */
export function formatReward(r: number): string {
  return Number.isInteger(r) ? String(r) : String(Number(r.toPrecision(3)));
}

/** "arith:12 · reward 0 → 1" */
export function changeTitle(c: Pick<SamplePair, 'problemId' | 'before' | 'after'>): string {
  return `${c.problemId} · reward ${formatReward(c.before.reward)} → ${formatReward(c.after.reward)}`;
}

/**
 * Which two evaluations to compare: by default the first and the latest; given one, it and the
 * latest (or the first, when it is the latest). Undefined with fewer than two evaluations.
 */
export function evaluationPair(evaluations: readonly number[], given?: { before?: number; after?: number }): { before: number; after: number } | undefined {
  const its = [...new Set(evaluations)].sort((a, b) => a - b);
  const first = its[0];
  const last = its.at(-1);
  if (first === undefined || last === undefined || first === last) return undefined;
  const { before, after } = given ?? {};
  if (before !== undefined && after !== undefined) return { before, after };
  if (before !== undefined) return before === last ? { before: first, after: last } : { before, after: last };
  if (after !== undefined) return after === first ? { before: first, after: last } : { before: first, after };
  return { before: first, after: last };
}

/** One line summing up a comparison: "3 improved, 1 regressed, 44 unchanged of 48 problems (2 only in one)". */
export function describeChanges(pairing: Pairing, changes: readonly RewardChange[]): string {
  const improved = changes.filter((c) => c.direction === 'improved').length;
  const regressed = changes.length - improved;
  const unpaired = pairing.onlyBefore.length + pairing.onlyAfter.length;
  return `${improved} improved, ${regressed} regressed, ${pairing.pairs.length - changes.length} unchanged of ${pairing.pairs.length} paired samples${unpaired ? ` (${unpaired} in only one of the two)` : ''}`;
}

/**
 * The samples of a run to compare with another run's: its latest holdout evaluation (the same
 * problems in every run using that holdout), else its latest training iteration.
 */
export function latestSampled(available: { train: readonly number[]; eval: readonly number[] }): { iteration: number; split: 'train' | 'eval' } | undefined {
  const ev = available.eval.at(-1);
  if (ev !== undefined) return { iteration: ev, split: 'eval' };
  const tr = available.train.at(-1);
  return tr === undefined ? undefined : { iteration: tr, split: 'train' };
}
