// Each kind of the table (kinds.ts) to its spec definition (define.ts), loaded on first use: zod and
// the schemas stay out of the extension's activation. What works on any spec file — the CLI, the
// runner, the agent tools, the JSON schemas the build writes — goes through here.
import type { z } from 'zod';
import { EVAL_SPEC_FILE, type SpecKind, SPEC_KINDS, specKind } from './kinds';
import type { SpecDefinition } from './define';

type AnySpecDefinition = SpecDefinition<z.ZodObject>;

const LOADERS: { readonly [K in SpecKind]: () => Promise<AnySpecDefinition> } = {
  grpo: async () => (await import('../grpo/spec')).GRPO_SPEC,
  sft: async () => (await import('../sft/spec')).SFT_SPEC,
};

/** The spec definition of a kind: its schema and how its files are read. */
export function specDefinition(kind: SpecKind): Promise<AnySpecDefinition> {
  return LOADERS[kind]();
}

/** Every kind's JSON schema, then the eval spec's, under the file name the manifest contributes it by (the build writes these). */
export async function specJsonSchemas(): Promise<Array<{ file: string; schema: Record<string, unknown> }>> {
  const kinds = await Promise.all(SPEC_KINDS.map(async (k) => ({ file: specKind(k.id).schemaFile, schema: (await specDefinition(k.id)).jsonSchema() })));
  return [...kinds, { file: EVAL_SPEC_FILE.schemaFile, schema: (await import('../evals/spec')).evalSpecJsonSchema() }];
}
