// How a zod issue reads in an error: `dataset.holdout.fraction: must be at most 0.5`, the field path then
// what is wrong in plain words, with "did you mean" for a misspelt field. Every spec kind, dataset
// record and run config speaks this way.
import * as z from 'zod';

type Issue = z.core.$ZodIssue;

/** `dataset.holdout.fraction: must be at most 0.5` — the field path, then what is wrong in plain words. */
export function formatIssue(issue: Issue, root?: z.core.$ZodType): string {
  const where = (extra: PropertyKey[] = []) => fieldPath([...issue.path, ...extra]);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `${where()}: is required`;
      return `${where()}: must be ${typeWord(issue.expected)}, not ${describeValue(issue.input)}`;
    case 'invalid_value':
      return `${where()}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} (got ${describeValue(issue.input)})`;
    case 'too_big': {
      const bound = String(issue.maximum);
      if (issue.origin === 'string') return `${where()}: must be at most ${bound} characters long`;
      if (issue.origin === 'array') return `${where()}: must have at most ${bound} items`;
      return `${where()}: must be ${issue.inclusive ? 'at most' : 'less than'} ${bound}`;
    }
    case 'too_small': {
      if (issue.message && !issue.message.startsWith('Too small')) return `${where()}: ${issue.message}`;
      const bound = String(issue.minimum);
      if (issue.origin === 'string') return issue.minimum === 1 ? `${where()}: must not be empty` : `${where()}: must be at least ${bound} characters long`;
      if (issue.origin === 'array') return issue.minimum === 1 ? `${where()}: must not be empty` : `${where()}: must have at least ${bound} items`;
      return `${where()}: must be ${issue.inclusive ? 'at least' : 'greater than'} ${bound}`;
    }
    case 'unrecognized_keys':
      return issue.keys
        .map((key) => {
          const known = root ? knownKeysAt(root, issue.path) : [];
          const near = nearestName(key, known);
          return `${where([key])}: unknown field${near ? ` (did you mean "${near}"?)` : ''}`;
        })
        .join('; ');
    default:
      return `${where()}: ${issue.message}`;
  }
}

/** `dataset.holdout.fraction`, `evals[1].name`: a field path as the messages write it. */
export function fieldPath(p: readonly PropertyKey[]): string {
  if (p.length === 0) return '(top level)';
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i === 0 ? '' : '.'}${String(k)}`)).join('');
}

function typeWord(expected: string): string {
  const words: Record<string, string> = {
    int: 'a whole number',
    number: 'a number',
    string: 'a string',
    boolean: 'true or false',
    object: 'an object',
    array: 'a list',
    record: 'an object',
  };
  return words[expected] ?? expected;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return String(v);
}

/** The field names the schema allows at an object path (for "did you mean"). */
function knownKeysAt(root: z.core.$ZodType, p: readonly PropertyKey[]): string[] {
  let schema: z.core.$ZodType = root;
  for (const key of p) {
    const inner = unwrap(schema);
    if (inner instanceof z.ZodArray && typeof key === 'number') {
      schema = inner.element;
      continue;
    }
    if (!(inner instanceof z.ZodObject) || typeof key !== 'string') return [];
    const next: z.core.$ZodType | undefined = inner.shape[key];
    if (next === undefined) return [];
    schema = next;
  }
  const obj = unwrap(schema);
  return obj instanceof z.ZodObject ? Object.keys(obj.shape) : [];
}

function unwrap(s: z.core.$ZodType): z.core.$ZodType {
  let cur = s;
  while (cur instanceof z.ZodOptional || cur instanceof z.ZodDefault) cur = cur.unwrap();
  return cur;
}

/** The known name within edit distance 2 of `key`, if one is that close. */
export function nearestName(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
