// Steps shared by cost-light.ui.mjs and cost-dark.ui.mjs: a GRPO run of the arithmetic example with a
// budget (max_cost_usd) and a price table for the engine's model set in tinker.prices (the engine's
// models cost 0 otherwise), started from the command palette; the run stops before the step that
// would cross the budget and says so in a warning (budget-stop); Open Metrics shows the cumulative
// cost estimate next to reward (cost-chart). Observed in the UI, never waited out.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, pane, quickOpen, runCommand } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN_TIMEOUT = 360_000;

/** Dollars per million tokens for the engine's model: a few steps of the short run cost dollars. */
export const costSettings = { 'tinker.prices': { models: { 'tinker-studio/arith-chat': { prefill: 400, sample: 400, train: 400 } } } };

function writeBudgetSpec(workspace) {
  const dir = path.join(workspace, 'arith');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['train.jsonl', 'holdout.jsonl', 'reward.py']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));
  Object.assign(spec, { name: 'arith-budget', iterations: 12, groups_per_batch: 8, group_size: 4, eval_every: 0, save_every: 0, max_cost_usd: 3 });
  delete spec.dataset.holdout;
  fs.writeFileSync(path.join(dir, 'arith-budget.grpo.json'), `${JSON.stringify(spec, null, 2)}\n`);
}

function metricsFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

export function costTests(suffix) {
  return [
    {
      name: `cost${suffix}: a GRPO run with max_cost_usd stops before crossing it and says so`,
      async run({ page, open, workspace, screenshot }) {
        writeBudgetSpec(workspace);
        await open();
        await openTinker(page);
        await pane(page, 'Runs').waitFor({ timeout: 30_000 });
        await quickOpen(page, 'arith-budget.grpo.json');
        await page.locator('.codelens-decoration', { hasText: 'Start run' }).waitFor({ timeout: 30_000 });
        await runCommand(page, 'Tinker: Start GRPO Run');
        const toast = page.locator('.notification-toast', { hasText: 'GRPO run arith-budget stopped at $' });
        await toast.waitFor({ timeout: RUN_TIMEOUT });
        const text = await toast.innerText();
        if (!/of \$3\.00 \(estimate\); resume with a higher budget to continue/.test(text)) throw new Error(`unexpected budget stop: ${text}`);
        await toast.locator('.monaco-button', { hasText: 'Resume Run' }).waitFor({ timeout: 15_000 });
        await screenshot(`budget-stop${suffix}`);
      },
    },
    {
      name: `cost${suffix}: Open Metrics charts the cumulative cost estimate next to reward`,
      async run({ page, screenshot }) {
        const toast = page.locator('.notification-toast', { hasText: 'GRPO run arith-budget stopped at $' });
        await toast.locator('.monaco-button', { hasText: 'Open Metrics' }).click();
        const frame = metricsFrame(page);
        await frame.locator('#run-name', { hasText: 'arith-budget' }).waitFor({ timeout: 60_000 });
        const chart = frame.locator('.chart', { has: frame.locator('#chart-cost-title') });
        await chart.locator('.uplot canvas').waitFor({ timeout: 60_000 });
        await chart.locator('.latest', { hasText: /estimate \$\d/ }).waitFor({ timeout: 30_000 });
        await frame.locator('.chart', { has: frame.locator('#chart-reward-title') }).locator('.uplot canvas').waitFor({ timeout: 30_000 });
        await screenshot(`cost-chart${suffix}`);
      },
    },
  ];
}
