// Registering a model version (from a run folder's final checkpoint or from tinker:// paths) and moving
// it along its statuses. Moving to production goes through the promotion gate (gate.ts).
import * as path from 'node:path';
import { sha256File } from '../suite/store';
import { dataSummary, finalCheckpoint, recipeOf, runFacts } from './recipe';
import { Actor, ModelName, ModelStatus, ModelVersion, productionOf, registryRelative, versionId, versionOfPath, type Registry } from './registry';
import { currentActor, updateRegistry } from './store';

export interface RegisterFromRun {
  name: string;
  /** a run folder: its final checkpoint is registered */
  runDir: string;
  /** a checkpoint of the run other than the final one (its name in checkpoints.jsonl) */
  checkpoint?: string;
  /** more folders where the runs it warm-started from may be (default: the run's own runs folder) */
  searchDirs?: string[];
  description?: string;
  /** when the checkpoint expires, if the caller asked the server */
  expiresAt?: string;
  by?: Actor;
}

export interface RegisterFromPath {
  name: string;
  /** tinker:// paths: a sampler path, a state path, or both */
  samplerPath?: string;
  statePath?: string;
  baseModel: string;
  renderer?: string;
  loraRank?: number;
  description?: string;
  expiresAt?: string;
  by?: Actor;
}

export class RegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistryError';
  }
}

function nextVersion(reg: Registry, name: string): number {
  return Math.max(0, ...reg.versions.filter((v) => v.name === name).map((v) => v.version)) + 1;
}

function checkName(name: string): void {
  const r = ModelName.safeParse(name);
  if (!r.success) throw new RegistryError(`model name ${JSON.stringify(name)}: ${r.error.issues[0]?.message}`);
}

function refuseDuplicate(reg: Registry, paths: (string | undefined)[]): void {
  for (const p of paths) {
    const dup = p ? versionOfPath(reg, p) : undefined;
    if (dup) throw new RegistryError(`${p} is already registered as ${dup.id} (${dup.status})`);
  }
}

/** Registers a run's final (or named) checkpoint as the next version of `name`, with its recipe and data. */
export async function registerFromRun(file: string, req: RegisterFromRun): Promise<ModelVersion> {
  checkName(req.name);
  const registryDir = path.dirname(path.resolve(file));
  const facts = await runFacts(req.runDir);
  const ckpt = req.checkpoint ? facts.checkpoints.find((c) => c.name === req.checkpoint) : finalCheckpoint(facts);
  if (!ckpt) {
    const names = facts.checkpoints.map((c) => c.name);
    throw new RegistryError(
      req.checkpoint
        ? `${facts.dir} has no checkpoint named ${JSON.stringify(req.checkpoint)} (it has: ${names.join(', ') || 'none'})`
        : `${facts.dir} has no final checkpoint yet (let the run finish, or name one of its checkpoints: ${names.join(', ') || 'none'})`,
    );
  }
  if (!ckpt.sampler_path && !ckpt.state_path) throw new RegistryError(`${facts.dir}: checkpoint ${ckpt.name} records no tinker:// path`);
  const { recipe, runs } = await recipeOf(facts.dir, ckpt, registryDir, req.searchDirs);
  const data = await dataSummary(runs, registryDir);
  const c = facts.config;
  const by = req.by ?? currentActor(registryDir);
  return appendVersion(file, req.name, { sampler_path: ckpt.sampler_path, state_path: ckpt.state_path }, by, `registered from ${registryRelative(registryDir, facts.dir)} (checkpoint ${ckpt.name})`, {
    base_model: typeof c.model_name === 'string' ? c.model_name : String(c['model'] ?? 'unknown'),
    ...(typeof c['renderer_name'] === 'string' ? { renderer: c['renderer_name'] } : {}),
    ...(typeof c['lora_rank'] === 'number' ? { lora_rank: c['lora_rank'] } : {}),
    source_run: registryRelative(registryDir, facts.dir),
    recipe,
    data,
    ...(req.expiresAt ? { expires_at: req.expiresAt } : {}),
    ...(req.description ? { description: req.description } : {}),
  });
}

/** Adds the next version of `name` as a candidate, under the registry's lock (paths registered once). */
function appendVersion(
  file: string,
  name: string,
  paths: { sampler_path?: string | undefined; state_path?: string | undefined },
  by: ModelVersion['history'][number]['by'],
  reason: string,
  facts: Omit<ModelVersion, 'id' | 'name' | 'version' | 'registered_at' | 'sampler_path' | 'state_path' | 'suite_results' | 'status' | 'history'>,
): Promise<ModelVersion> {
  return updateRegistry(file, (reg) => {
    refuseDuplicate(reg, [paths.sampler_path, paths.state_path]);
    const n = nextVersion(reg, name);
    const at = new Date().toISOString();
    const v: ModelVersion = {
      id: versionId(name, n),
      name,
      version: n,
      registered_at: at,
      ...(paths.sampler_path ? { sampler_path: paths.sampler_path } : {}),
      ...(paths.state_path ? { state_path: paths.state_path } : {}),
      ...facts,
      suite_results: [],
      status: 'candidate',
      history: [{ status: 'candidate', at, by, reason }],
    };
    reg.versions.push(v);
    return v;
  });
}

/** Registers tinker:// paths (no run folder here: no recipe or data known) as the next version of `name`. */
export async function registerFromPath(file: string, req: RegisterFromPath): Promise<ModelVersion> {
  checkName(req.name);
  if (!req.samplerPath && !req.statePath) throw new RegistryError('give a tinker:// sampler path, a state path, or both');
  for (const p of [req.samplerPath, req.statePath]) if (p && !p.startsWith('tinker://')) throw new RegistryError(`${p} is not a tinker:// path`);
  const by = req.by ?? currentActor(path.dirname(path.resolve(file)));
  return appendVersion(file, req.name, { sampler_path: req.samplerPath, state_path: req.statePath }, by, 'registered from a tinker:// path', {
    base_model: req.baseModel,
    ...(req.renderer ? { renderer: req.renderer } : {}),
    ...(req.loraRank ? { lora_rank: req.loraRank } : {}),
    recipe: [],
    data: [],
    ...(req.expiresAt ? { expires_at: req.expiresAt } : {}),
    ...(req.description ? { description: req.description } : {}),
  });
}

/** The version a command names, or an error listing what there is. */
export function requireVersion(reg: Registry, id: string): ModelVersion {
  const parsedStatus = reg.versions.find((v) => v.id === id.trim());
  if (parsedStatus) return parsedStatus;
  const byName = reg.versions.filter((v) => v.name === id.trim()).sort((a, b) => b.version - a.version)[0];
  if (byName) return byName;
  const known = reg.versions.map((v) => v.id);
  throw new RegistryError(`no model version ${JSON.stringify(id)} in the registry${known.length ? ` (it has: ${known.join(', ')})` : ' (it is empty: register one first)'}`);
}

/**
 * Moves a version to a status other than production (production goes through promote()): staging,
 * retired, or back to candidate. Retiring the production version leaves the name without one.
 */
export async function setStatus(file: string, id: string, status: Exclude<ModelStatus, 'production'>, o: { reason?: string; by?: Actor } = {}): Promise<ModelVersion> {
  const by = o.by ?? currentActor(path.dirname(path.resolve(file)));
  return updateRegistry(file, (reg) => {
    const v = requireVersion(reg, id);
    if (v.status === status) throw new RegistryError(`${v.id} is already ${status}`);
    v.status = status;
    v.history.push({ status, at: new Date().toISOString(), by, ...(o.reason?.trim() ? { reason: o.reason.trim() } : {}) });
    return v;
  });
}

/** Sets (or clears) the suite file that gates promotions, relative to the registry's folder. */
export async function setGateSuite(file: string, suiteFile: string | undefined): Promise<void> {
  const registryDir = path.dirname(path.resolve(file));
  if (suiteFile) await sha256File(path.resolve(suiteFile)).catch(() => Promise.reject(new RegistryError(`${suiteFile}: no such suite file`)));
  await updateRegistry(file, (reg) => {
    if (suiteFile) reg.gate_suite = registryRelative(registryDir, path.resolve(suiteFile));
    else delete reg.gate_suite;
  });
}

/** Records when a version's checkpoint expires (undefined: it does not), as the server said. */
export async function setExpiry(file: string, id: string, expiresAt: string | undefined): Promise<ModelVersion> {
  return updateRegistry(file, (reg) => {
    const v = requireVersion(reg, id);
    if (expiresAt) v.expires_at = expiresAt;
    else delete v.expires_at;
    return v;
  });
}

export { productionOf };
