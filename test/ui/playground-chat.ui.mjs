// The sample playground on the local engine's chat model, tinker-studio/arith-chat (issue 35): a
// two-turn chain (the follow-up "Now add 17." builds on the assistant's previous answer) and a tool
// call (the calculator declared in the system message, the model answers with a <tool_call> block).
// Screenshots playground-chat-chain and playground-chat-tool (test-results/ui/, and media/screenshots/ by
// `npm run screenshots`). The playground shows the reply as the renderer parsed it (a tool call
// formatted, webview/shared/messageView.ts) next to the sampled text.
import { openTinker, runCommand } from './palette.mjs';

export const settings = { 'workbench.colorTheme': 'Default Light Modern' };

/** Screenshots docs/engine.md shows (`npm run screenshots` writes them to media/screenshots/<name>.jpg). */
export const readmeShots = { 'playground-chat-chain': 'playground-chat-chain', 'playground-chat-tool': 'playground-chat-tool' };

function playgroundFrame(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

/** Sets the conversation rows to `messages` ({ role, content }), adding or removing rows as needed. */
async function setConversation(frame, messages) {
  const rows = frame.locator('.message');
  while ((await rows.count()) < messages.length) await frame.locator('#add-message').click();
  while ((await rows.count()) > messages.length) await rows.last().getByRole('button', { name: 'Remove this message' }).click();
  for (const [i, m] of messages.entries()) {
    await rows.nth(i).locator('select.role').selectOption(m.role);
    await rows.nth(i).locator('textarea.content').fill(m.content);
  }
}

async function runAndWait(frame, n) {
  await frame.locator('#run').click();
  await frame.locator('#result-A .sample').nth(n - 1).waitFor({ timeout: 240_000 });
  await frame.locator('#status', { hasText: 'Done' }).waitFor({ timeout: 120_000 });
}

export const tests = [
  {
    name: 'playground-chat: arith-chat answers a two-turn chain',
    async run({ page, open, screenshot }) {
      await open();
      await openTinker(page);
      await runCommand(page, 'Tinker: Open Sample Playground');
      const frame = playgroundFrame(page);
      await frame.locator('#side-A').waitFor({ timeout: 60_000 });
      await frame.locator('#side-A').fill('tinker-studio/arith-chat');
      await frame.locator('#side-B').fill('');
      await setConversation(frame, [
        { role: 'user', content: 'What is 12 + 30?' },
        { role: 'assistant', content: '42' },
        { role: 'user', content: 'Now add 17.' },
      ]);
      await frame.locator('#ground-truth').fill('59');
      await frame.locator('#p-n').fill('4');
      await frame.locator('#p-max-tokens').fill('8');
      await frame.locator('#p-seed').fill('1');
      await runAndWait(frame, 4);
      await screenshot('playground-chat-chain');
    },
  },
  {
    name: 'playground-chat: arith-chat calls the calculator tool',
    async run({ page, screenshot }) {
      const frame = playgroundFrame(page);
      await setConversation(frame, [
        { role: 'system', content: 'Tools: add(a, b) - Add two integers.' },
        { role: 'user', content: 'What is 123 + 456?' },
      ]);
      await frame.locator('#ground-truth').fill('');
      await frame.locator('#p-max-tokens').fill('96');
      await runAndWait(frame, 4);
      // a sample whose reply the renderer parsed into a tool call (shown formatted), or its raw text
      const called = frame.locator('#result-A .sample').filter({ has: frame.locator('.msg-tool-call') });
      await called.or(frame.locator('#result-A .sample', { hasText: '<tool_call>' })).first().waitFor({ timeout: 30_000 });
      await screenshot('playground-chat-tool');
    },
  },
];
