// A spec file's text (JSON, or YAML for the files that allow it) read into its value and the place of
// every field, so that a problem found in the value is reported at the line and column where it is
// written. JSON goes through the small scanner of jsonSyntax.ts; YAML through the `yaml` package
// (eemeli/yaml, YAML 1.2 core schema: `1e-3` is a number, keys must be unique), whose nodes carry
// their offsets.
import { isMap, isPair, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { findJsonSyntaxError, jsonPlaces, type JsonPlace } from './jsonSyntax';

export type SpecTextFormat = 'json' | 'yaml';

/** YAML for `*.yaml` / `*.yml`, JSON otherwise. */
export function specTextFormat(file: string): SpecTextFormat {
  return /\.ya?ml$/i.test(file) ? 'yaml' : 'json';
}

/** A syntax error at a 0-based offset of the text given (BOM included). */
export interface TextSyntaxError {
  offset: number;
  length: number;
  message: string;
}

export type PlacedText =
  | { ok: true; value: unknown; places: Map<string, JsonPlace>; /** offset of places in the text (a BOM) */ shift: number }
  | { ok: false; error: TextSyntaxError };

/** 1-based line and column of a 0-based offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/** Parses `text` and records where each value (and its key) stands, by path (JSON of the keys and indexes). */
export function parsePlacedText(text: string, format: SpecTextFormat): PlacedText {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const shift = text.length - body.length;
  const kind = format === 'yaml' ? 'a YAML mapping' : 'a JSON object';
  if (body.trim() === '') return { ok: false, error: { offset: 0, length: 0, message: `the file is empty (expected ${kind})` } };
  if (format === 'json') {
    const syntax = findJsonSyntaxError(body);
    if (syntax) return { ok: false, error: { offset: syntax.offset + shift, length: 1, message: `invalid JSON: ${syntax.message}` } };
    return { ok: true, value: JSON.parse(body), places: jsonPlaces(body), shift };
  }
  const doc = parseDocument(body, { prettyErrors: false, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) return { ok: false, error: { offset: err.pos[0] + shift, length: Math.max(1, err.pos[1] - err.pos[0]), message: `invalid YAML: ${err.message}` } };
  const places = new Map<string, JsonPlace>();
  const walk = (node: unknown, at: Array<string | number>, key?: JsonPlace['key']) => {
    const n = node as Node | null;
    const start = n?.range?.[0] ?? key?.offset ?? 0;
    places.set(JSON.stringify(at), { value: start, ...(key ? { key } : {}) });
    if (isMap(n)) {
      for (const item of n.items) {
        if (!isPair(item)) continue;
        const k = item.key;
        const name = isScalar(k) ? String(k.value) : String(k);
        const range = (k as Node | null)?.range;
        walk(item.value, [...at, name], range ? { offset: range[0], length: Math.max(1, range[1] - range[0]) } : undefined);
      }
    } else if (isSeq(n)) {
      n.items.forEach((item, i) => walk(item, [...at, i]));
    }
  };
  walk(doc.contents, []);
  return { ok: true, value: doc.toJS({ maxAliasCount: 100 }), places, shift };
}

/** The place of the field at `path`, or of the nearest enclosing value that is written. */
export function placeOf(places: Map<string, JsonPlace>, path: readonly PropertyKey[]): JsonPlace {
  for (let n = path.length; n >= 0; n--) {
    const found = places.get(JSON.stringify(path.slice(0, n).map((k) => (typeof k === 'number' ? k : String(k)))));
    if (found) return found;
  }
  return { value: 0 };
}
