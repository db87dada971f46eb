// Each kind of the table (kinds.ts) to its spec definition (define.ts), loaded on first use: zod and
// the schemas stay out of the extension's activation. What works on any spec file — the CLI, the
// runner, the agent tools, the JSON schemas the build writes — goes through here.
import type { z } from 'zod';
import { OTHER_SPEC_FILES, type OtherSpecFileId, type SpecKind, SPEC_KINDS, specKind } from './kinds';
import type { SpecDefinition } from './define';

type AnySpecDefinition = SpecDefinition<z.ZodObject>;

const LOADERS: { readonly [K in SpecKind]: () => Promise<AnySpecDefinition> } = {
  grpo: async () => (await import('../grpo/spec')).GRPO_SPEC,
  sft: async () => (await import('../sft/spec')).SFT_SPEC,
  dpo: async () => (await import('../dpo/spec')).DPO_SPEC,
};

/** The spec definition of a kind: its schema and how its files are read. */
export function specDefinition(kind: SpecKind): Promise<AnySpecDefinition> {
  return LOADERS[kind]();
}

/** The JSON schema of each spec file that is not a kind of run (loaded on first use). */
const OTHER_SCHEMAS: Record<OtherSpecFileId, () => Promise<Record<string, unknown>>> = {
  sweep: async () => (await import('../experiments/sweepFile')).sweepJsonSchema(),
  eval: async () => (await import('../evals/spec')).evalSpecJsonSchema(),
};

/** Every kind's JSON schema, then the sweep's and the eval spec's, under the file name the manifest contributes it by (the build writes these). */
export async function specJsonSchemas(): Promise<Array<{ file: string; schema: Record<string, unknown> }>> {
  const kinds = await Promise.all(SPEC_KINDS.map(async (k) => ({ file: specKind(k.id).schemaFile, schema: (await specDefinition(k.id)).jsonSchema() })));
  const others = await Promise.all(OTHER_SPEC_FILES.map(async (f) => ({ file: f.schemaFile, schema: await OTHER_SCHEMAS[f.id]() })));
  return [...kinds, ...others];
}
