// Steps shared by envplay-light.ui.mjs and envplay-dark.ui.mjs: Play as the Model on
// examples/arith-retry (copied into the workspace with its spec), reached from the env file's
// CodeLens. The panel opens on the spec's model, renderer and first dataset line ("What is 59 + 29?");
// the replies are typed and sent from the keyboard (Ctrl+Enter): a wrong one gets the env's
// "Wrong, try again." turn with its step reward, a right one ends the episode with the env's reward.
// The replies are the person's, so the screenshots are the same on every machine.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker } from './palette.mjs';
import { roomForEditors, webviewWith } from './grpo-steps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Opens a workspace file through Quick Open (Ctrl+P, its name, Enter). The file search answers late
 * on a loaded machine: the list is awaited up to 90 s (palette.mjs's quickOpen gives it 15 s).
 */
async function openFile(page, fileName) {
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(fileName);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 90_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: fileName }).waitFor({ timeout: 30_000 });
}

function writeArithRetry(workspace) {
  const dir = path.join(workspace, 'arith-retry');
  fs.cpSync(path.join(root, 'examples/arith-retry'), dir, { recursive: true });
}

export function envPlayTests(suffix) {
  return [
    {
      name: `envplay${suffix}: Play as the Model from the env file's CodeLens; a wrong reply gets "Wrong, try again."`,
      async run({ page, open, workspace, screenshot }) {
        writeArithRetry(workspace);
        await open();
        await openTinker(page);
        await openFile(page, 'arith_retry.env.py');
        const lens = page.locator('.codelens-decoration a', { hasText: 'Play as the Model' }).first();
        await lens.waitFor({ timeout: 90_000 });
        // the validation lens reports the episodes played on the spec's dataset lines
        await page.locator('.codelens-decoration a', { hasText: 'ArithRetry: 2 episodes played' }).first().waitFor({ timeout: 120_000 });
        await lens.click();
        const frame = await webviewWith(page, '#reply-box', 60_000);
        await frame.locator('#model').waitFor({ timeout: 30_000 });
        await frame.locator('#env-file option:checked', { hasText: 'arith_retry.env.py' }).waitFor({ state: 'attached', timeout: 30_000 });
        if ((await frame.locator('#model').inputValue()) !== 'tinker-studio/arith-chat') throw new Error('the panel should take the spec\'s model');
        await frame.locator('#start').click();
        await frame.locator('#transcript .turn-msg', { hasText: 'What is 59 + 29?' }).waitFor({ timeout: 120_000 });
        // the reply box takes the focus: type and send from the keyboard
        await frame.locator('#reply:focus').waitFor({ timeout: 15_000 });
        await page.keyboard.type('80');
        await page.keyboard.press('Control+Enter');
        await frame.locator('#transcript .turn-msg', { hasText: 'Wrong, try again.' }).waitFor({ timeout: 60_000 });
        await frame.locator('#transcript .step .reward', { hasText: 'reward 0' }).first().waitFor({ timeout: 5_000 });
        await frame.locator('#status', { hasText: 'Turn 2: your reply' }).waitFor({ timeout: 15_000 });
        await roomForEditors(page);
        await frame.locator('#reply').focus();
        await screenshot(`env-play-retry${suffix}`);
      },
    },
    {
      name: `envplay${suffix}: a right reply ends the episode with the env's reward and metrics`,
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#reply-box', 60_000);
        await frame.locator('#reply').focus();
        await page.keyboard.type('88');
        await page.keyboard.press('Control+Enter');
        await frame.locator('#ending', { hasText: 'Episode done — total reward +0.5' }).waitFor({ timeout: 60_000 });
        await frame.locator('#transcript .step .metrics', { hasText: 'second_try_correct 1' }).waitFor({ timeout: 5_000 });
        if (await frame.locator('#reply-box').isVisible()) throw new Error('no reply is asked for once the episode is done');
        await frame.locator('#start', { hasText: 'Restart episode' }).waitFor({ timeout: 5_000 });
        await page.mouse.move(1100, 790);
        await screenshot(`env-play${suffix}`);
      },
    },
  ];
}
