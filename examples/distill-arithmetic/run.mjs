#!/usr/bin/env node
// On-policy distillation vs GRPO on the embedded engine, through the CLI. Run from the repository
// after `npm run build`:
//   node examples/distill-arithmetic/run.mjs [runs folder] [--seeds 1,2,3] [--teacher <run dir>] [--cache-dir DIR]
// 1. the teacher: teacher.grpo.json (the GRPO demo's settings, 41 iterations) unless --teacher names
//    a finished run with a `final` sampler checkpoint;
// 2. its holdout reward: teacher.eval.json on that run's `final`;
// 3. per sampling seed: distill.grpo.json (the student from base arith-gpt, the teacher's reverse KL
//    as the only signal) and baseline.grpo.json (GRPO from the same start, the same iterations and
//    groups), each scored on the whole holdout before the first and after the last update;
// 4. the table: the holdout reward of each run after N updates, the mean and worst over the seeds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '../../dist/cli.js');
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const positional = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const runs = path.resolve(positional[0] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'distill-arithmetic-')));
const seeds = (flag('--seeds') ?? '1,2,3').split(',').map(Number);
// the engine's checkpoint store lives in the cache folder: a --teacher run must have used the same one
const cache = path.resolve(flag('--cache-dir') ?? path.join(runs, '.cache'));
const KEY = 'test/holdout/env/all/reward/total';

function cliRun(argv, runsDir) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [cli, ...argv, '--runs-dir', runsDir, '--backend', 'local', '--cache-dir', cache], { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(r.stdout);
  if (r.status !== 0) throw new Error(`tinker-studio ${argv.join(' ')} exited with ${r.status}`);
  return { stdout: r.stdout, seconds: (Date.now() - t0) / 1000 };
}

function run(spec, runsDir) {
  const { stdout, seconds } = cliRun(['grpo', spec], runsDir);
  const dir = /^run completed: (.*) \(/m.exec(stdout)?.[1];
  if (!dir) throw new Error('the CLI did not print the run directory');
  return { dir, seconds };
}

const lines = (f) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const holdout = (dir) => Object.fromEntries(lines(path.join(dir, 'metrics.jsonl')).filter((m) => typeof m[KEY] === 'number').map((m) => [m.step, m[KEY]]));
const teacherKl = (dir) => lines(path.join(dir, 'metrics.jsonl')).map((m) => m.teacher_kl).filter((v) => typeof v === 'number');

/** A copy of a spec of this folder with fields replaced, written next to it (paths stay relative); removed by `done`. */
function variant(file, name, fields) {
  const spec = JSON.parse(fs.readFileSync(path.join(here, file), 'utf8'));
  const out = path.join(here, `${name}.grpo.json`);
  fs.writeFileSync(out, `${JSON.stringify({ ...spec, name, ...fields }, null, 2)}\n`);
  return { file: path.basename(out), done: () => fs.rmSync(out, { force: true }) };
}

// 1. the teacher
let teacherDir = flag('--teacher') && path.resolve(flag('--teacher'));
if (!teacherDir) teacherDir = run('teacher.grpo.json', path.join(runs, 'teacher')).dir;
const final = lines(path.join(teacherDir, 'checkpoints.jsonl')).find((c) => c.name === 'final' && c.sampler_path);
if (!final) throw new Error(`${teacherDir} has no final sampler checkpoint`);

// 2. the teacher's holdout reward, the same protocol as the students' evaluator (whole holdout, n = 1, temperature 1)
const evalSpec = JSON.parse(fs.readFileSync(path.join(here, 'teacher.eval.json'), 'utf8'));
const evalFile = path.join(here, 'teacher-pinned.eval.json');
fs.writeFileSync(evalFile, `${JSON.stringify({ ...evalSpec, targets: [{ run: teacherDir, checkpoints: ['final'] }] }, null, 2)}\n`);
const evalOut = path.join(runs, 'teacher-eval');
try {
  cliRun(['eval', path.basename(evalFile), '--out', evalOut], runs);
} finally {
  fs.rmSync(evalFile, { force: true });
}
const teacherReward = JSON.parse(fs.readFileSync(path.join(evalOut, 'summary.json'), 'utf8')).targets[0].metrics.reward.value;

// 3. the students: the teacher pinned to that run (the spec's {"run": "latest"} would do in a folder with no other run)
const rows = [];
for (const seed of seeds) {
  const d = variant('distill.grpo.json', `arith-distill-s${seed}`, { sampling_seed: seed, teacher: { run: teacherDir, checkpoint: 'final' } });
  const g = variant('baseline.grpo.json', `arith-grpo-baseline-s${seed}`, { sampling_seed: seed });
  try {
    const dr = run(d.file, path.join(runs, 'students'));
    const gr = run(g.file, path.join(runs, 'students'));
    const dh = holdout(dr.dir);
    const gh = holdout(gr.dir);
    const last = Math.max(...Object.keys(dh).map(Number));
    const kl = teacherKl(dr.dir);
    rows.push({ seed, base: dh[0], distill: dh[last], grpo: gh[last], updates: last, klFirst: kl[0], klLast: kl.at(-1), dSeconds: dr.seconds, gSeconds: gr.seconds, distillDir: dr.dir, grpoDir: gr.dir });
  } finally {
    d.done();
    g.done();
  }
}

// 4. the table
const f = (v) => (v === undefined ? '–' : (100 * v).toFixed(1) + ' %');
console.log(`\nteacher ${path.basename(teacherDir)}/final: holdout reward ${f(teacherReward)}`);
console.log('seed | base | distilled | GRPO | teacher_kl first → last | time distill / GRPO');
for (const r of rows) console.log(`${r.seed} | ${f(r.base)} | ${f(r.distill)} | ${f(r.grpo)} | ${r.klFirst?.toFixed(3)} → ${r.klLast?.toFixed(3)} | ${r.dSeconds.toFixed(0)} s / ${r.gSeconds.toFixed(0)} s`);
const mean = (k) => rows.reduce((s, r) => s + r[k], 0) / rows.length;
const worst = (k) => Math.min(...rows.map((r) => r[k]));
console.log(`mean | ${f(mean('base'))} | ${f(mean('distill'))} | ${f(mean('grpo'))} |`);
console.log(`worst | ${f(worst('base'))} | ${f(worst('distill'))} | ${f(worst('grpo'))} |`);
console.log(`(after ${rows[0]?.updates} updates; runs in ${runs})`);
fs.writeFileSync(path.join(runs, 'distill-arithmetic.json'), `${JSON.stringify({ teacher: teacherDir, teacherReward, rows }, null, 2)}\n`);
