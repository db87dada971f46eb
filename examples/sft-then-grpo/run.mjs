#!/usr/bin/env node
// SFT -> GRPO on the embedded engine through the CLI: 3 GRPO iterations from the base model (the baseline), SFT
// on chats.jsonl, then GRPO from the SFT run's final state (format.grpo.json with
// load_checkpoint_path set). Run from the repository after `npm run build`:
//   node examples/sft-then-grpo/run.mjs [runs folder] [--no-baseline]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '../../dist/cli.js');
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const withBaseline = !process.argv.includes('--no-baseline');
const runs = path.resolve(positional[0] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sft-then-grpo-')));

function run(args) {
  const r = spawnSync(process.execPath, [cli, ...args, '--runs-dir', runs, '--backend', 'local', '--cache-dir', path.join(runs, '.cache')], { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(r.stdout);
  if (r.status !== 0) throw new Error(`tinker-studio ${args.join(' ')} exited with ${r.status}`);
  const dir = /^run completed: (.*) \(/m.exec(r.stdout)?.[1];
  if (!dir) throw new Error('the CLI did not print the run directory');
  return dir;
}

function testRewards(dir) {
  return fs
    .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((m) => typeof m['test/env/all/reward/total'] === 'number')
    .map((m) => `step ${m.step}: ${m['test/env/all/reward/total'].toFixed(3)}`);
}

const spec = JSON.parse(fs.readFileSync(path.join(here, 'format.grpo.json'), 'utf8'));
// The baseline needs only a few iterations: with every reply scoring 0 all groups are constant, the
// advantages are zero and the weights cannot move.
const baselineSpec = path.join(here, 'baseline.grpo.json');
fs.writeFileSync(baselineSpec, `${JSON.stringify({ ...spec, name: 'format-grpo-baseline', iterations: 3, eval_every: 2, auto_checkpoint: undefined }, null, 2)}\n`);
let baseline;
try {
  if (withBaseline) baseline = run(['grpo', 'baseline.grpo.json']);
} finally {
  fs.rmSync(baselineSpec, { force: true });
}
const sft = run(['sft', 'format.sft.json']);
const final = fs
  .readFileSync(path.join(sft, 'checkpoints.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l))
  .find((c) => c.name === 'final');
const fromSft = path.join(here, 'from-sft.grpo.json');
fs.writeFileSync(fromSft, `${JSON.stringify({ ...spec, name: 'format-grpo-from-sft', load_checkpoint_path: final.state_path }, null, 2)}\n`);
try {
  const grpo = run(['grpo', 'from-sft.grpo.json']);
  if (baseline) console.log(`\nholdout reward, GRPO from the base model: ${testRewards(baseline).join(', ')}`);
  console.log(`holdout reward, GRPO from the SFT checkpoint ${final.state_path}: ${testRewards(grpo).join(', ')}`);
} finally {
  fs.rmSync(fromSft, { force: true });
}
