// Steps shared by models-light.ui.mjs and models-dark.ui.mjs: a workspace whose tinker-models.json
// holds the registry walk's three versions with crafted suite results (written by the real registry
// core through the host tests' fixture, test/suite/models/modelFixture.ts, compiled to out/): arith@v1
// in production with an expiring checkpoint, arith@v2 a worse candidate, arith@v3 a better one. Then in
// the workbench: the Models view grouped by status, a version's model card (the suite metric across
// versions with intervals, the gate refusing with the paired numbers), and Promote from the view's
// context menu refused in one message with "Promote Anyway…". Observed in the UI, never waited out.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { widenSidebar } from './grpo-steps.mjs';
import { contextMenu, openTinker, pane } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);

async function makeRegistry(workspace) {
  const { craftRegistry } = require(path.join(root, 'out/test/suite/models/modelFixture.js'));
  const { setExpiry } = require(path.join(root, 'out/src/core/models/lifecycle.js'));
  const file = path.join(workspace, 'tinker-models.json');
  await craftRegistry(file);
  await setExpiry(file, 'arith@v1', '2026-12-24T09:00:00.000Z');
  return file;
}

function cardFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

async function showModels(page) {
  await openTinker(page);
  const header = page.locator('.pane-header', { hasText: 'Models' });
  await header.waitFor({ timeout: 30_000 });
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  // the Runs and Checkpoints views are empty here: fold them so the Models view has the room
  for (const other of ['Runs', 'Checkpoints']) {
    const h = page.locator('.pane-header', { hasText: other }).first();
    if ((await h.getAttribute('aria-expanded')) === 'true') await h.click();
  }
  await widenSidebar(page, 560);
  return pane(page, 'Models');
}

export function modelsTests(suffix) {
  return [
    {
      name: `models${suffix}: the Models view groups the registry's versions by status`,
      async run({ page, open, workspace, screenshot }) {
        await makeRegistry(workspace);
        await open();
        const models = await showModels(page);
        await models.locator('.monaco-list-row', { hasText: 'arith@v1' }).locator('.label-description', { hasText: /expires/ }).waitFor({ timeout: 60_000 });
        for (const g of ['production', 'candidate']) await models.locator('.monaco-list-row', { hasText: g }).first().waitFor({ timeout: 30_000 });
        await models.locator('.monaco-list-row', { hasText: 'arith@v2' }).locator('.label-description', { hasText: /pass@1 0\.2/ }).waitFor({ timeout: 30_000 });
        await screenshot(`models-view${suffix}`);
      },
    },
    {
      name: `models${suffix}: a version's model card: the metric across versions with intervals, and the gate's paired verdict`,
      async run({ page, screenshot }) {
        const models = pane(page, 'Models');
        await models.locator('.monaco-list-row', { hasText: 'arith@v2' }).click();
        const frame = cardFrame(page);
        await frame.locator('#title', { hasText: 'arith@v2' }).waitFor({ timeout: 60_000 });
        await frame.locator('#charts svg .whisker').first().waitFor({ state: 'attached', timeout: 30_000 });
        await frame.locator('#gate li.negative', { hasText: 'paired difference' }).waitFor({ timeout: 30_000 });
        // keyboard: Tab reaches the card's first action
        await frame.locator('button.action').first().focus();
        await screenshot(`model-card${suffix}`);
      },
    },
    {
      name: `models${suffix}: Promote from the context menu is refused with every reason and "Promote Anyway…"`,
      async run({ page, screenshot }) {
        const models = pane(page, 'Models');
        await contextMenu(page, models.locator('.monaco-list-row', { hasText: 'arith@v2' }), 'Promote Model Version');
        const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'production' }).first();
        await pick.waitFor({ timeout: 15_000 });
        await pick.click();
        const toast = page.locator('.notification-toast', { hasText: 'was not promoted to production' });
        await toast.waitFor({ timeout: 60_000 });
        await toast.getByRole('button', { name: 'Promote Anyway…' }).waitFor({ timeout: 15_000 });
        await screenshot(`model-promote-refused${suffix}`);
      },
    },
  ];
}
