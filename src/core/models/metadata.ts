// The registry's name on the Tinker service: user_metadata can be set only when a checkpoint is saved,
// so a run that starts from a registered model version records that version in its config.json
// (`model_registry`), and every checkpoint it saves carries `registry_model` and `registry_version`
// (runs/loopRuntime.ts runMetadata): checkpoint search finds them. The registry file stays the truth.
import * as z from 'zod';
import { readIfExists } from '../fs/read';
import type { ModelRegistryOrigin } from '../runs/runConfig';
import { versionOfPath, type Registry } from './registry';
import { readRegistry } from './store';


const SpecStart = z.object({ load_checkpoint_path: z.string().optional() }).passthrough();

/** The registered version whose state (or sampler) path this is, as config.json records it. */
export function registryOrigin(reg: Registry, loadCheckpointPath: string | undefined): ModelRegistryOrigin | undefined {
  const v = loadCheckpointPath ? versionOfPath(reg, loadCheckpointPath) : undefined;
  return v ? { name: v.name, version: `v${v.version}` } : undefined;
}

/**
 * config.json's extra fields for a new run of `specFile` when it warm-starts from a registered model
 * version (its load_checkpoint_path); undefined otherwise, or when the spec or the registry cannot be read
 * (the run's own start reports a bad spec, and a run never fails for the registry's sake).
 */
export async function registryConfigExtra(registryFile: string, specFile: string): Promise<{ model_registry: ModelRegistryOrigin } | undefined> {
  try {
    const text = await readIfExists(specFile);
    if (text === undefined) return undefined;
    const spec = SpecStart.safeParse(JSON.parse(text));
    if (!spec.success || !spec.data.load_checkpoint_path) return undefined;
    const origin = registryOrigin(await readRegistry(registryFile), spec.data.load_checkpoint_path);
    return origin ? { model_registry: origin } : undefined;
  } catch {
    return undefined;
  }
}
