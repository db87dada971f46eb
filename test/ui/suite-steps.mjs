// Steps shared by suite-light.ui.mjs and suite-dark.ui.mjs: a suite of three layers on the arithmetic
// example (training: pass@1 on training problems; benchmark: the mean reward on the holdout, with a
// floor; product: pass@1 on the holdout, non-inferiority), run by the CLI as a user would on the base
// model tinker-studio/arith-gpt and on tinker-studio/random-gpt (the embedded engine); then in the
// workbench the suite file's CodeLens opens the result (one table by layer with 95 % intervals and n)
// and Compare Suites puts both side by side with the paired difference and the gate's verdicts.
// Results are observed in the UI, never waited out.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, quickOpen } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(root, 'dist/cli.js');
const ARITH = 'tinker-studio/arith-gpt';
const RANDOM = 'tinker-studio/random-gpt';

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

/** Writes the suite next to a copy of the arithmetic example's data and runs it on both models. */
async function makeSuiteResults(workspace, sandbox) {
  const dir = path.join(workspace, 'arith-suite');
  fs.mkdirSync(dir, { recursive: true });
  const lines = (f, n) => fs.readFileSync(path.join(root, 'examples/arithmetic', f), 'utf8').split('\n').filter(Boolean).slice(0, n).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'holdout.jsonl'), lines('holdout.jsonl', 40));
  fs.writeFileSync(path.join(dir, 'train.jsonl'), lines('train.jsonl', 40));
  fs.copyFileSync(path.join(root, 'examples/arithmetic/reward.py'), path.join(dir, 'reward.py'));
  const sampling = { n: 4, temperature: 1, max_tokens: 6, seed: 0, backend: 'local', renderer: 'chatml', targets: [ARITH] };
  const evalOn = (data) => ({ dataset: { path: data, prompt_field: 'question', ground_truth_field: 'answer' }, grader: { file: 'reward.py' }, ...sampling });
  fs.writeFileSync(path.join(dir, 'holdout.eval.json'), JSON.stringify(evalOn('holdout.jsonl'), null, 2) + '\n');
  const suite = {
    entries: [
      { eval: 'holdout.eval.json', layer: 'product', gate: { non_inferiority: 0.02 } },
      { name: 'holdout-reward', eval: evalOn('holdout.jsonl'), layer: 'benchmark', metric: 'reward', gate: { min: 0.3 } },
      { name: 'train-fit', eval: evalOn('train.jsonl'), layer: 'training', gate: { non_inferiority: 0.05 } },
    ],
  };
  fs.writeFileSync(path.join(dir, 'arith.suite.json'), JSON.stringify(suite, null, 2) + '\n');
  const cacheDir = path.join(sandbox, 'tinker-cache');
  for (const model of [ARITH, RANDOM]) await cli(['suite', 'run', 'arith.suite.json', model, '--backend', 'local'], dir, cacheDir);
}

/** The webview document of the suite panel (two nested iframes in the workbench). */
function suiteFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

/** In the quick pick titled `title` (so nothing is typed before it shows), picks the row that shows `text`. */
async function pick(page, title, text) {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ timeout: 30_000 });
  await page.keyboard.type(text);
  await widget.locator('.monaco-list-row', { hasText: text }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
}

export function suiteTests(suffix) {
  return [
    {
      name: `suite${suffix}: the suite file's CodeLens opens its result, one table by layer with intervals and n`,
      async run({ page, open, workspace, sandbox, screenshot }) {
        await makeSuiteResults(workspace, sandbox);
        await open();
        await openTinker(page);
        await quickOpen(page, 'arith.suite.json');
        const results = page.locator('.codelens-decoration a', { hasText: 'Results (2)' }).first();
        await results.waitFor({ timeout: 60_000 });
        await results.click();
        await pick(page, 'Tinker: Open Suite Results', 'arith-gpt');
        const frame = suiteFrame(page);
        for (const layer of ['Training', 'Benchmark', 'Product']) await frame.locator('#table tr.layer-head', { hasText: layer }).waitFor({ timeout: 60_000 });
        await frame.locator('#table tr[data-entry="holdout"] td .interval').first().waitFor({ timeout: 30_000 });
        await frame.locator('#title', { hasText: 'Suite: arith' }).waitFor({ timeout: 15_000 });
        await screenshot(`suite-table${suffix}`);
      },
    },
    {
      name: `suite${suffix}: Compare Suites puts both checkpoints side by side with the paired difference and the gate's verdicts`,
      async run({ page, screenshot }) {
        // the panel holds the focus: back to the suite file by its tab
        await page.locator('.tab', { hasText: 'arith.suite.json' }).first().click();
        const compare = page.locator('.codelens-decoration a', { hasText: 'Compare Suites' }).first();
        await compare.waitFor({ timeout: 30_000 });
        await compare.click();
        await pick(page, 'Tinker: Compare Suites (1/2)', 'arith-gpt');
        await pick(page, 'Tinker: Compare Suites (2/2)', 'random-gpt');
        const frame = suiteFrame(page);
        await frame.locator('#title', { hasText: 'Compare Suites: arith' }).waitFor({ timeout: 60_000 });
        await frame.locator('#table tr[data-entry="holdout"] td.verdict .mark').waitFor({ timeout: 30_000 });
        // the floor no reward here reaches: its reason under the entry
        await frame.locator('#table tr.reasons-row li.fail', { hasText: 'holdout-reward: reward' }).waitFor({ timeout: 30_000 });
        await frame.locator('#verdict.pass, #verdict.fail').waitFor({ timeout: 30_000 });
        await screenshot(`suite-compare${suffix}`);
      },
    },
  ];
}
