// Steps shared by benchmark-light.ui.mjs and benchmark-dark.ui.mjs: a GSM8K benchmark eval of
// tinker-studio/arith-chat made by the CLI as a user would (an eval spec with "benchmark": "gsm8k"),
// its rows read through the real hub loader from the datasets-server stand-in (the real
// datasets-server is on the internet; TINKER_DATASETS_SERVER points the loader at the stand-in);
// then the Runs view's results row opens the Eval Results panel on the benchmark's accuracy.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, pane } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(root, 'dist/cli.js');
// the stand-in the unit tests use (compiled by `npm run compile-tests`)
const { DatasetsServerStandIn } = createRequire(import.meta.url)(path.join(root, 'out/test/unit/evals/hubStandIn.js'));

function cli(args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`tinker-studio ${args.join(' ')} exited with ${code}:\n${out.slice(-2000)}`))));
  });
}

/** Evaluates arith-chat on a seeded subset of GSM8K (the stand-in's rows); the CLI's output. */
async function makeBenchmarkResults(workspace, sandbox) {
  const dir = path.join(workspace, 'bench');
  fs.mkdirSync(dir, { recursive: true });
  const spec = { benchmark: 'gsm8k', targets: ['tinker-studio/arith-chat'], max_problems: 40, n: 4, max_tokens: 48, seed: 7 };
  fs.writeFileSync(path.join(dir, 'gsm8k.eval.json'), `${JSON.stringify(spec, null, 2)}\n`);
  const hub = await new DatasetsServerStandIn().start();
  try {
    return await cli(['eval', 'gsm8k.eval.json', '--cache-dir', path.join(sandbox, 'tinker-cache')], dir, { TINKER_DATASETS_SERVER: hub.url });
  } finally {
    await hub.stop();
  }
}

function evalFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

export function benchmarkTests(suffix) {
  return [
    {
      name: `benchmark${suffix}: a GSM8K eval of arith-chat opens in the Eval Results panel with its accuracy and interval`,
      async run({ page, open, workspace, sandbox, screenshot }) {
        const out = await makeBenchmarkResults(workspace, sandbox);
        if (!/gsm8k accuracy of tinker-studio\/arith-chat: .* on 40 problems/.test(out)) throw new Error(`no GSM8K headline in the CLI's output:\n${out.slice(-2000)}`);
        await open();
        await openTinker(page);
        const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'gsm8k' }).first();
        await row.locator('.label-description', { hasText: /1 targets? · 40 problems · n=4/ }).waitFor({ timeout: 60_000 });
        await row.click();
        const frame = evalFrame(page);
        await frame.locator('#table tr', { hasText: 'tinker-studio/arith-chat' }).waitFor({ timeout: 60_000 });
        await frame.locator('#table td .interval').first().waitFor({ timeout: 30_000 });
        await screenshot(`benchmark-eval${suffix}`);
      },
    },
  ];
}
