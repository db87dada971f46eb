// The agent's model registry tools, on the same core as the CLI and the Models view: the workspace's
// tinker-models.json, and the same promotion gate (a refusal is the tool's answer, with every reason;
// promoting anyway needs a written reason).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { registerFromPath, registerFromRun, requireVersion, setStatus } from '../models/lifecycle';
import { estimateText, expiryWarning, versionSection } from '../models/markdown';
import { promote, PromotionRefusedError } from '../models/promotion';
import { REGISTRY_FILE, sortedVersions, type ModelVersion } from '../models/registry';
import { readRegistry } from '../models/store';
import { suiteRunner } from '../suite/run';
import type { TrainingSession } from './session';

const versionArg = z.string().min(1).describe('a model version, "name@vN" (or a name for its newest version)');

export const RegistryListInput = z.object({
  version: versionArg.optional().describe('one version to show in full (its MODELS.md entry); without it, every version in a line'),
});
export const RegistryRegisterInput = z.object({
  name: z.string().min(1).describe('the model name (letters, digits, ".", "_", "-"); the version number is the next one'),
  run_dir: z.string().min(1).optional().describe("a run folder (relative to the workspace or the runs folder): its final checkpoint, with the run's recipe and data"),
  checkpoint: z.string().min(1).optional().describe('with run_dir: a checkpoint of the run other than the final one (its name)'),
  sampler_path: z.string().startsWith('tinker://').optional().describe('instead of run_dir: a tinker:// sampler path'),
  state_path: z.string().startsWith('tinker://').optional().describe('with sampler_path: the matching tinker:// state path'),
  base_model: z.string().min(1).optional().describe('with sampler_path: the base model'),
});
export const RegistryPromoteInput = z.object({
  version: versionArg,
  to: z.enum(['staging', 'production']).default('production').describe('production goes through the gate suite; staging does not'),
  run_suite: z.boolean().default(false).describe('run the gate suite where a result is missing or stale (spends compute) instead of refusing'),
  anyway: z.string().optional().describe('promote past a refusing gate: the written reason, kept in the history'),
  reason: z.string().optional().describe('a note for the history'),
});
export const RegistryRetireInput = z.object({ version: versionArg, reason: z.string().optional().describe('why, for the history') });

function registryOf(s: TrainingSession): string {
  return path.join(s.evalContext().baseDir, REGISTRY_FILE);
}

function runnerOf(s: TrainingSession) {
  const c = s.evalContext();
  return suiteRunner({ connect: c.connect, cacheDir: c.cacheDir, ...(c.python ? { python: c.python } : {}), runsDirs: [c.runsDir], cwd: c.baseDir, log: c.log });
}

const line = (v: ModelVersion) => {
  const s = v.suite_results.at(-1);
  const warn = expiryWarning(v);
  return `${v.id} ${v.status} ${v.sampler_path ?? v.state_path ?? ''}${s ? ` — ${s.entries.map((e) => `${e.name} ${e.metric} ${estimateText(e.estimate)} (n ${e.n})`).join('; ')}` : ''}${warn ? ` — WARNING: ${warn}` : ''}`;
};

export async function registryList(s: TrainingSession, a: z.output<typeof RegistryListInput>): Promise<{ text: string; value: unknown }> {
  const reg = await readRegistry(registryOf(s));
  if (a.version) {
    const v = requireVersion(reg, a.version);
    return { text: versionSection(v).join('\n').trimEnd(), value: v };
  }
  const all = sortedVersions(reg);
  return { text: all.length ? all.map(line).join('\n') : `no model is registered in ${REGISTRY_FILE}`, value: { gate_suite: reg.gate_suite ?? null, versions: all.map((v) => ({ id: v.id, status: v.status, sampler_path: v.sampler_path })) } };
}

export async function registryRegister(s: TrainingSession, a: z.output<typeof RegistryRegisterInput>): Promise<{ text: string; value: unknown }> {
  const c = s.evalContext();
  const file = registryOf(s);
  let v: ModelVersion;
  if (a.run_dir) {
    if (a.sampler_path || a.state_path || a.base_model) throw new Error('registry_register: give run_dir, or sampler_path with base_model, not both');
    const inWorkspace = path.resolve(c.baseDir, a.run_dir);
    const inRuns = path.resolve(c.runsDir, a.run_dir);
    const dir = (await isRunFolder(inWorkspace)) ? inWorkspace : inRuns;
    v = await registerFromRun(file, { name: a.name, runDir: dir, ...(a.checkpoint ? { checkpoint: a.checkpoint } : {}) });
  } else {
    if (!a.sampler_path && !a.state_path) throw new Error('registry_register: give run_dir, or sampler_path (and base_model)');
    if (!a.base_model) throw new Error('registry_register: registering a tinker:// path needs base_model');
    v = await registerFromPath(file, { name: a.name, ...(a.sampler_path ? { samplerPath: a.sampler_path } : {}), ...(a.state_path ? { statePath: a.state_path } : {}), baseModel: a.base_model });
  }
  return { text: `registered ${v.id} (candidate): ${v.sampler_path ?? v.state_path}`, value: { id: v.id, status: v.status } };
}

/** A run folder there (its config.json): relative run folders are tried against the workspace first. */
async function isRunFolder(dir: string): Promise<boolean> {
  return fs.stat(path.join(dir, 'config.json')).then(
    () => true,
    () => false,
  );
}

export async function registryPromote(s: TrainingSession, a: z.output<typeof RegistryPromoteInput>, signal?: AbortSignal): Promise<{ text: string; value: unknown }> {
  const file = registryOf(s);
  if (a.to === 'staging') {
    const v = await setStatus(file, a.version, 'staging', { ...(a.reason ? { reason: a.reason } : {}) });
    return { text: `${v.id} is in staging`, value: { id: v.id, status: v.status } };
  }
  try {
    const r = await promote(file, a.version, { ...(a.run_suite ? { runSuite: runnerOf(s) } : {}), ...(a.anyway !== undefined ? { anyway: a.anyway } : {}), ...(a.reason ? { reason: a.reason } : {}), ...(signal ? { signal } : {}), onProgress: s.evalContext().log });
    const anyway = r.check.refusals.length > 0;
    return {
      text: [`${r.version.id} is in production${anyway ? ' (promoted anyway)' : ''}${r.replaced ? `; ${r.replaced.id} retired` : ''}`, ...r.check.refusals.map((x) => `refused: ${x}`), ...r.check.passes.map((x) => `passed: ${x}`)].join('\n'),
      value: { id: r.version.id, status: 'production', anyway, refusals: r.check.refusals, passes: r.check.passes },
    };
  } catch (e) {
    if (!(e instanceof PromotionRefusedError)) throw e;
    // a refusal is an answer, not a failure: the agent reads every reason
    return { text: e.message, value: { id: e.check.candidate.id, refused: true, refusals: e.check.refusals, passes: e.check.passes } };
  }
}

export async function registryRetire(s: TrainingSession, a: z.output<typeof RegistryRetireInput>): Promise<{ text: string; value: unknown }> {
  const v = await setStatus(registryOf(s), a.version, 'retired', { ...(a.reason ? { reason: a.reason } : {}) });
  return { text: `${v.id} is retired`, value: { id: v.id, status: v.status } };
}
