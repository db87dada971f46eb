// What the suite panel shows, read from disk: the suite file (its current version), the result of each
// checkpoint for that version, why a result is stale, and for two checkpoints the gate's verdicts
// (core/suite/gate.ts, the same rules as the promotion gate; the second checkpoint plays production).
import type { Estimate as CoreEstimate } from '../../core/evals/results';
import type { SuiteGate, SuiteResult } from '../../core/suite/contract';
import type { Estimate } from '../../protocol/evalsProtocol';
import type { SuiteColumnView, SuiteRowView, SuiteSnapshot } from '../../protocol/suiteProtocol';
import { errorMessage } from '../../core/errors';

const view = (e: CoreEstimate): Estimate => ({ mean: e.value, ...(e.lo !== undefined ? { lo: e.lo } : {}), ...(e.hi !== undefined ? { hi: e.hi } : {}) });

/** The gate in words, as the table's column says it. */
export function gateText(g: SuiteGate | undefined): string {
  if (!g) return 'none';
  const parts: string[] = [];
  if (g.non_inferiority !== undefined) parts.push(`non-inferiority δ ${g.non_inferiority}`);
  if (g.min !== undefined) parts.push(`≥ ${g.min}`);
  if (g.max !== undefined) parts.push(`≤ ${g.max}`);
  return parts.join(' · ');
}

/** Reads the suite and the checkpoints' results into the panel's snapshot. */
export async function readSuiteSnapshot(suiteFile: string, checkpoints: readonly string[]): Promise<SuiteSnapshot> {
  const [{ loadSuite, readSuiteResult, resultStaleness }, { suiteVerdicts }] = await Promise.all([import('../../core/suite/store'), import('../../core/suite/gate')]);
  const suite = await loadSuite(suiteFile);
  const notes: string[] = [];
  const results: Array<SuiteResult | undefined> = [];
  const columns: SuiteColumnView[] = [];
  for (const checkpoint of checkpoints) {
    let result: SuiteResult | undefined;
    try {
      result = await readSuiteResult(suite, checkpoint);
    } catch (err) {
      notes.push(`The result of ${checkpoint} could not be read: ${errorMessage(err)}`);
    }
    results.push(result);
    const stale = result ? await resultStaleness(suite, checkpoint, result) : [];
    columns.push({ label: result?.checkpoint.label ?? checkpoint, path: checkpoint, hasResult: Boolean(result), complete: result?.complete ?? false, stale, ...(result ? { updated_at: result.updated_at } : {}) });
    if (!result) notes.push(`No result of suite ${suite.name} (version ${suite.version}) for ${checkpoint} yet: run the suite on it.`);
  }
  const verdicts = checkpoints.length === 2 && results[0] && results[1] ? suiteVerdicts(suite.entries, results[0], results[1]) : undefined;
  const rows: SuiteRowView[] = suite.entries.map((e, i) => {
    const v = verdicts?.entries[i];
    return {
      entry: e.name,
      layer: e.layer,
      metric: e.metric,
      goal: e.goal,
      gate: gateText(e.gate),
      values: results.map((r) => {
        const got = r?.entries.find((x) => x.name === e.name);
        return got ? { estimate: view(got.estimate), n: got.n } : null;
      }),
      ...(v
        ? {
            comparison: {
              ...(v.diff ? { diff: view(v.diff) } : {}),
              ...(v.paired_items !== undefined ? { items: v.paired_items } : {}),
              passed: v.passed,
              checks: v.checks.map((c) => ({ rule: c.rule, passed: c.passed, reason: c.reason })),
            },
          }
        : {}),
    };
  });
  return {
    type: 'snapshot',
    suite: { name: suite.name, version: suite.version, file: suite.file },
    columns,
    rows,
    ...(verdicts ? { passed: verdicts.passed } : {}),
    notes,
  };
}
