// Build assets: the JSON schema of every kind of run spec (dist/grpo-spec.schema.json, …), generated
// from the kinds table and the kinds' zod schemas (src/core/experiments/specSchemas.ts) so the editor's
// completion and the run's validation agree. package.json contributes each for its kind's files
// (contributes.jsonValidation; a unit test checks the manifest against the kinds table).
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';

const ENTRY = 'src/core/experiments/specSchemas.ts';
// where out/ keeps the schemas (beside the spec layer, as before)
const OUT_DIR = 'src/core/spec';

export async function build(root) {
  const entry = path.join(root, ENTRY);
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
  const schemas = await module.exports.specJsonSchemas();
  return schemas.map(({ file, schema }) => ({ dir: OUT_DIR, name: file, bytes: Buffer.from(JSON.stringify(schema, null, 2) + '\n') }));
}
