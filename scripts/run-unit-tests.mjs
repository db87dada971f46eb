#!/usr/bin/env node
// Layer 1: mocha in plain Node over the compiled unit tests (out/test/unit/**/*.test.js), i.e.
// src/core and src/engine without VS Code. Prints mocha's spec report and its summary, then a
// plain "unit: N passed, N failed" line. Exit code 0 only if every test passed.
//   MOCHA_GREP=<pattern> narrows the run.
import Mocha from 'mocha';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'out/test/unit');

function collect(d) {
  if (!fs.existsSync(d)) return [];
  return fs
    .readdirSync(d, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? collect(path.join(d, e.name)) : e.name.endsWith('.test.js') ? [path.join(d, e.name)] : []))
    .sort();
}

const files = collect(dir);
if (files.length === 0) {
  console.error(`no compiled unit tests under ${dir}: run "npm run compile-tests" first`);
  process.exit(1);
}
// the tests' own cache folder (the engine's checkpoint store, tokenizers): never the user's
if (!process.env.TINKER_STUDIO_CACHE_DIR) {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-unit-cache-'));
  process.env.TINKER_STUDIO_CACHE_DIR = cache;
  process.on('exit', () => fs.rmSync(cache, { recursive: true, force: true }));
}
const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 60_000, grep: process.env.MOCHA_GREP || undefined });
for (const f of files) mocha.addFile(f);
let passed = 0;
let failed = 0;
/** "FAIL <full title>: <first line of the error>", repeated before the summary (and by npm test's own) */
const failLines = [];
const runner = mocha.run((failures) => {
  for (const l of failLines) console.log(l);
  console.log(`unit: ${passed} passed, ${failed} failed`);
  process.exitCode = failures > 0 || passed === 0 ? 1 : 0;
});
runner.on('pass', () => passed++);
runner.on('fail', (test, err) => {
  failed++;
  failLines.push(`  FAIL ${test.fullTitle()}: ${String(err?.message ?? err).split('\n')[0].slice(0, 300)}`);
});
