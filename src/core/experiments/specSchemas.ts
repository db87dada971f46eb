// The JSON schema of every spec file, under the file name the manifest contributes it by (the build
// writes these: scripts/build-spec-schema.mjs). Here, above the kinds, the evals and the sweep file,
// because it loads all of them.
import { OTHER_SPEC_FILES, type OtherSpecFileId, SPEC_KINDS, specKind } from '../spec/kinds';
import { specDefinition } from '../kinds/specDefinition';

/** The JSON schema of each spec file that is not a kind of run (loaded on first use). */
const OTHER_SCHEMAS: Record<OtherSpecFileId, () => Promise<Record<string, unknown>>> = {
  sweep: async () => (await import('./sweepFile')).sweepJsonSchema(),
  eval: async () => (await import('../evals/spec')).evalSpecJsonSchema(),
};

/** Every kind's JSON schema, then the sweep's and the eval spec's. */
export async function specJsonSchemas(): Promise<Array<{ file: string; schema: Record<string, unknown> }>> {
  const kinds = await Promise.all(SPEC_KINDS.map(async (k) => ({ file: specKind(k.id).schemaFile, schema: (await specDefinition(k.id)).jsonSchema() })));
  const others = await Promise.all(OTHER_SPEC_FILES.map(async (f) => ({ file: f.schemaFile, schema: await OTHER_SCHEMAS[f.id]() })));
  return [...kinds, ...others];
}
