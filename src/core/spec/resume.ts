// A resumed run continues with the configuration it recorded (config.json), whatever its spec file
// says now: the spec a resume is given (a spec file read again, an agent's overrides on the recorded
// one) may change only how long the run goes and how often it saves or measures; any other field
// that differs is refused with the differences named, so a resume never trains a different run
// under the same name.
import { RunSpecError } from './text';

/** The fields every kind may change on resume: how often it saves, how long its checkpoints live, and its budget. */
export const RESUMABLE_RUN_FIELDS = ['save_every', 'ttl_seconds', 'max_cost_usd', 'max_tokens_total'] as const;

/**
 * Fields a run resolves at its start when the spec leaves them out (the model's learning rate, its
 * renderer) and records resolved: a given spec without them means that same default.
 */
const RESOLVED_AT_START = new Set(['learning_rate', 'renderer']);

export interface SpecDifference {
  field: string;
  recorded: unknown;
  given: unknown;
}

/** Where `given` differs from `recorded`, field by field (`$schema` aside; a left-out default resolved at start is no difference). */
export function specDifferences(recorded: Record<string, unknown>, given: Record<string, unknown>): SpecDifference[] {
  const fields = [...new Set([...Object.keys(recorded), ...Object.keys(given)])].filter((f) => f !== '$schema');
  const out: SpecDifference[] = [];
  for (const field of fields) {
    if (given[field] === undefined && RESOLVED_AT_START.has(field)) continue;
    if (canonical(recorded[field]) !== canonical(given[field])) out.push({ field, recorded: recorded[field], given: given[field] });
  }
  return out;
}

/**
 * The spec a resume continues with: the recorded one, with the `resumable` fields `given` changes.
 * Throws a RunSpecError naming every other difference (field: recorded vs given). `where` labels the
 * messages (the run's config.json).
 */
export function resumedSpec<S extends object>(recorded: S, given: S, resumable: readonly string[], where: string): { spec: S; changes: SpecDifference[] } {
  const diffs = specDifferences(recorded as Record<string, unknown>, given as Record<string, unknown>);
  const refused = diffs.filter((d) => !resumable.includes(d.field));
  if (refused.length > 0) {
    throw new RunSpecError([
      ...refused.map((d) => `${where}: ${d.field}: recorded ${shown(d.recorded)}, given ${shown(d.given)}`),
      `a resumed run continues with its recorded configuration; only ${resumable.join(', ')} may change on resume (start a new run to change the others)`,
    ]);
  }
  const spec = { ...recorded } as Record<string, unknown>;
  for (const d of diffs) spec[d.field] = d.given;
  return { spec: spec as S, changes: diffs };
}

/** `iterations 20 → 40, eval_every 0 → 5` */
export function changesText(changes: readonly SpecDifference[]): string {
  return changes.map((d) => `${d.field} ${shown(d.recorded)} → ${shown(d.given)}`).join(', ');
}

function shown(v: unknown): string {
  return v === undefined ? '(not set)' : JSON.stringify(v);
}

/** JSON with sorted keys and undefined fields left out: equal values give equal text. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  ) ?? 'undefined';
}
