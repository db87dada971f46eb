#!/usr/bin/env node
// Layer 2: the mocha suite (out/test/suite) inside a real VS Code extension host.
//   - "electron": @vscode/test-electron downloads desktop VS Code and runs it (ordinary machines;
//     on Linux without a display it runs under xvfb-run when available);
//   - "code-server": the VS Code inside the npm package code-server, driven by headless Chromium
//     (machines that reach only the npm registry and apt; see scripts/run-web-tests.mjs).
// TINKER_TEST_HOST=electron|code-server forces one; otherwise the VS Code update service is probed
// (3 s) and code-server is used when it cannot be reached. The code-server path runs the newest host;
// `npm test` then runs test/suite/newerApis.test.ts on the floor host too (run-web-tests.mjs --host
// floor). On the electron path VSCODE_TEST_VERSION=1.96.4 runs the suite in the floor's desktop VS Code.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function canDownloadVsCode() {
  try {
    const res = await fetch('https://update.code.visualstudio.com/api/releases/stable', { signal: AbortSignal.timeout(3000) });
    return res.ok;
  } catch {
    return false;
  }
}

function hasCommand(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

let host = process.env.TINKER_TEST_HOST;
if (host && host !== 'electron' && host !== 'code-server') {
  console.error(`TINKER_TEST_HOST must be "electron" or "code-server", not "${host}"`);
  process.exit(2);
}
if (!host) {
  host = (await canDownloadVsCode()) ? 'electron' : 'code-server';
  console.log(`[host-tests] using ${host} (${host === 'electron' ? 'VS Code can be downloaded' : 'VS Code cannot be downloaded here'}; TINKER_TEST_HOST overrides)`);
}

let r;
if (host === 'code-server') {
  // the whole suite's limit: generous, since it covers every GRPO and SFT run the suite trains on a
  // 2-core machine; a hang still ends the layer with a screenshot instead of holding CI
  const env = { ...process.env, TEST_TIMEOUT_MS: process.env.TEST_TIMEOUT_MS || '900000' };
  r = spawnSync(process.execPath, [path.join(root, 'scripts/run-web-tests.mjs')], { stdio: 'inherit', cwd: root, env });
} else {
  const runTest = path.join(root, 'out/test/runTest.js');
  const needsDisplay = process.platform === 'linux' && !process.env.DISPLAY;
  r =
    needsDisplay && hasCommand('xvfb-run')
      ? spawnSync('xvfb-run', ['-a', process.execPath, runTest], { stdio: 'inherit', cwd: root })
      : spawnSync(process.execPath, [runTest], { stdio: 'inherit', cwd: root });
}
process.exit(r.status ?? 1);
