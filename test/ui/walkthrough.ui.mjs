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

/** The Tinker rows the command palette offers for "Tinker:" (closes the palette after). */
async function tinkerCommands(page) {
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.press('F1');
  await palette.waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type('Tinker: ');
  await palette.locator('.monaco-list-row', { hasText: 'Tinker: Select Backend' }).first().waitFor({ timeout: 15_000 });
  const rows = await palette.locator('.monaco-list-row').allInnerTexts();
  return rows;
}

export const tests = [
  {
    name: 'the walkthrough opens from the palette, with its steps not yet done',
    async run({ page, open, screenshot }) {
      await open();
      await openTinker(page);
      await openWalkthrough(page);
      for (const id of ['backend', 'example', 'reward', 'run', 'metrics']) {
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
      await page.locator('.tab', { hasText: 'Welcome' }).first().click();
      await page.locator('button.getting-started-step[data-step-id$="example"][aria-checked="true"]').waitFor({ timeout: 30_000 });
      if ((await step(page, 'run').getAttribute('aria-checked')) !== 'false') throw new Error('the run step is done before any run');
      await screenshot('walkthrough-progress');
    },
  },
  {
    name: 'the palette offers Cancel Run only while a run is going',
    async run({ page, screenshot }) {
      const idle = await tinkerCommands(page);
      await screenshot('palette-tinker-idle');
      await page.keyboard.press('Escape');
      if (idle.some((r) => r.includes('Tinker: Cancel Run'))) throw new Error('Cancel Run is offered while nothing runs');
      if (!idle.some((r) => r.includes('Tinker: Start GRPO Run'))) throw new Error('Start GRPO Run is missing from the palette');
      // start the example's run from its editor, then look again
      await page.locator('.tab', { hasText: 'arith.grpo.json' }).click();
      await runCommand(page, 'Tinker: Start GRPO Run');
      await page.locator('#workbench\\.parts\\.statusbar').getByText(/GRPO arith: iteration/).waitFor({ timeout: 120_000 });
      const running = await tinkerCommands(page);
      await screenshot('palette-tinker-running');
      await page.keyboard.press('Escape');
      if (!running.some((r) => r.includes('Tinker: Cancel Run'))) throw new Error(`Cancel Run is not offered while a run is going: ${running.join(' | ')}`);
      await runCommand(page, 'Tinker: Cancel Run');
      await page.locator('#workbench\\.parts\\.statusbar').getByText(/GRPO arith: iteration/).waitFor({ state: 'detached', timeout: 120_000 });
      await page.locator('.tab', { hasText: 'Welcome' }).first().click();
      await page.locator('button.getting-started-step[data-step-id$="run"][aria-checked="true"]').waitFor({ timeout: 30_000 });
    },
  },
];
