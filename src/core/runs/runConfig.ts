// A run directory's config.json, read in one place: ours (the resolved spec plus model_name,
// renderer_name, spec_file, backend, ...) and the Python tinker-cookbook's (model_name, log_path,
// ...). Only the fields something reads are checked; everything else passes through untouched.
import * as path from 'node:path';
import { readIfExists } from '../fs/read';
import * as z from 'zod';
import { errorMessage } from '../errors';

/** The registered model version a run started from (models/metadata.ts writes it; its checkpoints carry it). */
export const ModelRegistryOrigin = z.object({ name: z.string().min(1), version: z.string().min(1) });
export type ModelRegistryOrigin = z.infer<typeof ModelRegistryOrigin>;

export const RunConfig = z
  .object({
    model_name: z.string().optional(),
    /** the spec file a run was started from (ours) */
    spec_file: z.string().optional(),
    /** the reward function, relative to the spec file's folder (ours) */
    reward: z.object({ file: z.string() }).passthrough().optional(),
    /** an environment run's env file, relative to the spec file's folder (ours) */
    env: z.object({ file: z.string() }).passthrough().optional(),
    backend: z.enum(['local', 'cloud', 'custom']).optional(),
    base_url: z.string().optional(),
    /** W&B: the run id chosen at start, and its URL once W&B answered (runTracking.ts) */
    wandb: z.object({ id: z.string().optional(), url: z.string().regex(/^https?:\/\//).optional() }).passthrough().optional(),
  })
  .passthrough();
export type RunConfig = z.infer<typeof RunConfig>;

export function runConfigFile(runDir: string): string {
  return path.join(runDir, 'config.json');
}

/** Parses config.json text; the error names the file and the field. */
export function parseRunConfig(text: string, file: string): RunConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${errorMessage(err)})`);
  }
  const parsed = RunConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${issue ? `${issue.path.join('.') || 'config'}: ${issue.message}` : 'not a run configuration'}`);
  }
  return parsed.data;
}

/** The run's config, or undefined when it has no config.json; throws when the file is unreadable or invalid. */
export async function readRunConfig(runDir: string): Promise<RunConfig | undefined> {
  const file = runConfigFile(runDir);
  const text = await readIfExists(file);
  return text === undefined ? undefined : parseRunConfig(text, file);
}

/** The spec file a run was started from, absolute. */
export function specFileOfConfig(config: RunConfig): string | undefined {
  return config.spec_file ? path.resolve(config.spec_file) : undefined;
}

/** The reward file a run used, absolute (relative paths are from the spec file's folder). */
export function rewardFileOfConfig(config: RunConfig, runDir: string): string | undefined {
  if (!config.reward) return undefined;
  const base = config.spec_file ? path.dirname(config.spec_file) : runDir;
  return path.resolve(base, config.reward.file);
}

/** The env file an environment run used, absolute (relative paths are from the spec file's folder). */
export function envFileOfConfig(config: RunConfig, runDir: string): string | undefined {
  if (!config.env) return undefined;
  const base = config.spec_file ? path.dirname(config.spec_file) : runDir;
  return path.resolve(base, config.env.file);
}
