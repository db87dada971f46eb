// Build asset: the JSON schema of GRPO run-spec files (dist/grpo-spec.schema.json), generated from
// the zod schema in src/core/runs/spec.ts so the editor's completion and the run's validation agree.
// package.json contributes it for `*.grpo.json` (contributes.jsonValidation).
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';

export async function build(root) {
  const entry = path.join(root, 'src/core/runs/spec.ts');
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
  // Evaluate the bundle as a CommonJS module, then ask it for the schema.
  const module = { exports: {} };
  new Function('module', 'exports', 'require', out.outputFiles[0].text)(module, module.exports, createRequire(entry));
  const schema = module.exports.runSpecJsonSchema();
  return [{ dir: 'src/core/runs', name: 'grpo-spec.schema.json', bytes: Buffer.from(JSON.stringify(schema, null, 2) + '\n') }];
}
