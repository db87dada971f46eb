// Steps shared by pairs-light.ui.mjs and pairs-dark.ui.mjs: a pairs file in the workspace (two good
// pairs and a tie), opened in the editor; "Tinker: Show Preference Pairs…" offers it first and opens the
// Preference Pairs panel; the filter narrows the table, the keyboard moves between pairs and Enter opens
// chosen ↔ rejected in the diff editor. Screenshot: pairs-<theme>.
import fs from 'node:fs';
import path from 'node:path';
import { quickOpen, runCommand } from './palette.mjs';

const PAIRS = [
  { prompt: 'What is 81 + 65?', chosen: '146', rejected: '144', source: { run: 'samples-1', group_idx: 0 } },
  { prompt: 'What is 64 + 19?', chosen: '83', rejected: '81' },
  { prompt: 'What is 38 + 45?', chosen: '83', rejected: '84' },
];

function pairsFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

export function pairsTests(theme) {
  return [
    {
      name: `preference pairs (${theme}): the panel lists a pairs file, filters it, and opens a pair's diff from the keyboard`,
      async run({ page, open, workspace, screenshot }) {
        const file = path.join(workspace, 'prefs.jsonl');
        fs.writeFileSync(file, [...PAIRS.map((p) => JSON.stringify(p)), '{"comparison": {"prompt_conversation": [{"role": "user", "content": "hi"}], "completion_A": "a", "completion_B": "b"}, "label": "Tie"}'].join('\n') + '\n');
        await open();
        await quickOpen(page, 'prefs.jsonl');
        await runCommand(page, 'Tinker: Show Preference Pairs');
        const first = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'prefs.jsonl' }).first();
        await first.waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        const frame = pairsFrame(page);
        await frame.locator('#rows tr').nth(2).waitFor({ timeout: 60_000 });
        const counts = await frame.locator('#counts').textContent();
        if (!/^3 pairs/.test(counts ?? '')) throw new Error(`expected 3 pairs, the panel says "${counts}"`);
        const message = await frame.locator('#message').textContent();
        if (!/1 line\(s\) are not pairs/.test(message ?? '')) throw new Error(`the tie should be named as left out: "${message}"`);
        await frame.locator('#filter').fill('83');
        await frame.locator('#counts', { hasText: '2 match' }).waitFor({ timeout: 15_000 });
        await frame.locator('#rows tr').first().focus();
        await page.keyboard.press('ArrowDown');
        const focused = await frame.locator('#rows tr:focus').getAttribute('data-id');
        if (!focused?.endsWith(':3')) throw new Error(`ArrowDown should focus the second match (line 3), focused ${focused}`);
        await screenshot(`pairs-${theme}`);
        await page.keyboard.press('Enter');
        await page.locator('.tab', { hasText: 'chosen ↔ rejected' }).waitFor({ timeout: 30_000 });
      },
    },
  ];
}
