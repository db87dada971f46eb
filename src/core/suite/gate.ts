// The gate rules of a suite entry, as pure functions over two suite results: one definition shared by
// "Compare Suites" and the registry's promotion gate.
import { pairedComparison } from '../evals/stats';
import type { Estimate } from '../evals/results';
import type { MetricGoal, SuiteEntryResult, SuiteGate, SuiteLayer, SuiteResult } from './contract';

export interface GateEntry {
  name: string;
  layer: SuiteLayer;
  metric: string;
  goal: MetricGoal;
  gate?: SuiteGate;
}

export interface GateCheck {
  rule: 'non_inferiority' | 'min' | 'max' | 'result';
  passed: boolean;
  /** one line with the numbers behind the verdict */
  reason: string;
}

export interface EntryVerdict {
  entry: string;
  layer: SuiteLayer;
  metric: string;
  candidate?: Estimate;
  production?: Estimate;
  /** paired difference oriented so that better is positive, over the items both have */
  diff?: Estimate;
  paired_items?: number;
  checks: GateCheck[];
  passed: boolean;
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(4).replace(/0+$/, '').replace(/\.$/, ''));
const interval = (e: Estimate) => (e.lo !== undefined && e.hi !== undefined ? `${fmt(e.value)} [${fmt(e.lo)}, ${fmt(e.hi)}]` : fmt(e.value));

/** The paired difference (better positive) of `cand` against `prod` on the item ids both have. */
export function pairedEntryDifference(cand: SuiteEntryResult, prod: SuiteEntryResult, opts: { resamples?: number; seed?: number } = {}): { diff: Estimate; items: number } | undefined {
  const ids = Object.keys(cand.per_item).filter((id) => id in prod.per_item).sort();
  if (ids.length === 0) return undefined;
  const sign = cand.goal === 'minimize' ? -1 : 1;
  const a = ids.map((id) => sign * cand.per_item[id]!);
  const b = ids.map((id) => sign * prod.per_item[id]!);
  const r = pairedComparison(a, b, { resamples: opts.resamples, seed: opts.seed, permutations: 1 });
  return { diff: r.diff, items: ids.length };
}

/** One entry's verdict: every rule of its gate, against `production` when there is one. */
export function entryVerdict(entry: GateEntry, candidate: SuiteResult | undefined, production: SuiteResult | undefined, opts: { resamples?: number; seed?: number } = {}): EntryVerdict {
  const cand = candidate?.entries.find((e) => e.name === entry.name);
  const prod = production?.entries.find((e) => e.name === entry.name);
  const v: EntryVerdict = { entry: entry.name, layer: entry.layer, metric: entry.metric, checks: [], passed: true, ...(cand ? { candidate: cand.estimate } : {}), ...(prod ? { production: prod.estimate } : {}) };
  if (!cand) {
    v.checks.push({ rule: 'result', passed: false, reason: `${entry.name}: no result for the candidate` });
  } else {
    const g = entry.gate;
    if (g?.min !== undefined) {
      const ok = cand.estimate.value >= g.min;
      v.checks.push({ rule: 'min', passed: ok, reason: `${entry.name}: ${entry.metric} ${fmt(cand.estimate.value)} ${ok ? '≥' : '<'} ${fmt(g.min)} (floor)` });
    }
    if (g?.max !== undefined) {
      const ok = cand.estimate.value <= g.max;
      v.checks.push({ rule: 'max', passed: ok, reason: `${entry.name}: ${entry.metric} ${fmt(cand.estimate.value)} ${ok ? '≤' : '>'} ${fmt(g.max)} (ceiling)` });
    }
    if (g?.non_inferiority !== undefined) {
      if (!production) {
        v.checks.push({ rule: 'non_inferiority', passed: true, reason: `${entry.name}: no production model to compare with` });
      } else if (!prod) {
        v.checks.push({ rule: 'non_inferiority', passed: false, reason: `${entry.name}: no result for the production model` });
      } else {
        const d = pairedEntryDifference(cand, prod, opts);
        if (!d) {
          v.checks.push({ rule: 'non_inferiority', passed: false, reason: `${entry.name}: no items in common with the production model's result` });
        } else {
          v.diff = d.diff;
          v.paired_items = d.items;
          const lo = d.diff.lo ?? d.diff.value;
          const ok = lo >= -g.non_inferiority;
          const better = entry.goal === 'minimize' ? 'lower is better' : 'higher is better';
          v.checks.push({
            rule: 'non_inferiority',
            passed: ok,
            reason: `${entry.name}: ${entry.metric} ${interval(cand.estimate)} vs production ${interval(prod.estimate)}; paired difference ${interval(d.diff)} over ${d.items} items (${better}), lower bound ${fmt(lo)} ${ok ? '≥' : '<'} −${fmt(g.non_inferiority)}`,
          });
        }
      }
    }
  }
  v.passed = v.checks.every((c) => c.passed);
  return v;
}

/** Every entry's verdict; the gate passes when every one does. */
export function suiteVerdicts(entries: readonly GateEntry[], candidate: SuiteResult | undefined, production: SuiteResult | undefined, opts: { resamples?: number; seed?: number } = {}): { entries: EntryVerdict[]; passed: boolean } {
  const list = entries.map((e) => entryVerdict(e, candidate, production, opts));
  return { entries: list, passed: list.every((v) => v.passed) };
}
