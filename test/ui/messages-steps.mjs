// Steps shared by messages-light.ui.mjs and messages-dark.ui.mjs: a sample whose reply has reasoning and
// a tool call, in the group breakdown. The run is a fixture (test/fixtures/samples/qwen3-tool-call.jsonl:
// Qwen3 completions parsed by the qwen3 renderer, scripts/make-message-fixture.mjs), so the screenshots
// are the same on every machine. The breakdown is opened through "Tinker: Show Iteration"; the
// reasoning is folded, then opened with the keyboard (Enter on its summary); the malformed call is
// flagged; the diff of the group's best and worst shows the parsed replies as text.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './palette.mjs';
import { commandCenter, roomForEditors, showFirstIteration, webviewWith } from './grpo-steps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN = 'qwen3-tools';

function writeToolRun(workspace) {
  const dir = path.join(workspace, 'runs', RUN);
  fs.mkdirSync(path.join(dir, 'iteration_000000'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_name: 'Qwen/Qwen3-8B', renderer_name: 'qwen3' }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step": 0, "env/all/reward/total": 0.5}\n');
  fs.copyFileSync(path.join(root, 'test/fixtures/samples/qwen3-tool-call.jsonl'), path.join(dir, 'iteration_000000', 'train_samples.jsonl'));
}

export function messageTests(suffix) {
  return [
    {
      name: `messages${suffix}: a sample with reasoning and a tool call shows the reasoning folded and the call formatted`,
      async run({ page, open, workspace, screenshot }) {
        writeToolRun(workspace);
        const frame = await showFirstIteration(page, open, RUN);
        await frame.locator('.row.group').first().click();
        await frame.locator('.row.sample').first().waitFor({ timeout: 15_000 });
        // the list flags the replies' reasoning and calls
        await frame.locator('.row.sample .flag.tool', { hasText: '1 tool call' }).first().waitFor({ timeout: 15_000 });
        await frame.locator('.row.sample .flag.warning', { hasText: 'malformed' }).first().waitFor({ timeout: 15_000 });
        await frame.locator('.row.sample').first().click();
        const call = frame.locator('#detail .msg-tool-call').first();
        await call.waitFor({ timeout: 30_000 });
        await call.locator('.msg-tool-name', { hasText: 'add' }).waitFor({ timeout: 5_000 });
        await call.locator('.msg-tool-args', { hasText: '"a": 123' }).waitFor({ timeout: 5_000 });
        // folded: the summary shows, the reasoning does not
        const thinking = frame.locator('#detail details.msg-thinking');
        await thinking.locator('summary', { hasText: /^Thinking · \d+ words$/ }).waitFor({ timeout: 5_000 });
        if (await thinking.evaluate((d) => d.open)) throw new Error('the reasoning should start folded');
        if (await thinking.locator('.msg-thinking-text').isVisible()) throw new Error('the folded reasoning is visible');
        await roomForEditors(page);
        await screenshot(`sample-thinking-folded${suffix}`);
      },
    },
    {
      name: `messages${suffix}: the reasoning opens from the keyboard; a malformed call is flagged`,
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#kind-filters');
        const summary = frame.locator('#detail details.msg-thinking summary');
        await summary.focus();
        await page.keyboard.press('Enter');
        await frame.locator('#detail details.msg-thinking[open] .msg-thinking-text', { hasText: 'call the add tool' }).waitFor({ timeout: 10_000 });
        await screenshot(`sample-thinking-open${suffix}`);
        await frame.locator('.row.sample').nth(1).click();
        const bad = frame.locator('#detail .msg-tool-call.malformed');
        await bad.waitFor({ timeout: 30_000 });
        await bad.locator('.msg-flag', { hasText: /⚠ Invalid JSON/ }).waitFor({ timeout: 5_000 });
        await bad.locator('.msg-tool-args', { hasText: '<tool_call>' }).waitFor({ timeout: 5_000 });
        await screenshot(`sample-malformed-call${suffix}`);
      },
    },
    {
      name: `messages${suffix}: the best-vs-worst diff shows each parsed reply as text`,
      async run({ page, screenshot }) {
        const frame = await webviewWith(page, '#kind-filters');
        await frame.locator('#detail a.compare', { hasText: 'Compare best vs worst' }).click();
        await page.locator('.tab', { hasText: /group 0: sample \d+ \(reward/ }).first().waitFor({ timeout: 30_000 });
        // the parsed replies follow the completions, at the end of the documents: go there from the keyboard
        await page.locator('.monaco-diff-editor .modified .view-line').first().click();
        await page.keyboard.press('Control+End');
        await page.locator('.monaco-diff-editor .view-line', { hasText: '## parsed reply' }).first().waitFor({ timeout: 30_000 });
        await page.locator('.monaco-diff-editor .view-line', { hasText: '### thinking' }).first().waitFor({ timeout: 30_000 });
        await roomForEditors(page);
        await screenshot(`sample-diff-parsed-reply${suffix}`);
      },
    },
    {
      name: `messages${suffix}: the playground continues from a sampled reply; a message becomes a tool result with its call id`,
      async run({ page, screenshot }) {
        await commandCenter(page, 'View: Close All Editors');
        await runCommand(page, 'Tinker: Open Sample Playground');
        const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
        await frame.locator('#side-A').waitFor({ timeout: 60_000 });
        await frame.locator('#side-A').fill('tinker-studio/arith-chat');
        await frame.locator('.message textarea.content').first().fill('What is 123 + 456?');
        await frame.locator('#p-n').fill('2');
        await frame.locator('#p-max-tokens').fill('16');
        await frame.locator('#p-seed').fill('1');
        await frame.locator('#run').click();
        await frame.locator('#result-A .sample').nth(1).waitFor({ timeout: 180_000 });
        await frame.locator('#status', { hasText: 'Done' }).waitFor({ timeout: 60_000 });
        await frame.locator('#result-A .sample').first().getByRole('button', { name: 'Continue from this reply' }).click();
        await frame.locator('#messages .message[data-role="assistant"]').waitFor({ timeout: 10_000 });
        // the row after the reply: made a tool result answering call_1 of add
        const last = frame.locator('#messages .message').last();
        await last.locator('select.role').selectOption('tool');
        await last.locator('.tool-meta input.fn-name').fill('add');
        await last.locator('.tool-meta input.call-id').fill('call_1');
        await last.locator('textarea.content').fill('579');
        // the assistant row keeps the reply; its reasoning field is folded
        const assistant = frame.locator('#messages .message[data-role="assistant"]');
        if (await assistant.locator('details.thinking-edit').evaluate((d) => d.open)) throw new Error('the reasoning field should start folded');
        await screenshot(`playground-continued${suffix}`);
      },
    },
  ];
}
