// Steps shared by playground-light.ui.mjs and playground-dark.ui.mjs: the sample playground from the
// command palette on the local engine, side A = tinker-studio/arith-gpt, side B =
// tinker-studio/random-gpt, the arithmetic example's reward file (named by its spec), N = 4 each;
// then "A better" in the preference bar records the pair in the preferences file (asked the first
// time), and "Compare A↔B" opens the native diff editor. Results are observed in the UI, never waited out.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTinker, runCommand } from './palette.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function writeArithmetic(workspace) {
  const dir = path.join(workspace, 'arith');
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['train.jsonl', 'holdout.jsonl', 'reward.py', 'arith.grpo.json']) fs.copyFileSync(path.join(root, 'examples/arithmetic', f), path.join(dir, f));
  return path.join(dir, 'reward.py');
}

/** The playground webview's document (two nested iframes in the workbench). */
function playgroundFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

export function playgroundTests(suffix) {
  return [
    {
      name: `playground${suffix}: both sides sampled with rewards`,
      async run({ page, open, workspace, screenshot }) {
        writeArithmetic(workspace);
        await open();
        // the palette lists the commands known when it opens: wait until the extension's contributions are in
        await openTinker(page);
        await runCommand(page, 'Tinker: Open Sample Playground');
        const frame = playgroundFrame(page);
        await frame.locator('#side-A').waitFor({ timeout: 60_000 });
        await frame.locator('#side-A').fill('tinker-studio/arith-gpt');
        await frame.locator('#side-B').fill('tinker-studio/random-gpt');
        await frame.locator('.message textarea').first().fill('What is 2 + 3?');
        await frame.locator('#ground-truth').fill('5');
        // the reward file the workspace's spec names
        await frame.locator('#reward-file option', { hasText: 'reward.py' }).waitFor({ state: 'attached', timeout: 60_000 });
        const value = await frame.locator('#reward-file option', { hasText: 'reward.py' }).first().getAttribute('value');
        await frame.locator('#reward-file').selectOption(value);
        await frame.locator('#p-n').fill('4');
        await frame.locator('#p-max-tokens').fill('6');
        await frame.locator('#p-seed').fill('3');
        await frame.locator('#run').click();
        await frame.locator('#result-A .sample').nth(3).waitFor({ timeout: 180_000 });
        await frame.locator('#result-B .sample').nth(3).waitFor({ timeout: 180_000 });
        await frame.locator('#result-A .mean').waitFor({ timeout: 60_000 });
        await frame.locator('#result-B .mean').waitFor({ timeout: 60_000 });
        await frame.locator('#status', { hasText: 'Done' }).waitFor({ timeout: 60_000 });
        await screenshot(`playground${suffix}`);
      },
    },
    {
      name: `playground${suffix}: A better records the pair in the preferences file (asked the first time)`,
      async run({ page, workspace, screenshot }) {
        const frame = playgroundFrame(page);
        const bar = frame.locator('section.preference-bar');
        await bar.waitFor({ state: 'visible', timeout: 30_000 });
        await bar.locator('.preference-label', { hasText: 'A #0 vs B #0' }).waitFor({ timeout: 30_000 });
        await bar.getByRole('button', { name: 'A better' }).click();
        // no tinker.preferencesFile yet: the input box proposes preferences.jsonl in the workspace
        const input = page.locator('.quick-input-widget');
        await input.waitFor({ state: 'visible', timeout: 30_000 });
        await input.locator('.quick-input-title', { hasText: 'Where should preferences be kept?' }).waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        await bar.locator('.preference-status', { hasText: 'Saved as line 1 of preferences.jsonl (1 pair in the file).' }).waitFor({ timeout: 60_000 });
        // the selection moved on to the next samples
        await bar.locator('.preference-label', { hasText: 'A #1 vs B #1' }).waitFor({ timeout: 15_000 });
        const file = path.join(workspace, 'preferences.jsonl');
        const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
        if (lines.length !== 1) throw new Error(`expected one pair in ${file}, found ${lines.length}`);
        const pair = JSON.parse(lines[0]);
        if (pair.source?.chosen?.side !== 'A' || pair.source?.rejected?.side !== 'B' || pair.source?.chosen?.model !== 'tinker-studio/arith-gpt' || pair.source?.rejected?.model !== 'tinker-studio/random-gpt') throw new Error(`unexpected provenance: ${lines[0]}`);
        await screenshot(`playground-preference${suffix}`);
      },
    },
    {
      name: `playground${suffix}: Compare A↔B opens the diff editor`,
      async run({ page, screenshot }) {
        const frame = playgroundFrame(page);
        await frame.locator('#result-A .sample').first().getByRole('button', { name: 'Compare A↔B' }).click();
        await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 60_000 });
        await page.locator('.tab', { hasText: 'Playground: A #0' }).first().waitFor({ timeout: 30_000 });
        await page.locator('.monaco-diff-editor .view-line', { hasText: '## completion' }).first().waitFor({ timeout: 30_000 });
        await screenshot(`playground-diff${suffix}`);
      },
    },
  ];
}
