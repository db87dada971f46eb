// The spec layer: a kind declares its own fields (zod, defaults included), its rules across fields
// and the fields that name files; the layer adds the fields every kind shares and the base_url rule,
// and gives back the same reading of its spec files as every other kind — JSON with syntax errors at
// their line and column, problems worded `<file>: <field>: <what is wrong>`, a name from the file
// when the spec gives none, relative paths resolved against the spec's folder and checked to exist,
// an agent's overrides on top (overrides.ts), the spec kept in a run's config.json, and the JSON
// schema contributed to the editor.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { checkBaseUrl, runFields, type RunFieldWords } from './fields';
import { fieldPath, formatIssue } from './issues';
import { defaultRunName, specKind, type SpecKind } from './kinds';
import { mergeSpec } from './overrides';
import { RESUMABLE_RUN_FIELDS } from './resume';
import { parseJsonWithPosition, readSpecText, RunSpecError } from './text';

/** What every kind's schema has: a name that may be left out. */
type Named = { name?: string | undefined };

/** A kind's spec ready to run: named, and every file path absolute. */
export type Resolved<T extends Named> = T & { name: string };

export interface LoadedSpec<R> {
  /** absolute path of the spec file */
  file: string;
  /** its folder, against which the spec's relative paths were resolved */
  dir: string;
  spec: R;
}

/** The fields every kind has (runFields), with a kind's own on top. */
export type SpecShape<F extends z.ZodRawShape> = ReturnType<typeof runFields> & F;
export type SpecSchema<F extends z.ZodRawShape> = z.ZodObject<SpecShape<F>, z.core.$strict>;

/** What a kind declares to the layer; the layer adds the shared fields and the base_url rule. */
export interface SpecDeclaration<F extends z.ZodRawShape> {
  kind: SpecKind;
  /** the kind's wording of the shared fields */
  words: RunFieldWords;
  /** the kind's own fields */
  fields: F;
  /** the kind's rules across fields (after the shared ones) */
  refine?: (spec: z.output<SpecSchema<F>>, ctx: z.core.$RefinementCtx) => void;
  /** what a spec of the kind is, for the JSON schema */
  describe: string;
  /** the fields that name files relative to the spec file, e.g. ['reward', 'file']; '*' stands for every item of an array (['evals', '*', 'grader', 'file']) */
  files: ReadonlyArray<readonly string[]>;
  /** the kind's fields a resume may change (how long the run goes, how often it measures); the layer adds save_every and ttl_seconds */
  resumable: ReadonlyArray<keyof F & string>;
}

export interface SpecDefinition<S extends z.ZodObject, T extends Named = z.output<S> & Named> {
  readonly kind: SpecKind;
  readonly schema: S;
  /** the fields a resumed run may be given anew (resume.ts): the rest must equal the recorded ones */
  readonly resumable: readonly string[];
  /** Parses and validates spec text; `fileLabel` prefixes every message. Throws RunSpecError. */
  parseText(text: string, fileLabel: string): T;
  /** Reads a spec file, validates it, names it and resolves its paths; checks the files it names exist. */
  parseFile(file: string): Promise<LoadedSpec<Resolved<T>>>;
  /** Validates a spec given as a value, as if it were the file `specFile` (relative paths resolve against its folder). */
  parseValue(value: unknown, specFile: string): Promise<LoadedSpec<Resolved<T>>>;
  /** A spec file's text with `overrides` on top (mergeSpec), validated as that file. */
  parseWithOverrides(text: string, specFile: string, overrides: Record<string, unknown>): Promise<LoadedSpec<Resolved<T>>>;
  /** Names the spec (from its file when it has no name) and makes its paths absolute. */
  resolve(spec: T, specFile: string): Resolved<T>;
  /** The spec stored in a run's config.json (its spec keys only). */
  fromConfig(config: unknown, file: string): Resolved<T>;
  /** The JSON schema contributed for the kind's files (draft-07, which VS Code's JSON support reads fully). */
  jsonSchema(): Record<string, unknown>;
}

export function defineSpec<F extends z.ZodRawShape>(decl: SpecDeclaration<F>): SpecDefinition<SpecSchema<F>> {
  type S = SpecSchema<F>;
  type T = z.output<S> & Named;
  const shape: SpecShape<F> = { ...runFields(decl.kind, decl.words), ...decl.fields };
  const schema: S = z
    .strictObject(shape)
    .superRefine((spec, ctx) => {
      checkBaseUrl(spec, ctx);
      decl.refine?.(spec, ctx);
    })
    .describe(decl.describe);
  const d = { ...decl, schema };
  const { label } = specKind(d.kind);
  const validate = (value: unknown, fileLabel: string): T => {
    const result = d.schema.safeParse(value, { reportInput: true });
    if (!result.success) throw new RunSpecError(result.error.issues.map((i) => `${fileLabel}: ${formatIssue(i, d.schema)}`));
    return result.data as T;
  };
  const resolve = (spec: T, specFile: string): Resolved<T> => {
    const dir = path.dirname(path.resolve(specFile));
    let out: unknown = spec;
    for (const field of filesIn(spec, d.files)) out = mapAt(out, field, (p) => path.resolve(dir, p));
    // mapAt replaces strings by strings along the declared paths: the spec keeps its type
    return { ...(out as T), name: spec.name ?? defaultRunName(specFile, d.kind) };
  };
  const load = async (raw: T, abs: string): Promise<LoadedSpec<Resolved<T>>> => {
    const spec = resolve(raw, abs);
    await checkSpecFiles(
      abs,
      filesIn(raw, d.files).map((f) => [fieldPath(f.map((k) => (/^\d+$/.test(k) ? Number(k) : k))), stringAt(raw, f), stringAt(spec, f)] as const),
    );
    return { file: abs, dir: path.dirname(abs), spec };
  };
  return {
    kind: d.kind,
    schema: d.schema,
    resumable: [...d.resumable, ...RESUMABLE_RUN_FIELDS],
    parseText: (text, fileLabel) => validate(parseJsonWithPosition(text, fileLabel), fileLabel),
    async parseFile(file) {
      const abs = path.resolve(file);
      const text = await readSpecText(abs);
      return load(validate(parseJsonWithPosition(text, path.basename(abs)), path.basename(abs)), abs);
    },
    parseValue: async (value, specFile) => load(validate(value, path.basename(specFile)), path.resolve(specFile)),
    async parseWithOverrides(text, specFile, overrides) {
      const fileLabel = path.basename(specFile);
      return load(validate(mergeSpec(parseJsonWithPosition(text, fileLabel), overrides), fileLabel), path.resolve(specFile));
    },
    resolve,
    fromConfig(config, file) {
      if (typeof config !== 'object' || config === null) throw new Error(`${file}: not a JSON object`);
      const keys = Object.keys(d.schema.shape);
      const picked = Object.fromEntries(Object.entries(config).filter(([k]) => keys.includes(k)));
      const r = d.schema.safeParse(picked);
      if (!r.success) throw new Error(`${file}: the stored ${label} spec is not valid: ${r.error.issues.map((i) => formatIssue(i, d.schema)).join('; ')}`);
      const spec = r.data as T;
      if (!spec.name) throw new Error(`${file}: the stored spec has no name`);
      return { ...spec, name: spec.name };
    },
    jsonSchema: () => specJsonSchema(d.schema),
  };
}

/** A schema as draft-07 JSON schema of what a file may hold (defaulted fields optional). */
export function specJsonSchema(schema: z.ZodObject): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    target: 'draft-07',
    io: 'input',
    override: ({ jsonSchema }) => {
      // integers carry the safe-integer range as bounds; noise in an editor's hover
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  });
}

/**
 * Throws a RunSpecError naming every file a spec names that is missing or not a file; each entry is
 * [field, the path as written, the path resolved] (undefined: the spec does not name that file).
 */
async function checkSpecFiles(specFile: string, entries: ReadonlyArray<readonly [string, string | undefined, string | undefined]>): Promise<void> {
  const label = path.basename(specFile);
  const missing: string[] = [];
  for (const [field, written, resolved] of entries) {
    if (written === undefined || resolved === undefined) continue;
    const st = await fs.stat(resolved).catch(() => undefined);
    if (!st) missing.push(`${label}: ${field}: file "${written}" not found (looked for ${resolved})`);
    else if (!st.isFile()) missing.push(`${label}: ${field}: "${written}" is not a file (${resolved})`);
  }
  if (missing.length > 0) throw new RunSpecError(missing);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The declared file fields with each '*' replaced by the indices of the array there in `v`. */
function filesIn(v: unknown, fields: ReadonlyArray<readonly string[]>): string[][] {
  const expand = (cur: unknown, rest: readonly string[], done: string[]): string[][] => {
    const star = rest.indexOf('*');
    if (star < 0) return [[...done, ...rest]];
    let at = cur;
    for (const key of rest.slice(0, star)) at = isRecord(at) ? at[key] : undefined;
    if (!Array.isArray(at)) return [];
    return at.flatMap((item, i) => expand(item, rest.slice(star + 1), [...done, ...rest.slice(0, star), String(i)]));
  };
  return fields.flatMap((f) => expand(v, f, []));
}

/** A copy of `v` with the string at `at` mapped by `fn` (the same value when nothing is there). */
function mapAt(v: unknown, at: readonly string[], fn: (s: string) => string): unknown {
  const [key, ...rest] = at;
  if (Array.isArray(v) && key !== undefined && /^\d+$/.test(key) && rest.length > 0) {
    const i = Number(key);
    return i < v.length ? v.map((item, j) => (j === i ? mapAt(item, rest, fn) : item)) : v;
  }
  if (key === undefined || !isRecord(v) || v[key] === undefined) return v;
  const cur = v[key];
  if (rest.length > 0) return { ...v, [key]: mapAt(cur, rest, fn) };
  return typeof cur === 'string' ? { ...v, [key]: fn(cur) } : v;
}

function stringAt(v: unknown, at: readonly string[]): string | undefined {
  let cur = v;
  for (const key of at) cur = isRecord(cur) ? cur[key] : Array.isArray(cur) && /^\d+$/.test(key) ? cur[Number(key)] : undefined;
  return typeof cur === 'string' ? cur : undefined;
}
