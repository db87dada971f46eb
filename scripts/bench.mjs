#!/usr/bin/env node
// `npm run bench`: runs every compiled benchmark (out/bench/*.bench.js) in its own Node process,
// one after another (benchmarks must not compete for the 2 cores), and prints their figures.
//   BENCH=<substring> runs only the matching files.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBenchBaseline } from './lib/bench-baseline.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'out/bench');
const only = process.env.BENCH;
const files = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
  .filter((f) => f.endsWith('.bench.js') && (!only || f.includes(only)))
  .sort();
if (files.length === 0) {
  console.error('no benchmarks found under out/bench (run "npm run compile-tests")');
  process.exit(1);
}
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f.replace(/\.bench\.js$/, '')} ===`);
  const env = { ...process.env };
  if (f.startsWith('gemm.')) {
    const baseline = ensureBenchBaseline();
    if (baseline.dir) env.TINKER_BENCH_BASELINE_DIR = baseline.dir;
    else console.log(`[bench] GEMM baseline unavailable: ${baseline.error}`);
  }
  const r = spawnSync(process.execPath, [path.join(dir, f)], { stdio: 'inherit', cwd: root, env });
  if (r.status !== 0) {
    failed++;
    console.log(`!!! ${f} exited with ${r.status ?? r.signal}`);
  }
}
process.exit(failed ? 1 : 0);
