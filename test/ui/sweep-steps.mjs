// Steps shared by sweep-light.ui.mjs and sweep-dark.ui.mjs: a 2×2 sweep (learning rate × LoRA rank) of
// a short arithmetic spec started from the sweep file through "Tinker: Start Sweep" on the local engine;
// the Runs view's sweep node (progress, then its four runs under it), Compare Runs from its context
// menu (table + overlaid charts, the best run marked) and the sweep's sensitivity view, with
// screenshots: sweep-running, sweep-node, sweep-node-tooltip, compare-sweep, compare-charts, compare-table-charts, sweep-sensitivity. Completion is observed in the UI, never waited out.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { contextMenu, openTinker, pane, quickOpen, runCommand } from './palette.mjs';
import { commandCenter, webviewWith, widenSidebar } from './grpo-steps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SWEEP_TIMEOUT = 600_000;

/** The arithmetic example's data and reward under sweep/, a short spec and a 4-point sweep of it. */
export function writeSweep(workspace) {
  const dir = path.join(workspace, 'sweep');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['train.jsonl', 'reward.py']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
  const spec = JSON.parse(fs.readFileSync(path.join(root, 'examples/arithmetic/arith.grpo.json'), 'utf8'));
  Object.assign(spec, { name: 'arith-sweep', iterations: 6, groups_per_batch: 4, group_size: 4, eval_every: 0, save_every: 3 });
  delete spec.dataset.holdout;
  delete spec.dataset.holdout_max;
  fs.writeFileSync(path.join(dir, 'arith-sweep.grpo.json'), `${JSON.stringify(spec, null, 2)}\n`);
  const sweep = {
    base: 'arith-sweep.grpo.json',
    method: 'grid',
    parameters: { learning_rate: { values: [0.001, 0.004] }, lora_rank: { values: [4, 8] } },
    metric: { name: 'env/all/reward/total', goal: 'maximize' },
    early_terminate: { type: 'median', min_iter: 3, min_runs: 2 },
  };
  fs.writeFileSync(path.join(dir, 'lr-rank.sweep.json'), `${JSON.stringify(sweep, null, 2)}\n`);
}

export function sweepTests(suffix) {
  const shot = (name) => `${name}${suffix}`;
  const node = (page) => pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'lr-rank' }).first();
  return [
    {
      name: 'sweep: Start Sweep on the open sweep file runs it; the Runs view shows one sweep node with its progress',
      async run({ page, open, workspace, screenshot }) {
        writeSweep(workspace);
        await open();
        await openTinker(page);
        await widenSidebar(page, 640);
        await quickOpen(page, 'lr-rank.sweep.json');
        await page.locator('.codelens-decoration', { hasText: 'Start Sweep' }).waitFor({ timeout: 30_000 });
        await runCommand(page, 'Tinker: Start Sweep');
        await page.locator('.notification-toast', { hasText: 'Sweep lr-rank' }).first().waitFor({ timeout: 60_000 });
        await node(page).filter({ hasText: /\d\/4 done, 1 running/ }).waitFor({ timeout: 120_000 });
        await page.locator('.codelens-decoration', { hasText: 'Cancel Sweep' }).waitFor({ timeout: 30_000 });
        await screenshot(shot('sweep-running'));
        await node(page).filter({ hasText: /4\/4 done/ }).waitFor({ timeout: SWEEP_TIMEOUT });
        await page.locator('.notification-toast', { hasText: /Sweep lr-rank: 4\/4 done/ }).waitFor({ timeout: 30_000 });
      },
    },
    {
      name: 'sweep: the sweep node expands to its four runs; its menu offers Compare but neither Resume nor Cancel once done',
      async run({ page, screenshot }) {
        const runs = pane(page, 'Runs');
        await node(page).locator('.monaco-tl-twistie').click();
        for (const lr of ['0.001', '0.004']) for (const rank of ['4', '8']) await runs.locator('.monaco-list-row', { hasText: `learning_rate_${lr}.lora_rank_${rank}` }).first().waitFor({ timeout: 30_000 });
        await page.mouse.move(1100, 790);
        await screenshot(shot('sweep-node'));
        // its tooltip names the metric and the best run (read when hovered)
        // a tree row re-rendered under a still pointer (the view follows the runs folder) drops its
        // pending hover, and a pointer that does not move raises no new one: point at it again until
        // the hover shows (the gesture is repeated, the condition waited on; 60 s in all)
        const tip = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: 'Best run' }).first();
        const deadline = Date.now() + 60_000;
        for (;;) {
          await page.mouse.move(1100, 790);
          await node(page).locator('.label-name').hover();
          try {
            await tip.waitFor({ timeout: 5_000 });
            break;
          } catch (err) {
            if (Date.now() > deadline) throw err;
          }
        }
        await screenshot(shot('sweep-node-tooltip'));
        await page.mouse.move(1100, 790);
        const menu = await contextMenu(page, node(page));
        const labels = await menu.locator('.action-label').allTextContents();
        if (!labels.some((l) => l.includes('Compare Runs'))) throw new Error(`no Compare Runs in the sweep node's menu: ${labels.join(' | ')}`);
        if (labels.some((l) => /Resume Sweep|Cancel Sweep/.test(l))) throw new Error(`a finished sweep offers ${labels.join(' | ')}`);
        await page.keyboard.press('Escape');
        await menu.waitFor({ state: 'hidden', timeout: 15_000 });
        await contextMenu(page, node(page), 'Compare Runs');
      },
    },
    {
      name: 'sweep: Compare Runs shows the four runs ranked by the sweep metric, the best marked, with overlaid charts',
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, 'table#runs');
        await frame.locator('#title', { hasText: 'lr-rank' }).waitFor({ timeout: 60_000 });
        await frame.locator('table#runs tbody tr').nth(3).waitFor({ timeout: 60_000 });
        await frame.locator('table#runs tr.best').first().waitFor({ timeout: 30_000 });
        await commandCenter(page, 'Notifications: Clear All Notifications');
        await page.locator('.notification-toast').first().waitFor({ state: 'detached', timeout: 15_000 });
        if (await page.locator('#workbench\\.parts\\.sidebar').isVisible()) {
          await page.keyboard.press('Control+B');
          await page.locator('#workbench\\.parts\\.sidebar').waitFor({ state: 'hidden', timeout: 15_000 });
        }
        await page.mouse.move(1100, 790);
        await screenshot(shot('compare-sweep'));
        // the overlaid charts draw when scrolled into view
        await frame.locator('#charts .chart').first().scrollIntoViewIfNeeded();
        await frame.locator('#charts .chart .uplot canvas').first().waitFor({ timeout: 60_000 });
        // pointing at a chart lists every run's value at that x under it (the gesture repeated until it shows: a redraw under a still pointer shows nothing new)
        const over = frame.locator('#charts .chart .u-over').first();
        const readout = frame.locator('#charts .chart').first().locator('ul.readout li');
        const until = Date.now() + 60_000;
        for (let i = 0; (await readout.count()) !== 4; i++) {
          if (Date.now() > until) throw new Error(`the hover readout under the first chart lists ${await readout.count()} runs, not 4`);
          const box = await over.boundingBox();
          if (box) await page.mouse.move(box.x + box.width * (0.55 + (i % 3) * 0.1), box.y + box.height / 2, { steps: 4 });
          await frame.locator('#charts .chart').first().locator('ul.readout li').nth(3).waitFor({ timeout: 2_000 }).catch(() => undefined);
        }
        const values = await readout.allInnerTexts();
        if (!values.every((t) => /\d/.test(t))) throw new Error(`a readout entry without a value: ${values.join(' | ')}`);
        await screenshot(shot('compare-charts'));
        // another x axis: the chart shows its plot on tokens trained (drawn ahead or on demand), and pointing at it reads that axis
        await frame.locator('#x-axis').selectOption('tokens');
        const first = frame.locator('#charts .chart').first();
        await first.locator('.axis-plot[data-axis="tokens"]:not([hidden]) canvas').first().waitFor({ timeout: 60_000 });
        const head = first.locator('.hint-line');
        const until2 = Date.now() + 60_000;
        for (let i = 0; !/^tokens trained \d/.test((await head.innerText()) ?? ''); i++) {
          if (Date.now() > until2) throw new Error(`the readout on tokens trained never showed: "${await head.innerText()}"`);
          const box = await first.locator('.axis-plot[data-axis="tokens"] .u-over').boundingBox();
          if (box) await page.mouse.move(box.x + box.width * (0.5 + (i % 3) * 0.1), box.y + box.height / 2, { steps: 4 });
          await first.locator('ul.readout li').nth(3).waitFor({ timeout: 2_000 }).catch(() => undefined);
        }
        await frame.locator('#x-axis').selectOption('step');
        await first.locator('.axis-plot[data-axis="step"]:not([hidden]) canvas').first().waitFor({ timeout: 60_000 });
        await frame.locator('#title').scrollIntoViewIfNeeded();
      },
    },
    {
      name: "sweep: folding the sweep's views brings the overlaid charts up under the runs table",
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#sweep');
        await frame.locator('#title').scrollIntoViewIfNeeded();
        await frame.locator('#sweep > summary').click();
        await frame.locator('#sweep:not([open])').waitFor({ timeout: 15_000 });
        // the first row of charts is now on screen under the table, and draws
        const chart = frame.locator('#charts .chart').first();
        await chart.locator('.axis-plot:not([hidden]) canvas').first().waitFor({ timeout: 60_000 });
        const box = await chart.boundingBox();
        const view = page.viewportSize();
        if (!box || !view || box.y + box.height / 2 > view.height) throw new Error(`the first chart is not on screen under the table: ${JSON.stringify(box)}`);
        await frame.locator('table#runs tbody tr').nth(3).waitFor({ state: 'visible', timeout: 10_000 });
        await page.mouse.move(1100, 790);
        await screenshot(shot('compare-table-charts'));
        await frame.locator('#sweep > summary').click();
        await frame.locator('#sweep[open]').waitFor({ timeout: 15_000 });
      },
    },
    {
      name: 'sweep: its sensitivity view plots the metric against each swept field, with parallel coordinates for two fields',
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#sweep');
        const section = frame.locator('#sweep');
        await section.locator('svg circle').first().waitFor({ timeout: 30_000 });
        await section.locator('[aria-label^="sensitivity of env/all/reward/total to learning_rate"]').waitFor({ timeout: 10_000 });
        await section.locator('[aria-label^="sensitivity of env/all/reward/total to lora_rank"]').waitFor({ timeout: 10_000 });
        await section.scrollIntoViewIfNeeded();
        await page.mouse.move(1100, 790);
        await screenshot(shot('sweep-sensitivity'));
      },
    },
  ];
}
