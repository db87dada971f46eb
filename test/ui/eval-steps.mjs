// Steps shared by eval-light.ui.mjs and eval-dark.ui.mjs: real evaluation results, made by the CLI as
// a user would (a short GRPO run of the arithmetic example on the embedded engine saving a checkpoint
// every 2 iterations, then an eval spec: the base model vs that run's checkpoints on 60 holdout
// problems, n = 4); then in the workbench: the results row of the Runs view opens the Eval Results
// panel (the table with 95 % intervals, the bars, the metric over the training step), the per-problem
// matrix, and a matrix cell opens that problem's samples of two targets in the diff editor.
// Results are observed in the UI, never waited out.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, pane } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(root, 'dist/cli.js');

function cli(args, cwd, cacheDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, '--cache-dir', cacheDir], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`tinker-studio ${args.join(' ')} exited with ${code}:\n${out.slice(-2000)}`))));
  });
}

/** Trains a short run and evaluates its checkpoints against the base model; the results folder. */
async function makeResults(workspace, sandbox) {
  const dir = path.join(workspace, 'arith');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
  const grpo = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));
  Object.assign(grpo, { name: 'demo', groups_per_batch: 16, group_size: 4, iterations: 8, save_every: 2, eval_every: 0, learning_rate: 0.004 });
  delete grpo.dataset.holdout;
  fs.writeFileSync(path.join(dir, 'demo.grpo.json'), JSON.stringify(grpo, null, 2));
  const cacheDir = path.join(sandbox, 'tinker-cache');
  await cli(['grpo', 'demo.grpo.json', '--runs-dir', path.join(dir, 'runs')], dir, cacheDir);
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/holdout.eval.json'), 'utf8'));
  spec.dataset.max_problems = 60;
  fs.writeFileSync(path.join(dir, 'holdout.eval.json'), JSON.stringify(spec, null, 2));
  await cli(['eval', 'holdout.eval.json'], dir, cacheDir);
  return path.join(dir, 'evals', 'holdout');
}

/** The panel's webview document (two nested iframes in the workbench). */
function evalFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

export function evalTests(suffix) {
  return [
    {
      name: `eval${suffix}: the Runs view's results row opens the table with intervals and the checkpoint curve`,
      async run({ page, open, workspace, sandbox, screenshot }) {
        await makeResults(workspace, sandbox);
        await open();
        await openTinker(page);
        const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'holdout' }).first();
        await row.locator('.label-description', { hasText: /\d+ targets · 60 problems · n=4/ }).waitFor({ timeout: 60_000 });
        await row.click();
        const frame = evalFrame(page);
        // the base model, then the run's checkpoints, each metric with its interval
        const [baseModel] = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/holdout.eval.json'), 'utf8')).targets;
        await frame.locator('#table tr', { hasText: baseModel }).waitFor({ timeout: 60_000 });
        await frame.locator('#table tr', { hasText: 'demo' }).first().waitFor({ timeout: 30_000 });
        await frame.locator('#table td .interval').first().waitFor({ timeout: 30_000 });
        await frame.locator('#curve-figure:not([hidden]) #curve polyline').waitFor({ state: 'attached', timeout: 30_000 });
        await screenshot(`eval-table${suffix}`);
      },
    },
    {
      name: `eval${suffix}: the per-problem matrix, sorted by regressed vs baseline`,
      async run({ page, screenshot }) {
        const frame = evalFrame(page);
        await frame.locator('#sort').selectOption('regressed');
        await frame.locator('#matrix').scrollIntoViewIfNeeded();
        await frame.locator('#cell-0-1').waitFor({ timeout: 30_000 });
        await screenshot(`eval-matrix${suffix}`);
      },
    },
    {
      name: `eval${suffix}: a matrix cell opens the problem's samples of two targets in the diff editor`,
      async run({ page, screenshot }) {
        const frame = evalFrame(page);
        await frame.locator('#cell-0-1').click();
        await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 60_000 });
        await page.locator('.monaco-diff-editor .view-line').first().waitFor({ timeout: 30_000 });
        await screenshot(`eval-diff${suffix}`);
      },
    },
  ];
}
