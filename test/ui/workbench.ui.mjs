// The Tinker activity-bar container, its views and the command palette, driven like a person would.
import fs from 'node:fs';
import path from 'node:path';
import { openTinker, pane, runCommand } from './palette.mjs';

const STATUS = '#workbench\\.parts\\.statusbar';

export const tests = [
  {
    name: 'the Tinker container shows the Runs view with the workspace run',
    async run({ page, open, screenshot }) {
      await open();
      await openTinker(page);
      const runs = pane(page, 'Runs');
      await runs.locator('.monaco-list-row', { hasText: 'arith-demo' }).waitFor({ timeout: 30_000 });
      await runs.locator('.monaco-list-row', { hasText: 'iteration 2' }).waitFor({ timeout: 10_000 });
      await screenshot('tinker-view-runs');
    },
  },
  {
    name: 'the Checkpoints view lists the run with its checkpoint and path',
    async run({ page, screenshot }) {
      const ckpts = pane(page, 'Checkpoints');
      const header = page.locator('.pane-header', { hasText: 'Checkpoints' });
      if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
      await ckpts.locator('.monaco-list-row', { hasText: '000002' }).waitFor({ timeout: 30_000 });
      await ckpts.locator('.monaco-list-row', { hasText: 'state + sampler' }).waitFor({ timeout: 10_000 });
      await screenshot('tinker-view-checkpoints');
    },
  },
  {
    name: 'Show Available Models starts the local engine and lists its models in a quick pick',
    async run({ page, screenshot }) {
      await runCommand(page, 'Tinker: Show Available Models');
      const palette = page.locator('.quick-input-widget');
      await palette.locator('.monaco-list-row', { hasText: 'tinker-studio/random-gpt' }).waitFor({ timeout: 60_000 });
      await palette.locator('.monaco-list-row', { hasText: 'context 64 tokens' }).first().waitFor({ timeout: 10_000 });
      await screenshot('show-models-quick-pick');
      await page.keyboard.press('Escape');
    },
  },
  {
    name: 'Select Backend from the command palette switches to a custom server',
    async run({ page, screenshot }) {
      const status = page.locator(STATUS).getByText('Tinker: local engine');
      await status.waitFor({ timeout: 30_000 });
      await runCommand(page, 'Tinker: Select Backend');
      const palette = page.locator('.quick-input-widget');
      await palette.locator('.monaco-list-row', { hasText: 'Custom server' }).waitFor({ timeout: 15_000 });
      await screenshot('select-backend-quick-pick');
      await page.keyboard.type('Custom');
      await page.keyboard.press('Enter');
      await palette.getByText('Base URL of the Tinker-compatible server').waitFor({ timeout: 15_000 });
      await page.keyboard.press('Control+A');
      await page.keyboard.type('http://127.0.0.1:8765');
      await page.keyboard.press('Enter');
      await page.locator(STATUS).getByText('Tinker: custom server http://127.0.0.1:8765').waitFor({ timeout: 15_000 });
      await screenshot('backend-custom-status-bar');
    },
  },
  {
    name: 'a bad key is refused inline by Set API Key',
    async run({ page, screenshot }) {
      await runCommand(page, 'Tinker: Set API Key');
      const palette = page.locator('.quick-input-widget');
      await palette.getByText('stored in VS Code secret storage').waitFor({ timeout: 15_000 });
      await page.keyboard.type('sk-not-a-tinker-key');
      await palette.getByText('Tinker API keys start with "tml-"').waitFor({ timeout: 10_000 });
      await screenshot('set-api-key-validation');
      await page.keyboard.press('Escape');
    },
  },
  {
    name: 'an empty workspace shows the welcome content of both views',
    async run({ page, open, sandbox, screenshot }) {
      const empty = path.join(sandbox, 'empty-workspace');
      fs.mkdirSync(empty, { recursive: true });
      await open(empty);
      await openTinker(page);
      await pane(page, 'Runs').getByText('No runs yet in the runs folder.').waitFor({ timeout: 30_000 });
      await pane(page, 'Runs').locator('.monaco-button', { hasText: 'Open Runs Folder' }).waitFor({ timeout: 10_000 });
      await pane(page, 'Runs').locator('.monaco-button', { hasText: 'Start GRPO Run' }).waitFor({ timeout: 10_000 });
      await screenshot('tinker-view-welcome');
    },
  },
];
