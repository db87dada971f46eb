// Compare Runs at the scale issue 25 names, through the person's own entry point: 50 runs × 2,000
// steps × 40 metrics (~156 MB of metrics.jsonl) written into the workspace's runs folder, then
// "Tinker: Compare Runs…" from the command palette, the 50 runs picked, Enter. It checks that the
// panel shows all 50 rows and draws the charts on screen, cold (no column cache: built on the way)
// and warm (the panel closed and opened again), that a run hides, and that the x axis changes.
// It logs the wall times it saw (from Enter to the charts on screen drawn, and in the webview from the
// action to the next frame) but asserts none: a loaded CI machine must not fail it. The same
// figures in isolation: BENCH=compare npm run bench.
import fs from 'node:fs';
import path from 'node:path';
import { openTinker, runCommand } from './palette.mjs';
import { commandCenter, webviewWith } from './grpo-steps.mjs';

const RUNS = 50;
const STEPS = 2000;
const METRICS = 40;
const LOAD_TIMEOUT = 300_000;

/** The bench's data (bench/compare.bench.ts makeRuns), as run directories of the workspace's runs folder. */
function writeRuns(runsDir) {
  const keys = ['env/all/reward/total', 'test/env/all/reward/total', 'time/total', 'progress/tokens_trained', 'optim/lr'];
  for (let k = keys.length; k < METRICS; k++) keys.push(`env/all/metric_${k}`);
  for (let r = 0; r < RUNS; r++) {
    const dir = path.join(runsDir, `scale-${String(r).padStart(2, '0')}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'tinker-studio/arith-gpt', learning_rate: 1e-4 * (1 + (r % 5)), seed: r, lora_rank: 32 }));
    const lines = [];
    let tokens = 0;
    for (let s = 0; s < STEPS; s++) {
      tokens += 1000 + ((s * 7 + r) % 100);
      const row = { step: s };
      for (const k of keys) row[k] = k === 'progress/tokens_trained' ? tokens : k === 'time/total' ? 1 + ((s + r) % 10) / 10 : Math.sin(s / 50 + r) + s / STEPS;
      lines.push(JSON.stringify(row));
    }
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
  }
}

/**
 * Evaluated in the webview by Playwright (self-contained: its CSP allows no eval): does `act` (a
 * run's checkbox, an x axis; none: only waits), then waits until every chart section on screen has
 * drawn its plot and the next frame has gone by; resolves to the ms since it began.
 */
async function inPanel(_charts, { act, timeout }) {
  const done = () => {
    const on = [...document.querySelectorAll('section.chart')].filter((s) => {
      const r = s.getBoundingClientRect();
      return r.bottom > 0 && r.top < window.innerHeight;
    });
    return on.length > 0 && on.every((s) => s.dataset.drawn === '1' && s.querySelector('.axis-plot:not([hidden]) canvas'));
  };
  const t0 = performance.now();
  if (act === 'toggle') document.querySelector('#runs tbody tr input[type=checkbox]').click();
  else if (act) {
    const sel = document.getElementById('x-axis');
    sel.value = act;
    sel.dispatchEvent(new Event('change'));
  }
  const until = Date.now() + timeout;
  while (!done()) {
    if (Date.now() > until) throw new Error(`the charts on screen were not drawn in ${timeout} ms`);
    await new Promise((r) => requestAnimationFrame(r));
  }
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return Math.round(performance.now() - t0);
}

/** "Tinker: Compare Runs…", the scale runs picked (typed filter, then the pick's check-all box), Enter: resolves to the ms from Enter until the 50 rows and the charts on screen are drawn. */
async function openComparison(page, log, label) {
  const tPick = Date.now();
  await runCommand(page, 'Tinker: Compare Runs…');
  const pick = page.locator('.quick-input-widget');
  await pick.locator('.monaco-list-row', { hasText: 'scale-49' }).first().waitFor({ timeout: LOAD_TIMEOUT });
  log(`the pick of runs listed them ${Date.now() - tPick} ms after the command was typed`);
  // only the scale runs shown (the workspace has another), then the pick's "toggle all" box checks the shown ones
  await pick.locator('.quick-input-box input').fill('scale-');
  await pick.locator('.monaco-list-row', { hasText: 'arith-demo' }).waitFor({ state: 'detached', timeout: 30_000 });
  await pick.getByRole('checkbox', { name: /toggle all/i }).first().click();
  await pick.getByText(`${RUNS} Selected`).waitFor({ timeout: 15_000 });
  const t0 = Date.now();
  await page.keyboard.press('Enter');
  const frame = await webviewWith(page, 'table#runs', LOAD_TIMEOUT);
  await frame.locator('table#runs tbody tr').nth(RUNS - 1).waitFor({ timeout: LOAD_TIMEOUT });
  await frame.locator('#charts').evaluate(inPanel, { timeout: LOAD_TIMEOUT });
  const ms = Date.now() - t0;
  log(`Compare Runs (${RUNS} runs × ${STEPS} steps × ${METRICS} metrics), ${label}: ${ms} ms from Enter in the pick to the table and the charts on screen drawn`);
  return { frame, ms };
}

const timeInFrame = (frame, act) => frame.locator('#charts').evaluate(inPanel, { act, timeout: 60_000 });

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

export const tests = [
  {
    name: 'Compare Runs… from the palette over 50 runs × 2,000 steps × 40 metrics: cold, then warm, a run hidden, the x axis changed',
    async run({ page, log, workspace, open, screenshot }) {
      const t = Date.now();
      writeRuns(path.join(workspace, 'runs'));
      log(`wrote ${RUNS} runs into the workspace's runs folder in ${Date.now() - t} ms`);
      await open();
      // the extension known to the workbench and active before its command is typed (the palette lists it only then)
      await openTinker(page);
      await page.locator('#workbench\\.parts\\.statusbar', { hasText: 'Tinker' }).waitFor({ timeout: 60_000 });
      const cold = await openComparison(page, log, 'cold (no column cache)');
      await screenshot('compare-scale-cold');
      await commandCenter(page, 'View: Close Editor');
      await page.locator('iframe.webview.ready').first().waitFor({ state: 'detached', timeout: 30_000 }).catch(() => undefined);
      const warm = await openComparison(page, log, 'warm (column caches present)');
      const frame = warm.frame;
      // the other x axes drawn ahead once the panel is quiet
      await frame.locator('#charts[data-ahead="1"]').waitFor({ state: 'attached', timeout: 120_000 });
      const toggle = [await timeInFrame(frame, 'toggle'), await timeInFrame(frame, 'toggle')];
      await frame.locator('#charts[data-ahead="1"]').waitFor({ state: 'attached', timeout: 120_000 });
      const axes = [];
      for (const a of ['wall', 'tokens', 'step']) {
        await frame.locator('#charts[data-ahead="1"]').waitFor({ state: 'attached', timeout: 120_000 });
        axes.push(`${a} ${await timeInFrame(frame, a)} ms`);
      }
      await frame.locator('#charts .chart').first().locator('.axis-plot[data-axis="step"]:not([hidden]) canvas').first().waitFor({ timeout: 60_000 });
      log(`in the panel: hide / show a run ${toggle.join(' / ')} ms; x axis → ${axes.join(', ')} (each to the next frame)`);
      log(`Compare Runs at scale through the palette: cold ${cold.ms} ms, warm ${warm.ms} ms`);
      await screenshot('compare-scale-warm');
    },
  },
];
