// A spec file's problems where they are written: each with the line and column of the field (the
// property name, or the object that lacks a required field) or of the syntax error, for every kind
// alike and for the other spec files (sweeps, in JSON or YAML). Editors underline them; the messages
// are those a run gives, without the file name. Hints (kinds/hints.ts) take the same shape at severity 'info'.
import type { z } from 'zod';
import type { SpecDefinition } from './define';
import { formatIssue } from './issues';
import { lineColumn, parsePlacedText, placeOf, type PlacedText, type SpecTextFormat } from './placedText';
import type { JsonPlace } from './jsonSyntax';

export interface SpecDiagnostic {
  /** 1-based, as editors and `file:line:column` messages count */
  line: number;
  column: number;
  /** 0-based offset and length of what is underlined */
  offset: number;
  length: number;
  /** `dataset.holdout.fraction: must be at most 0.5` */
  message: string;
  /**
   * A rule across fields (base_url only with the custom backend, exactly one dataset source, …): what
   * the contributed JSON schema cannot say as the run says it, so an editor shows these besides its own.
   */
  rule: boolean;
  /** 'info': a hint (never blocks a run); absent: an error */
  severity?: 'info';
}

/** A diagnostic at `offset` (0-based, in `text`), with its line and column. */
export function diagnosticAt(text: string, offset: number, length: number, message: string, o: { rule?: boolean; severity?: 'info' } = {}): SpecDiagnostic {
  return { ...lineColumn(text, offset), offset, length, message, rule: o.rule ?? false, ...(o.severity ? { severity: o.severity } : {}) };
}

/** A diagnostic at the field `path` of a parsed text (its key when it has one, else its value). */
export function diagnosticAtPath(text: string, parsed: Extract<PlacedText, { ok: true }>, path: readonly PropertyKey[], message: string, o: { rule?: boolean; severity?: 'info'; value?: boolean } = {}): SpecDiagnostic {
  const place: JsonPlace = placeOf(parsed.places, path);
  const useKey = !o.value && place.key;
  const offset = (useKey ? place.key!.offset : place.value) + parsed.shift;
  const length = useKey ? place.key!.length : o.value ? valueLength(text, offset) : 1;
  return diagnosticAt(text, offset, length, message, o);
}

/** The length of the scalar written at `offset` (up to a separator), at least 1. */
function valueLength(text: string, offset: number): number {
  const m = /^("(?:[^"\\\n]|\\.)*"|[^,\]}\s#]+)/.exec(text.slice(offset, offset + 200));
  return Math.max(1, m ? m[0].length : 1);
}

/** Every problem of a text against `schema`, in the order a run reports them; [] when it is valid. */
export function schemaDiagnostics(schema: z.ZodType, text: string, format: SpecTextFormat = 'json'): SpecDiagnostic[] {
  const parsed = parsePlacedText(text, format);
  if (!parsed.ok) return [diagnosticAt(text, parsed.error.offset, parsed.error.length, parsed.error.message)];
  return issueDiagnostics(schema, text, parsed);
}

/** The schema's issues with a parsed text, each at its field. */
export function issueDiagnostics(schema: z.ZodType, text: string, parsed: Extract<PlacedText, { ok: true }>): SpecDiagnostic[] {
  const result = schema.safeParse(parsed.value, { reportInput: true });
  if (result.success) return [];
  const out: SpecDiagnostic[] = [];
  for (const issue of result.error.issues) {
    // an unknown field is underlined where it is written, each on its own
    const parts = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => ({ issue: { ...issue, keys: [k] }, path: [...issue.path, k] })) : [{ issue, path: issue.path }];
    for (const p of parts) out.push(diagnosticAtPath(text, parsed, p.path, formatIssue(p.issue, schema), { rule: p.issue.code === 'custom' }));
  }
  return out;
}

/** Every problem of a run spec's text (JSON), in the order a run reports them; [] when the spec is valid. */
export function specDiagnostics(def: Pick<SpecDefinition<z.ZodObject>, 'schema'>, text: string): SpecDiagnostic[] {
  return schemaDiagnostics(def.schema, text, 'json');
}
