// A spec file's problems where they are written: each with the line and column of the field (the
// property name, or the object that lacks a required field) or of the JSON syntax error, for every
// kind alike. Editors underline them; the messages are those a run gives, without the file name.
import type { z } from 'zod';
import type { SpecDefinition } from './define';
import { formatIssue } from './issues';
import { findJsonSyntaxError, jsonPlaces, type JsonPlace } from './jsonSyntax';

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
}

/** Every problem of a spec text, in the order a run reports them; [] when the spec is valid. */
export function specDiagnostics(def: Pick<SpecDefinition<z.ZodObject>, 'schema'>, text: string): SpecDiagnostic[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const shift = text.length - body.length;
  const at = (offset: number, length: number, message: string, rule = false): SpecDiagnostic => {
    const before = text.slice(0, offset + shift);
    return { line: before.split('\n').length, column: offset + shift - (before.lastIndexOf('\n') + 1) + 1, offset: offset + shift, length, message, rule };
  };
  if (body.trim() === '') return [at(0, 0, 'the file is empty (expected a JSON object)')];
  const syntax = findJsonSyntaxError(body);
  if (syntax) return [at(syntax.offset, 1, `invalid JSON: ${syntax.message}`)];
  const result = def.schema.safeParse(JSON.parse(body), { reportInput: true });
  if (result.success) return [];
  const places = jsonPlaces(body);
  const out: SpecDiagnostic[] = [];
  for (const issue of result.error.issues) {
    // an unknown field is underlined where it is written, each on its own
    const parts = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => ({ issue: { ...issue, keys: [k] }, path: [...issue.path, k] })) : [{ issue, path: issue.path }];
    for (const p of parts) {
      const place = placeOf(places, p.path);
      out.push(at(place.key?.offset ?? place.value, place.key?.length ?? 1, formatIssue(p.issue, def.schema), p.issue.code === 'custom'));
    }
  }
  return out;
}

/** The place of the field at `path`, or of the nearest enclosing value that is written. */
function placeOf(places: Map<string, JsonPlace>, path: readonly PropertyKey[]): JsonPlace {
  for (let n = path.length; n >= 0; n--) {
    const found = places.get(JSON.stringify(path.slice(0, n).map((k) => (typeof k === 'number' ? k : String(k)))));
    if (found) return found;
  }
  return { value: 0 };
}
