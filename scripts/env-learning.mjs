#!/usr/bin/env node
// Do the RL environment examples learn? Runs each example (examples/arith-retry, arith-chain,
// arith-tools) through the user's own command, `node dist/cli.js grpo <spec>` (the README's), once per
// seed, and prints per run: the mean env/all/reward/total of the first 5 and of the last 5 iterations,
// their difference, and the wall time; then per example the mean and the worst difference over the
// seeds. Each seed is the shipped spec with "seed" = s and "sampling_seed" = s + 1, run in a copy of
// the example's folder (so nothing is written into the repository). Prints figures; asserts nothing.
//
//   npm run build && node scripts/env-learning.mjs [--examples arith-retry,arith-chain,arith-tools|<folder>,…] [--seeds 0,1,2] [--parallel 1]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const examples = (args.examples ?? 'arith-retry,arith-chain,arith-tools').split(',');
const seeds = (args.seeds ?? '0,1,2').split(',').map(Number);
const parallel = Number(args.parallel ?? 1);
const KEY = 'env/all/reward/total';
const cli = path.join(root, 'dist/cli.js');
if (!fs.existsSync(cli)) throw new Error('dist/cli.js is missing: run "npm run build" first');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'env-learning-'));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

function runOne(example, seed) {
  // an example's name under examples/, or a folder's path (a variant of a spec)
  const src = example.includes(path.sep) ? path.resolve(example) : path.join(root, 'examples', example);
  const dir = path.join(work, `${path.basename(example)}-seed${seed}`);
  fs.cpSync(src, dir, { recursive: true, filter: (p) => !p.includes(`${path.sep}runs`) });
  const specName = fs.readdirSync(dir).find((f) => f.endsWith('.grpo.json'));
  const specPath = path.join(dir, specName);
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));
  spec.seed = seed;
  spec.sampling_seed = seed + 1;
  delete spec.$schema;
  fs.writeFileSync(specPath, JSON.stringify(spec, null, 2));
  const runsDir = path.join(dir, 'runs');
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'grpo', specPath, '--runs-dir', runsDir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } });
    let log = '';
    child.stdout.on('data', (b) => (log += b));
    child.stderr.on('data', (b) => (log += b));
    child.on('close', (code) => {
      const seconds = (Date.now() - t0) / 1000;
      fs.writeFileSync(path.join(dir, 'cli.log'), log);
      const metricsFile = findFile(runsDir, 'metrics.jsonl');
      if (code !== 0 || !metricsFile) {
        resolve({ example, seed, seconds, error: `exit ${code}; see ${path.join(dir, 'cli.log')}` });
        return;
      }
      const rows = fs
        .readFileSync(metricsFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l))
        .filter((r) => typeof r[KEY] === 'number');
      const first = mean(rows.slice(0, 5).map((r) => r[KEY]));
      const last = mean(rows.slice(-5).map((r) => r[KEY]));
      resolve({ example, seed, seconds, iterations: rows.length, first, last, gain: last - first, runDir: path.dirname(metricsFile) });
    });
  });
}

function findFile(dir, name) {
  if (!fs.existsSync(dir)) return undefined;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isFile() && e.name === name) return p;
    if (e.isDirectory()) {
      const f = findFile(p, name);
      if (f) return f;
    }
  }
  return undefined;
}

const jobs = examples.flatMap((e) => seeds.map((s) => [e, s]));
const results = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.max(1, parallel) }, async () => {
    while (next < jobs.length) {
      const [e, s] = jobs[next++];
      const r = await runOne(e, s);
      results.push(r);
      console.log(
        r.error
          ? `${e} seed ${s}: FAILED (${r.error})`
          : `${e} seed ${s}: ${KEY} first 5 ${r.first.toFixed(3)} → last 5 ${r.last.toFixed(3)} (${r.gain >= 0 ? '+' : ''}${r.gain.toFixed(3)}) over ${r.iterations} iterations, ${r.seconds.toFixed(0)} s`,
      );
    }
  }),
);
console.log(`\nload average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${parallel} run(s) at a time; runs kept under ${work}`);
for (const e of examples) {
  const rs = results.filter((r) => r.example === e && !r.error);
  if (rs.length === 0) {
    console.log(`${e}: no successful run`);
    continue;
  }
  const gains = rs.map((r) => r.gain);
  console.log(
    `${e}: last-5 minus first-5 mean ${KEY}: mean ${mean(gains).toFixed(3)}, worst ${Math.min(...gains).toFixed(3)} over seeds ${rs.map((r) => r.seed).join(',')}; ` +
      `wall time mean ${mean(rs.map((r) => r.seconds)).toFixed(0)} s, longest ${Math.max(...rs.map((r) => r.seconds)).toFixed(0)} s`,
  );
}
