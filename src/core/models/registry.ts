// The model registry's file: one `tinker-models.json` per workspace (meant to be committed), the source
// of truth for which checkpoint is which model version and in which status. MODELS.md is generated
// from it. Every byte read goes through these schemas.
import * as path from 'node:path';
import * as z from 'zod';
import { Estimate } from '../evals/results';
import { MetricGoal, SuiteLayer } from '../suite/contract';

export const REGISTRY_FILE = 'tinker-models.json';
export const MODELS_MD = 'MODELS.md';

/** Statuses in their order; a model version moves along it (retired ends it, unless promoted again). */
export const MODEL_STATUSES = ['candidate', 'staging', 'production', 'retired'] as const;
export const ModelStatus = z.enum(MODEL_STATUSES);
export type ModelStatus = z.infer<typeof ModelStatus>;

export const MODEL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const ModelName = z.string().regex(MODEL_NAME_RE, { message: 'a model name is letters, digits, ".", "_" or "-", starting with a letter or digit' });

/** Who made a change: the OS user, and git's user.name where the workspace has one. */
export const Actor = z.object({ os_user: z.string(), git_user: z.string().optional() });
export type Actor = z.infer<typeof Actor>;

/** One change of status, kept forever. */
export const StatusChange = z.object({
  status: ModelStatus,
  at: z.string(),
  by: Actor,
  reason: z.string().optional(),
  /** promoted to production past a refusing gate ("Promote Anyway"); `reason` is the written reason */
  anyway: z.boolean().optional(),
  /** the gate's refusals at that moment (for an "anyway" promotion), or its passing lines */
  gate: z.array(z.string()).optional(),
});
export type StatusChange = z.infer<typeof StatusChange>;

/** One run of the training recipe, oldest first (SFT → GRPO …). */
export const RecipeRun = z.object({
  /** the run kind recorded in its config.json (grpo, sft, dpo, or a registered kind) */
  kind: z.string(),
  /** the run folder, relative to the registry file's folder */
  run_dir: z.string().optional(),
  name: z.string().optional(),
  learning_rate: z.number().optional(),
  lr_schedule: z.string().optional(),
  /** steps (iterations) the run logged */
  steps: z.number().int().nonnegative().optional(),
  /** what it planned (iterations / max_steps / num_epochs) as recorded in its config */
  planned: z.string().optional(),
  /** the weights it started from (load_checkpoint_path), when a warm start */
  load_checkpoint_path: z.string().optional(),
  /** the state checkpoint it ended with */
  checkpoint: z.string().optional(),
});
export type RecipeRun = z.infer<typeof RecipeRun>;

/** A data file the recipe trained or held out on, as it was when registered. */
export const DataFileSummary = z.object({
  /** relative to the registry file's folder */
  file: z.string(),
  /** which run read it and under which field (e.g. "sft dataset.path") */
  used_as: z.string(),
  lines: z.number().int().nonnegative().optional(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /** why there are no figures (the file is gone, a Hugging Face dataset) */
  note: z.string().optional(),
});
export type DataFileSummary = z.infer<typeof DataFileSummary>;

/** One suite entry's figures on this version (copied from the suite result when the gate read it). */
export const SuiteEntrySnapshot = z.object({
  name: z.string(),
  layer: SuiteLayer,
  metric: z.string(),
  goal: MetricGoal,
  estimate: Estimate,
  n: z.number().int().nonnegative(),
});

/** The suite results a version has, per suite version: what the card and MODELS.md show. */
export const SuiteSnapshot = z.object({
  suite: z.object({ name: z.string(), version: z.string(), file: z.string() }),
  checkpoint: z.string(),
  complete: z.boolean(),
  /** when the result was made (the suite result's updated_at) */
  at: z.string(),
  entries: z.array(SuiteEntrySnapshot),
});
export type SuiteSnapshot = z.infer<typeof SuiteSnapshot>;

/** A version written out of Tinker: an export folder (its sha256: sha256 of its sha256sum listing) and where it was published. */
export const ExportRecord = z.object({
  at: z.string(),
  /** the export folder, relative to the registry's folder (absent: a temporary export, gone) */
  path: z.string().optional(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  hub_url: z.string().url().optional(),
  private: z.boolean().optional(),
  commit: z.string().optional(),
});
export type ExportRecord = z.infer<typeof ExportRecord>;

export const ModelVersion = z.object({
  /** `<name>@v<N>` */
  id: z.string(),
  name: ModelName,
  version: z.number().int().min(1),
  registered_at: z.string(),
  /** the sampler weights (what the suite, the playground and the chat provider use) */
  sampler_path: z.string().startsWith('tinker://').optional(),
  /** the training state (what a run warm-starts from) */
  state_path: z.string().startsWith('tinker://').optional(),
  base_model: z.string(),
  renderer: z.string().optional(),
  lora_rank: z.number().int().positive().optional(),
  /** the run folder it came from, relative to the registry's folder */
  source_run: z.string().optional(),
  recipe: z.array(RecipeRun).default([]),
  data: z.array(DataFileSummary).default([]),
  suite_results: z.array(SuiteSnapshot).default([]),
  status: ModelStatus,
  history: z.array(StatusChange).min(1),
  /** when the checkpoint expires (a TTL), ISO time; absent: it does not, or it is not known */
  expires_at: z.string().optional(),
  description: z.string().optional(),
  /** exports and publishes of this version, oldest first */
  exports: z.array(ExportRecord).optional(),
});
export type ModelVersion = z.infer<typeof ModelVersion>;

export const RegistryFileSchema = z.object({
  kind: z.literal('tinker-model-registry'),
  version: z.literal(1),
  /** the suite file that gates promotions to production, relative to the registry's folder */
  gate_suite: z.string().optional(),
  versions: z.array(ModelVersion),
});
export type Registry = z.infer<typeof RegistryFileSchema>;

export function emptyRegistry(): Registry {
  return { kind: 'tinker-model-registry', version: 1, versions: [] };
}

export function versionId(name: string, version: number): string {
  return `${name}@v${version}`;
}

/** "name@v3" → its parts; undefined for anything else. */
export function parseVersionId(id: string): { name: string; version: number } | undefined {
  const m = /^(.+)@v(\d+)$/.exec(id.trim());
  if (!m || !MODEL_NAME_RE.test(m[1]!)) return undefined;
  return { name: m[1]!, version: Number(m[2]) };
}

/** The version a user names: "name@v3", or "name" for its newest version. */
export function findVersion(reg: Registry, idOrName: string): ModelVersion | undefined {
  const parsed = parseVersionId(idOrName);
  if (parsed) return reg.versions.find((v) => v.name === parsed.name && v.version === parsed.version);
  return reg.versions.filter((v) => v.name === idOrName.trim()).sort((a, b) => b.version - a.version)[0];
}

/** The production version of a model name, if any. */
export function productionOf(reg: Registry, name: string): ModelVersion | undefined {
  return reg.versions.find((v) => v.name === name && v.status === 'production');
}

/** Model versions newest first: by name, then version descending (the order MODELS.md and the list use). */
export function sortedVersions(reg: Registry): ModelVersion[] {
  return [...reg.versions].sort((a, b) => (a.name === b.name ? b.version - a.version : a.name < b.name ? -1 : 1));
}

/** The registry's version that has this tinker:// path (sampler or state), if any. */
export function versionOfPath(reg: Registry, tinkerPath: string): ModelVersion | undefined {
  return reg.versions.find((v) => v.sampler_path === tinkerPath || v.state_path === tinkerPath);
}

/** A path relative to the registry's folder, with "/" on every OS (the file is committed and shared). */
export function registryRelative(registryDir: string, target: string): string {
  return (path.relative(registryDir, target) || '.').split(path.sep).join('/');
}
