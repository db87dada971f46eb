// W&B as a person meets it, in a real workbench: "Tinker: Set W&B API Key" typed into the real
// password box, an SFT spec with wandb_project started from its CodeLens, logging to the recording
// W&B stand-in (test/unit/tracking/wandbStandIn.ts, compiled to out/ by `npm run compile-tests`;
// W&B's servers cannot run here) set as tinker.wandb.baseUrl. Then the link where the issue puts it:
// the metrics panel header (its meta line and "Open in W&B" button), the Runs view tooltip, and the
// comparison table's W&B column. Screenshots (suffix '' or '-dark'): wandb-metrics-header,
// wandb-runs-tooltip, wandb-compare-table.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSftExample } from './checkpoints.ui.mjs';
import { widenSidebar } from './grpo-steps.mjs';
import { openTinker, pane, quickOpen, runCommand } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const RUN_TIMEOUT = 300_000;
const KEY = 'uistandinkey_' + 'e'.repeat(27);
const PROJECT = 'arith-sft';

/** The user settings of the sandbox's code-server, with `patch` merged in (read when the workbench opens). */
function patchUserSettings(sandbox, patch) {
  const file = path.join(sandbox, 'user-data/User/settings.json');
  fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), ...patch }, null, 2));
}

export function wandbTests(suffix) {
  let standIn;
  let runUrl;
  return [
    {
      name: 'Set W&B API Key: the key typed into the password box; an SFT run with wandb_project logs to the W&B host with it',
      async run({ page, open, sandbox, workspace }) {
        const { WandbStandIn } = require(path.join(root, 'out/test/unit/tracking/wandbStandIn.js'));
        standIn = new WandbStandIn();
        const baseUrl = await standIn.listen();
        standIn.unref();
        patchUserSettings(sandbox, { 'tinker.wandb.baseUrl': baseUrl });
        writeSftExample(workspace, 'wandb', { name: 'wandb-demo', max_steps: 6, batch_size: 16, eval_every: 2, save_every: 0, wandb_project: PROJECT, wandb_tags: ['sft', 'arithmetic'] });
        await open();
        await openTinker(page);
        await runCommand(page, 'Tinker: Set W&B API Key');
        const input = page.locator('.quick-input-widget');
        await input.locator('input[type="password"]').waitFor({ timeout: 15_000 });
        await page.keyboard.type('two words');
        await input.getByText('A W&B API key is one word with no spaces.').waitFor({ timeout: 15_000 });
        await page.keyboard.press('Control+A');
        await page.keyboard.type(KEY);
        await page.keyboard.press('Enter');
        await page.locator('.notification-toast', { hasText: 'W&B API key saved in VS Code secret storage.' }).waitFor({ timeout: 15_000 });

        await quickOpen(page, 'wandb-demo.sft.json');
        await page.locator('.codelens-decoration a', { hasText: 'Start run' }).click({ timeout: 30_000 });
        const toast = page.locator('.notification-toast', { hasText: 'SFT run wandb-demo completed' });
        await toast.waitFor({ timeout: RUN_TIMEOUT });

        const ups = standIn.upserts();
        if (ups.length !== 1 || ups[0].project !== PROJECT || ups[0].displayName === undefined) throw new Error(`the stand-in got ${JSON.stringify(ups)}`);
        runUrl = `${baseUrl}/stand-in-user/${PROJECT}/runs/${ups[0].name}`;
        const basic = `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`;
        if (!standIn.requests.every((r) => r.authorization === basic)) throw new Error('a request to the W&B host without the key typed in the password box');
        const rows = standIn.history(ups[0].name).filter((h) => h.train_mean_nll !== undefined).map((h) => h._step);
        if (rows.join() !== '0,1,2,3,4,5') throw new Error(`the stand-in got history steps ${rows.join()}`);
        await toast.getByRole('button', { name: 'Open Metrics' }).click();
      },
    },
    {
      name: 'the metrics panel header shows the run\'s W&B link and an "Open in W&B" button',
      async run({ page, screenshot }) {
        const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
        await frame.locator('#run-name', { hasText: 'wandb-demo' }).waitFor({ timeout: 60_000 });
        await frame.getByText(`W&B: ${runUrl}`).waitFor({ timeout: 30_000 });
        await frame.locator('#wandb:not([hidden])', { hasText: 'Open in W&B' }).waitFor({ timeout: 30_000 });
        await frame.locator('.chart .uplot canvas').first().waitFor({ timeout: 60_000 });
        await screenshot(`wandb-metrics-header${suffix}`);
      },
    },
    {
      name: 'the Runs view tooltip carries the W&B link',
      async run({ page, screenshot }) {
        await openTinker(page);
        await widenSidebar(page, 560);
        const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'wandb-demo' }).first();
        await row.waitFor({ timeout: 30_000 });
        const hover = page.locator('.monaco-hover, .workbench-hover', { hasText: `W&B: ${runUrl}` });
        // a hover opens once the pointer rests on the row; move off and back until it shows
        for (let i = 0; i < 5 && !(await hover.isVisible()); i++) {
          await page.mouse.move(900, 20);
          await row.hover();
          await hover.waitFor({ timeout: 10_000 }).catch(() => undefined);
        }
        await hover.locator('a', { hasText: runUrl }).waitFor({ timeout: 10_000 });
        await screenshot(`wandb-runs-tooltip${suffix}`);
      },
    },
    {
      name: 'the comparison table links the run\'s W&B page',
      async run({ page, screenshot }) {
        await page.mouse.move(900, 20);
        await runCommand(page, 'Tinker: Compare Runs…');
        const pick = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'wandb-demo' }).first();
        await pick.waitFor({ timeout: 15_000 });
        await pick.click(); // a click on a row of a many-pick toggles its check box
        await page.locator('.quick-input-widget', { hasText: '1 Selected' }).waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
        const link = frame.locator('table.runs button.link', { hasText: 'W&B ↗' });
        await link.waitFor({ timeout: 60_000 });
        if ((await link.getAttribute('title')) !== runUrl) throw new Error(`the W&B link points at ${await link.getAttribute('title')}`);
        if ((await frame.locator('table.runs th', { hasText: /^wandb\.(id|url)/ }).count()) > 0) throw new Error('wandb.id / wandb.url shown as config columns');
        await screenshot(`wandb-compare-table${suffix}`);
        await standIn.close();
      },
    },
  ];
}
