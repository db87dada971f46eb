// Each kind of the table (spec/kinds.ts) to its spec definition (spec/define.ts), loaded on first use:
// zod and the schemas stay out of the extension's activation. It sits above the kinds' folders, which
// it loads; the JSON schemas the build writes are in experiments/specSchemas.ts.
import type { z } from 'zod';
import type { SpecKind } from '../spec/kinds';
import type { SpecDefinition } from '../spec/define';

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
