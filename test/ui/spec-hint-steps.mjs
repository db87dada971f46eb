// Steps shared by spec-hint-light.ui.mjs and spec-hint-dark.ui.mjs: an SFT spec for Qwen/Qwen3-8B with a
// learning rate far above the model's recommended one (tinker-cookbook's get_lr) and a YAML sweep over
// learning rates next to it. Each shows an information squiggle at the learning rate (never an error);
// its hover says how far off it is and from what. Screenshots: spec-hint-<theme>, sweep-hint-<theme>.
import fs from 'node:fs';
import path from 'node:path';

const SPEC = {
  backend: 'cloud',
  model: 'Qwen/Qwen3-8B',
  learning_rate: 0.01,
  lora_rank: 32,
  batch_size: 64,
  num_epochs: 1,
  dataset: { path: 'chats.jsonl' },
};

const SWEEP = `# learning rates around the recommended one, and one far above it
base: qwen.sft.json
method: grid
parameters:
  learning_rate:
    values: [0.0002, 0.0005, 0.01]
metric:
  name: test/nll
  goal: minimize
`;

function writeFiles(workspace) {
  const dir = path.join(workspace, 'hints');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'qwen.sft.json'), `${JSON.stringify(SPEC, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'chats.jsonl'), '{"prompt": "What is 2 + 2?", "completion": "4"}\n');
  fs.writeFileSync(path.join(dir, 'lr.sweep.yaml'), SWEEP);
}

async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(name);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: name }).waitFor({ timeout: 15_000 });
}

/** Shows the information squiggle's hover from the keyboard and waits for the hint in it. */
async function showHint(page) {
  const squiggle = page.locator('.squiggly-info').first();
  await squiggle.waitFor({ timeout: 60_000 });
  // Keyboard only, so the editor's layout cannot move the target (a CodeLens row that appears late
  // shifts every line): from the top of the file, Go to Next Problem (F8) puts the caret on the hint;
  // Escape closes its peek; Ctrl+K Ctrl+I shows the hover at the caret.
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('F8');
  const peek = page.locator('.monaco-editor .marker-widget');
  await peek.waitFor({ timeout: 15_000 });
  await page.keyboard.press('Escape');
  await peek.waitFor({ state: 'hidden', timeout: 15_000 });
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+I');
  const hover = page.locator('.monaco-hover', { hasText: 'above the recommended' });
  await hover.waitFor({ timeout: 30_000 });
  await hover.getByText('tinker-cookbook get_lr', { exact: false }).first().waitFor({ timeout: 10_000 });
  // a hint, not a problem that blocks a run
  if ((await page.locator('.squiggly-error').count()) !== 0) throw new Error('a hint must not be shown as an error');
}

export function specHintTests(theme) {
  return [
    {
      name: `spec hints (${theme}): a learning rate far from the recommended one is an information squiggle with its reason`,
      async run({ page, open, workspace, screenshot }) {
        writeFiles(workspace);
        await open();
        await openFile(page, 'qwen.sft.json');
        await showHint(page);
        await screenshot(`spec-hint-${theme}`);
        await page.keyboard.press('Escape');
      },
    },
    {
      name: `spec hints (${theme}): a YAML sweep marks the swept learning rate that is far off, only that one`,
      async run({ page, screenshot }) {
        await openFile(page, 'lr.sweep.yaml');
        await showHint(page);
        const n = await page.locator('.squiggly-info').count();
        if (n !== 1) throw new Error(`expected one hint (the 0.01), found ${n}`);
        await screenshot(`sweep-hint-${theme}`);
        await page.keyboard.press('Escape');
      },
    },
  ];
}
