// Build assets: the JSON schema of every kind of run spec (dist/grpo-spec.schema.json, …), generated
// from the kinds table and the kinds' zod schemas (src/core/experiments/specSchemas.ts) so the editor's
// completion and the run's validation agree. package.json contributes each for its kind's files
// (contributes.jsonValidation; a unit test checks the manifest against the kinds table). The suite
// file's schema (src/core/suite/jsonSchema.ts) is built beside them: suite/ sits above experiments/.
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';

const ENTRY = 'src/core/experiments/specSchemas.ts';
const SUITE_ENTRY = 'src/core/suite/jsonSchema.ts';
// where out/ keeps the schemas (beside the spec layer, as before)
const OUT_DIR = 'src/core/spec';

/** Bundles `rel` and evaluates it as a CommonJS module: its exports. */
async function load(root, rel) {
  const entry = path.join(root, rel);
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    absWorkingDir: root,
  });
  // Evaluate the bundle as a CommonJS module, then ask it for the schemas.
  const module = { exports: {} };
  new Function('module', 'exports', 'require', out.outputFiles[0].text)(module, module.exports, createRequire(entry));
  return module.exports;
}

export async function build(root) {
  const schemas = await (await load(root, ENTRY)).specJsonSchemas();
  const suite = await load(root, SUITE_ENTRY);
  schemas.push({ file: suite.SUITE_SCHEMA_FILE, schema: suite.suiteJsonSchema() });
  return schemas.map(({ file, schema }) => ({ dir: OUT_DIR, name: file, bytes: Buffer.from(JSON.stringify(schema, null, 2) + '\n') }));
}
