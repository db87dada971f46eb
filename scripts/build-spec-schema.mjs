// Build assets: the JSON schemas of GRPO and SFT run-spec files (dist/grpo-spec.schema.json,
// dist/sft-spec.schema.json), generated from the zod schemas in src/core/runs/spec.ts and
// src/core/sft/spec.ts so the editor's completion and the run's validation agree. package.json
// contributes them for `*.grpo.json` and `*.sft.json` (contributes.jsonValidation).
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';

export async function build(root) {
  return [
    await schemaAsset(root, 'src/core/runs/spec.ts', 'runSpecJsonSchema', 'grpo-spec.schema.json'),
    await schemaAsset(root, 'src/core/sft/spec.ts', 'sftSpecJsonSchema', 'sft-spec.schema.json'),
  ];
}

async function schemaAsset(root, file, fn, name) {
  const entry = path.join(root, file);
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
  const schema = module.exports[fn]();
  return { dir: path.dirname(file), name, bytes: Buffer.from(JSON.stringify(schema, null, 2) + '\n') };
}
