// "Compare Suites" data and the suite tables the CLI and the agent print: one result as a table of
// the suite's layers with intervals, and two results of the same suite version side by side, each
// entry with its paired difference (better positive), its interval and the gate's verdict — the
// second checkpoint playing the production model, through gate.ts (the registry's one definition).
import type { Estimate } from '../evals/results';
import { formatEstimate } from '../evals/table';
import { SuiteLayer, type SuiteResult } from './contract';
import { pairedEntryDifference, suiteVerdicts, type EntryVerdict, type GateEntry } from './gate';

export interface SuiteComparisonRow {
  entry: string;
  layer: SuiteLayer;
  metric: string;
  goal: GateEntry['goal'];
  gate?: GateEntry['gate'];
  a?: Estimate;
  b?: Estimate;
  n_a?: number;
  n_b?: number;
  /** a − b on the items both have, oriented so that better is positive */
  diff?: Estimate;
  paired_items?: number;
  verdict: EntryVerdict;
}

export interface SuiteComparison {
  suite: SuiteResult['suite'];
  /** the candidate */
  a: SuiteResult['checkpoint'];
  /** plays the production model */
  b: SuiteResult['checkpoint'];
  rows: SuiteComparisonRow[];
  /** every entry's gate passes */
  passed: boolean;
}

export class SuiteCompareError extends Error {}

const LAYERS = SuiteLayer.options;
const byLayer = <T extends { layer: SuiteLayer }>(xs: readonly T[]) => [...xs].sort((x, y) => LAYERS.indexOf(x.layer) - LAYERS.indexOf(y.layer));

/** Two results of the same suite version: a (candidate) against b (production), entry by entry, in layer order. */
export function compareSuiteResults(entries: readonly GateEntry[], a: SuiteResult, b: SuiteResult, opts: { resamples?: number; seed?: number } = {}): SuiteComparison {
  if (a.suite.version !== b.suite.version || a.suite.name !== b.suite.name)
    throw new SuiteCompareError(`the results are of different suites: ${a.suite.name} version ${a.suite.version} (${a.checkpoint.label}) and ${b.suite.name} version ${b.suite.version} (${b.checkpoint.label}); run the same suite on both`);
  const v = suiteVerdicts(entries, a, b, opts);
  const rows = entries.map((e, i): SuiteComparisonRow => {
    const ra = a.entries.find((x) => x.name === e.name);
    const rb = b.entries.find((x) => x.name === e.name);
    const verdict = v.entries[i]!;
    // a gate without non_inferiority computes no difference: the table shows it all the same
    const d = verdict.diff ? { diff: verdict.diff, items: verdict.paired_items! } : ra && rb ? pairedEntryDifference(ra, rb, opts) : undefined;
    return {
      entry: e.name,
      layer: e.layer,
      metric: e.metric,
      goal: e.goal,
      ...(e.gate ? { gate: e.gate } : {}),
      ...(ra ? { a: ra.estimate, n_a: ra.n } : {}),
      ...(rb ? { b: rb.estimate, n_b: rb.n } : {}),
      ...(d ? { diff: d.diff, paired_items: d.items } : {}),
      verdict,
    };
  });
  return { suite: a.suite, a: a.checkpoint, b: b.checkpoint, rows: byLayer(rows), passed: v.passed };
}

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd()).join('\n');
}

/** "non-inferiority δ 0.02, ≥ 0.6" */
export function gateText(g: GateEntry['gate']): string {
  if (!g) return '—';
  return [g.non_inferiority !== undefined ? `non-inferiority δ ${g.non_inferiority}` : '', g.min !== undefined ? `≥ ${g.min}` : '', g.max !== undefined ? `≤ ${g.max}` : ''].filter(Boolean).join(', ');
}

/** One result as a table of the suite's layers: each entry's metric with its 95 % interval and n. */
export function formatSuiteResult(r: SuiteResult): string {
  const head = ['layer', 'entry', 'metric', 'value [95% interval]', 'n'];
  const rows = byLayer(r.entries).map((e) => [e.layer, e.name, `${e.metric}${e.goal === 'minimize' ? ' (lower is better)' : ''}`, formatEstimate(e.estimate), String(e.n)]);
  const title = `suite ${r.suite.name} (version ${r.suite.version}) on ${r.checkpoint.label}${r.complete ? '' : ' — not finished: re-run to resume'}`;
  return `${title}\n${pad([head, ...rows])}`;
}

/** Two checkpoints side by side: A, B, the paired difference A − B (better positive) and the gate with B as production. */
export function formatSuiteComparison(c: SuiteComparison): string {
  const head = ['layer', 'entry', 'metric', 'A', 'B', 'A − B (better +) [95%]', 'items', 'gate', 'verdict'];
  const rows = c.rows.map((r) => [
    r.layer,
    r.entry,
    r.metric,
    formatEstimate(r.a),
    formatEstimate(r.b),
    r.diff ? formatEstimate(r.diff) : '—',
    r.paired_items !== undefined ? String(r.paired_items) : '—',
    gateText(r.gate),
    r.verdict.passed ? 'pass' : 'FAIL',
  ]);
  const reasons = c.rows.flatMap((r) => r.verdict.checks.filter((k) => !k.passed).map((k) => `  ${k.reason}`));
  return [
    `suite ${c.suite.name} (version ${c.suite.version})`,
    `A: ${c.a.label}`,
    `B: ${c.b.label} (as production)`,
    pad([head, ...rows]),
    `gate: ${c.passed ? 'passes' : 'fails'}${reasons.length ? `\n${reasons.join('\n')}` : ''}`,
  ].join('\n');
}
