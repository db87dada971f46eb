// The getting-started walkthrough as a newcomer meets it: opened from the palette, its steps complete
// on the real events (a backend chosen, the example opened), and the palette shows Cancel Run only
// while a run is going.
import { openTinker, runCommand } from './palette.mjs';

const EDITOR = '#workbench\\.parts\\.editor';
const step = (page, id) => page.locator(`button.getting-started-step[data-step-id$="${id}"]`);

async function openWalkthrough(page) {
  await runCommand(page, 'Welcome: Open Walkthrough...');
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.type('Tinker Studio');
  await palette.locator('.monaco-list-row', { hasText: 'Get started with Tinker Studio' }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.getByText('Choose where training runs').first().waitFor({ timeout: 30_000 });
}

/** Whether the command palette offers `title` (typed in full, so a long list cannot hide it); closes the palette. */
async function offered(page, title) {
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.press('F1');
  await palette.waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(title);
  const row = palette.locator('.monaco-list-row', { hasText: title });
  const found = await row
    .first()
    .waitFor({ timeout: 5_000 })
    .then(() => true)
    .catch(() => false);
  await page.keyboard.press('Escape');
  await palette.waitFor({ state: 'hidden', timeout: 15_000 });
  return found;
}

export const tests = [
  {
    name: 'the walkthrough opens from the palette, with its steps not yet done',
    async run({ page, open, screenshot }) {
      await open();
      await openTinker(page);
      await openWalkthrough(page);
      for (const id of ['backend', 'example', 'reward', 'run', 'metrics', 'agents']) {
        await step(page, id).waitFor({ timeout: 15_000 });
        if ((await step(page, id).getAttribute('aria-checked')) !== 'false') throw new Error(`step ${id} is already done`);
      }
      await screenshot('walkthrough');
    },
  },
  {
    name: 'choosing a backend and opening the example, from the walkthrough, complete their steps',
    async run({ page, screenshot }) {
      await page.locator(EDITOR).getByRole('button', { name: 'Choose Backend' }).click();
      const palette = page.locator('.quick-input-widget');
      await palette.locator('.monaco-list-row', { hasText: 'Local engine' }).waitFor({ timeout: 15_000 });
      await page.keyboard.type('Local engine');
      await page.keyboard.press('Enter');
      await palette.waitFor({ state: 'hidden', timeout: 15_000 });
      await page.locator('button.getting-started-step[data-step-id$="backend"][aria-checked="true"]').waitFor({ timeout: 30_000 });
      await step(page, 'example').click();
      await page.locator(EDITOR).getByRole('button', { name: 'Open Arithmetic Example' }).click();
      await page.locator('.tab', { hasText: 'arith.grpo.json' }).waitFor({ timeout: 30_000 });
      await page.locator('.tab', { hasText: 'reward.py' }).waitFor({ timeout: 30_000 });
      // back to the walkthrough's tab: "Welcome" in newer VS Code, "Walkthrough: Tinker Studio" in 1.96
      await page.locator('.tab', { hasText: /Welcome|Walkthrough: Tinker Studio/ }).first().click();
      await page.locator('button.getting-started-step[data-step-id$="example"][aria-checked="true"]').waitFor({ timeout: 30_000 });
      if ((await step(page, 'run').getAttribute('aria-checked')) !== 'false') throw new Error('the run step is done before any run');
      await screenshot('walkthrough-progress');
    },
  },
  {
    name: 'the palette offers Cancel Run only while a run is going',
    async run({ page, screenshot }) {
      if (await offered(page, 'Tinker: Cancel Run')) throw new Error('Cancel Run is offered while nothing runs');
      if (!(await offered(page, 'Tinker: Start GRPO Run'))) throw new Error('Start GRPO Run is missing from the palette');
      await page.keyboard.press('F1');
      await page.keyboard.type('Tinker: ');
      await screenshot('palette-tinker-idle');
      await page.keyboard.press('Escape');
      // start the example's run from its editor, then look again
      await page.locator('.tab', { hasText: 'arith.grpo.json' }).click();
      await runCommand(page, 'Tinker: Start GRPO Run');
      await page.locator('#workbench\\.parts\\.statusbar').getByText(/GRPO arith: iteration/).waitFor({ timeout: 120_000 });
      if (!(await offered(page, 'Tinker: Cancel Run'))) throw new Error('Cancel Run is not offered while a run is going');
      await page.keyboard.press('F1');
      await page.keyboard.type('Tinker: ');
      await screenshot('palette-tinker-running');
      await page.keyboard.press('Escape');
      await runCommand(page, 'Tinker: Cancel Run');
      await page.locator('#workbench\\.parts\\.statusbar').getByText(/GRPO arith: iteration/).waitFor({ state: 'detached', timeout: 120_000 });
      // back to the walkthrough's tab: "Welcome" in newer VS Code, "Walkthrough: Tinker Studio" in 1.96
      await page.locator('.tab', { hasText: /Welcome|Walkthrough: Tinker Studio/ }).first().click();
      await page.locator('button.getting-started-step[data-step-id$="run"][aria-checked="true"]').waitFor({ timeout: 30_000 });
    },
  },
];
