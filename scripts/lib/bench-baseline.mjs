// The GEMM benchmark's baseline, onnxruntime-node, installed on demand into the user's cache instead
// of being a dev dependency: its install script downloads CUDA binaries from outside the npm registry
// unless told to skip, and the only way to tell it through npm's own config is an option npm warns
// about on every command. Here the skip is the package's environment variable, given to this one
// install. Idempotent; the version is pinned exactly.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ORT_VERSION = '1.30.0';

/** Returns the folder whose node_modules holds onnxruntime-node, installing it first if needed; or an error text. */
export function ensureBenchBaseline() {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dest = path.join(cache, 'tinker-studio', `bench-baseline-ort-${ORT_VERSION}`);
  const marker = path.join(dest, 'node_modules', 'onnxruntime-node', 'package.json');
  if (fs.existsSync(marker)) return { dir: dest };
  fs.mkdirSync(dest, { recursive: true });
  if (!fs.existsSync(path.join(dest, 'package.json'))) fs.writeFileSync(path.join(dest, 'package.json'), '{ "private": true }\n');
  console.log(`[bench] installing onnxruntime-node@${ORT_VERSION} (GEMM baseline) into ${dest}`);
  // A clean npm environment: under `npm run bench` the outer npm's npm_config_* would configure this install.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
  env.ONNXRUNTIME_NODE_INSTALL = 'skip';
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `onnxruntime-node@${ORT_VERSION}`], {
    cwd: dest,
    env,
    stdio: 'inherit',
  });
  if (r.status !== 0 || !fs.existsSync(marker)) return { error: `npm install onnxruntime-node@${ORT_VERSION} failed (exit ${r.status ?? r.signal})` };
  return { dir: dest };
}
