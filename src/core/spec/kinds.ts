// The kinds of run spec, in one table that the rest reads: file extension, label, unit, how a run of
// the kind starts, and the JSON schema contributed for it. Commands, wizards, CodeLenses, the CLI, the
// agent tools and the manifest (package.json, checked by a unit test) all take the kinds from here.
// Loaded at activation: no zod here (a kind's schema lives in its own spec module, see registry.ts).

export interface SpecKindInfo {
  /** also the CLI's subcommand: `tinker-studio <id> <spec>` */
  readonly id: string;
  /** how the product names runs of this kind */
  readonly label: string;
  /** the label with its article, for sentences: "a GRPO run" */
  readonly aRun: string;
  /** the spec file name ends in this (lower case) */
  readonly extension: string;
  /** what a run of the kind counts: GRPO iterations (batches) or SFT steps */
  readonly unit: { readonly one: string; readonly many: string };
  /** the run name when a spec file's name leaves none (e.g. `.grpo.json`) */
  readonly fallbackName: string;
  /** the command that starts a run of the kind (palette, CodeLens, checkpoints view) */
  readonly startCommand: string;
  /** the JSON schema built into dist/ and contributed for the extension's files */
  readonly schemaFile: string;
  /** a run of the kind executes the workspace's code (the reward function): not in an untrusted workspace */
  readonly runsWorkspaceCode: boolean;
}

export const SPEC_KINDS = [
  {
    id: 'grpo',
    label: 'GRPO',
    aRun: 'a GRPO run',
    extension: '.grpo.json',
    unit: { one: 'iteration', many: 'iterations' },
    fallbackName: 'run',
    startCommand: 'tinker.startGrpoRun',
    schemaFile: 'grpo-spec.schema.json',
    runsWorkspaceCode: true,
  },
  {
    id: 'sft',
    label: 'SFT',
    aRun: 'an SFT run',
    extension: '.sft.json',
    unit: { one: 'step', many: 'steps' },
    fallbackName: 'sft',
    startCommand: 'tinker.startSftRun',
    schemaFile: 'sft-spec.schema.json',
    runsWorkspaceCode: false,
  },
  {
    id: 'dpo',
    label: 'DPO',
    aRun: 'a DPO run',
    extension: '.dpo.json',
    unit: { one: 'step', many: 'steps' },
    fallbackName: 'dpo',
    startCommand: 'tinker.startDpoRun',
    schemaFile: 'dpo-spec.schema.json',
    runsWorkspaceCode: false,
  },
] as const satisfies readonly SpecKindInfo[];

/**
 * Spec files the layer reads and contributes a JSON schema for that are not a kind of run: a sweep
 * (many runs over a base run spec, src/core/experiments/sweepFile.ts) and an evaluation
 * (`*.eval.json`, src/core/evals/spec.ts: no model to train, no run directory; its results go to an
 * eval folder). Their schemas are contributed after the kinds' (package.json jsonValidation).
 */
export const OTHER_SPEC_FILES = [
  { id: 'sweep', label: 'sweep', extension: '.sweep.json', schemaFile: 'sweep.schema.json', runsWorkspaceCode: true },
  // startCommand: the extension activates on the workspace's files, whose menus run them (as a kind's)
  { id: 'eval', label: 'evaluation', extension: '.eval.json', schemaFile: 'eval-spec.schema.json', runsWorkspaceCode: true, startCommand: 'tinker.runEval' },
] as const;
export type OtherSpecFileId = (typeof OTHER_SPEC_FILES)[number]['id'];

/** A sweep file's name ends in one of these (lower case): JSON, or YAML (the JSON schema is contributed for the first). */
export const SWEEP_FILE_EXTENSIONS = ['.sweep.json', '.sweep.yaml', '.sweep.yml'] as const;

/** Whether `file` is named as a sweep file (`*.sweep.json`, `*.sweep.yaml`, `*.sweep.yml`). */
export function isSweepFile(file: string): boolean {
  const l = file.toLowerCase();
  return SWEEP_FILE_EXTENSIONS.some((e) => l.endsWith(e));
}

/** The workspace glob of sweep files, JSON and YAML. */
export const SWEEP_FILE_GLOB = '**/*.{sweep.json,sweep.yaml,sweep.yml}';

/** The evaluation spec's row of OTHER_SPEC_FILES. */
export const EVAL_SPEC_FILE = OTHER_SPEC_FILES[1];

/** Whether `file` is named as an eval spec (`*.eval.json`). */
export function isEvalSpecFile(file: string): boolean {
  return file.toLowerCase().endsWith(EVAL_SPEC_FILE.extension);
}

/** A kind of run spec (and of run): 'grpo', 'sft', … */
export type SpecKind = (typeof SPEC_KINDS)[number]['id'];

/** The kind of a spec file of no known extension, and of a run directory whose config.json names none (runs from before SFT). */
export const DEFAULT_SPEC_KIND: SpecKind = 'grpo';

export const SPEC_KIND_IDS: readonly SpecKind[] = SPEC_KINDS.map((k) => k.id);

/** A kind's row of the table, with its literal values (e.g. the unit 'iteration' | 'step'). */
export type SpecKindRow<K extends SpecKind = SpecKind> = Extract<(typeof SPEC_KINDS)[number], { id: K }>;

/** The table row of a kind. */
export function specKind<K extends SpecKind>(kind: K): SpecKindRow<K> {
  return SPEC_KINDS.find((k): k is SpecKindRow<K> => k.id === kind)!;
}

export function isSpecKind(v: unknown): v is SpecKind {
  return typeof v === 'string' && (SPEC_KIND_IDS as readonly string[]).includes(v);
}

/** The kind a spec file is by its name (`a.sft.json` → 'sft'), or undefined for any other file. */
export function specKindOfFile(file: string): SpecKind | undefined {
  const lower = file.toLowerCase();
  return SPEC_KINDS.find((k) => lower.endsWith(k.extension))?.id;
}

/** Whether `file` is named as a spec of `kind`. */
export function isSpecFileOf(file: string, kind: SpecKind): boolean {
  return specKindOfFile(file) === kind;
}

/** The workspace glob of a kind's spec files, e.g. `**\/*.grpo.json`. */
export function specGlob(kind: SpecKind): string {
  return `**/*${specKind(kind).extension}`;
}

/** The file-name pattern of a kind's spec files (package.json jsonValidation.fileMatch), e.g. `*.grpo.json`. */
export function specFileMatch(kind: SpecKind): string {
  return `*${specKind(kind).extension}`;
}

/** `*.grpo.json, *.sft.json`: the spec files of every kind, for messages. */
export function specFileMatches(sep = ', '): string {
  return SPEC_KIND_IDS.map(specFileMatch).join(sep);
}

/** The run name a spec file gives when the spec names none: its file name without the kind's extension. */
export function defaultRunName(file: string, kind: SpecKind = specKindOfFile(file) ?? DEFAULT_SPEC_KIND): string {
  const base = file.split(/[\\/]/).pop() ?? '';
  const ext = specKind(kind).extension;
  const stem = base.toLowerCase().endsWith(ext) ? base.slice(0, base.length - ext.length) : base.replace(/\.json$/i, '');
  const cleaned = stem.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.]+/, '');
  return cleaned === '' ? specKind(kind).fallbackName : cleaned;
}

// Kinds registered at run time (core/kinds/registry.ts registerKind: a test's kind) add their rows
// here, after the built-in ones; the manifest and the JSON schemas cover the built-in kinds only.
const registeredRows: SpecKindInfo[] = [];

/** Adds a registered kind's row (its id and extension unused by any other); returns its removal. */
export function addSpecKindRow(row: SpecKindInfo): () => void {
  const taken = allSpecKindRows().find((k) => k.id === row.id || k.extension === row.extension.toLowerCase());
  if (taken) throw new Error(`a kind "${row.id}" (${row.extension}) clashes with the kind "${taken.id}" (${taken.extension})`);
  registeredRows.push(row);
  return () => {
    const i = registeredRows.indexOf(row);
    if (i >= 0) registeredRows.splice(i, 1);
  };
}

/** Every kind's row: the built-in ones, then the registered ones. */
export function allSpecKindRows(): readonly SpecKindInfo[] {
  return [...SPEC_KINDS, ...registeredRows];
}

/** The row of any kind, built-in or registered; undefined for an id no kind has. */
export function specKindRowOf(id: string): SpecKindInfo | undefined {
  return allSpecKindRows().find((k) => k.id === id);
}

/** The row of a kind the product already looked up (a run of it exists); throws for an id no kind has. */
export function kindRow(id: string): SpecKindInfo {
  const row = specKindRowOf(id);
  if (!row) throw new Error(`no kind of run is called "${id}" (the kinds are ${allSpecKindRows().map((k) => `"${k.id}"`).join(', ')})`);
  return row;
}

/** The kind (built-in or registered) a spec file is by its name, or undefined for any other file. */
export function runKindIdOfFile(file: string): string | undefined {
  const lower = file.toLowerCase();
  return allSpecKindRows().find((k) => lower.endsWith(k.extension))?.id;
}

/**
 * The kind a run directory's config.json records (`run_kind`), built-in or registered; a config
 * with none is a GRPO run from before SFT; undefined when it names a kind this build does not have.
 */
export function runKindOfConfig(config: unknown): string | undefined {
  const recorded = typeof config === 'object' && config !== null ? (config as Record<string, unknown>).run_kind : undefined;
  if (recorded === undefined) return DEFAULT_SPEC_KIND;
  return typeof recorded === 'string' && specKindRowOf(recorded) ? recorded : undefined;
}

/** The kind of run a run directory's config.json records (`run_kind`; none: a GRPO run from before SFT). */
export function specKindOfConfig(config: unknown): SpecKind {
  const recorded = typeof config === 'object' && config !== null ? (config as Record<string, unknown>).run_kind : undefined;
  return isSpecKind(recorded) ? recorded : DEFAULT_SPEC_KIND;
}
