#!/usr/bin/env node
// `npm test`: builds, then runs the three layers one after another and prints a summary per layer:
//   1. unit            mocha in plain Node over src/core and src/engine   (scripts/run-unit-tests.mjs)
//   2. extension-host  the mocha suite inside a real VS Code extension host (scripts/run-host-tests.mjs),
//                      then, on the floor host (code-server 4.96, VS Code 1.96, which lacks the newer
//                      APIs of src/vscode/common/newerApis.ts), the suite of test/suite/newerApis.test.ts
//                      (scripts/run-web-tests.mjs --host floor; TINKER_FLOOR_HOST_TESTS=all runs the
//                      whole suite there)
//   3. ui              the packaged VSIX in code-server, driven by Chromium (scripts/run-ui-tests.mjs),
//                      on the floor host, then on the newest
// Every layer runs even if an earlier one failed; the exit code is non-zero if any layer failed.
//   TINKER_TEST_LAYERS=unit,host,ui selects layers.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const wanted = new Set((process.env.TINKER_TEST_LAYERS || 'unit,host,ui').split(',').map((s) => s.trim()));
// The tools' own entry points, run with this Node: no npx start-up per step, and no npm warnings about
// configuration the outer npm exported.
const bin = (rel) => path.join(root, 'node_modules', rel);
// the suite (test/suite/newerApis.test.ts) that shows the extension on the floor host without the newer APIs
const FLOOR_HOST_SUITE = 'VS Code APIs newer than the floor';

/** Runs a command, echoing its output, and returns its exit code and the last "N passed, N failed" line. */
function run(label, cmd, args, env = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const envText = Object.entries(env).map(([k, v]) => `${k}=${v} `).join('');
    console.log(`\n[test] ${label}: ${envText}${cmd} ${args.join(' ')}`);
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let summary;
    // the runners' "  FAIL <title>" lines, repeated in the summary so that a failure is named at the end
    const failures = new Set();
    let pending = '';
    const onData = (stream) => (chunk) => {
      stream.write(chunk);
      const lines = (pending + String(chunk)).split('\n');
      pending = lines.pop() ?? '';
      for (const l of lines) if (/^\s*FAIL /.test(l)) failures.add(l.trim().slice(0, 400));
      // "N passed, N failed", "ui: N passed, …" or "ui (floor, Code 1.96.4): N passed, …"
      for (const m of String(chunk).matchAll(/^(?:[\w-]+(?: \([^)\n]*\))?: )?(\d+) passed, (\d+) failed/gm)) summary = { passed: +m[1], failed: +m[2] };
    };
    child.stdout.on('data', onData(process.stdout));
    child.stderr.on('data', onData(process.stderr));
    child.on('close', (code) => resolve({ code: code ?? 1, summary, failures: [...failures], seconds: (Date.now() - t0) / 1000 }));
  });
}

const t0 = Date.now();
const rows = [];
const build = await run('build', process.execPath, ['scripts/build.mjs']);
const compile = await run('compile tests', process.execPath, [bin('typescript/bin/tsc'), '-p', '.']);
if (build.code !== 0 || compile.code !== 0) {
  console.log('\nbuild or compile failed; no tests were run');
  console.log('0 passed, 1 failed');
  process.exit(1);
}
if (wanted.has('unit')) rows.push(['unit', await run('layer 1: unit tests', process.execPath, ['scripts/run-unit-tests.mjs'])]);
if (wanted.has('host')) {
  rows.push(['extension-host', await run('layer 2: extension-host tests', process.execPath, ['scripts/run-host-tests.mjs'])]);
  const floorEnv = process.env.TINKER_FLOOR_HOST_TESTS === 'all' ? {} : { MOCHA_GREP: process.env.MOCHA_GREP || FLOOR_HOST_SUITE };
  rows.push(['extension-host (floor)', await run('layer 2: extension-host tests on the floor host', process.execPath, ['scripts/run-web-tests.mjs', '--host', 'floor'], floorEnv)]);
}
if (wanted.has('ui')) {
  const pack = await run('package the VSIX', process.execPath, [path.join(root, 'scripts/package.mjs')]);
  for (const host of ['floor', 'newest']) {
    rows.push([`ui (${host})`, pack.code === 0 ? await run(`layer 3: UI tests on the ${host} host`, process.execPath, ['scripts/run-ui-tests.mjs'], { UI_HOSTS: host }) : pack]);
  }
}

console.log(`\n[test] summary after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
let passed = 0;
let failed = 0;
for (const [name, r] of rows) {
  const p = r.summary?.passed ?? 0;
  // A layer that exited non-zero without a count of failures still counts as one failure.
  const f = r.summary?.failed ?? 0;
  const fAdj = r.code !== 0 && f === 0 ? 1 : f;
  passed += p;
  failed += fAdj;
  console.log(`${name}: ${p} passed, ${fAdj} failed${r.code !== 0 ? ` (exit code ${r.code})` : ''}${r.seconds !== undefined ? ` [${r.seconds.toFixed(0)} s]` : ''}`);
  for (const l of r.failures ?? []) console.log(`    ${l}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || rows.some(([, r]) => r.code !== 0) ? 1 : 0);
