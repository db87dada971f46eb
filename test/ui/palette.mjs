// Shared by the UI tests: runs a command through the command palette as a person would (F1, type
// the title, wait for the row, Enter).
export async function runCommand(page, title) {
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.press('F1');
  await palette.waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(title);
  await palette.locator('.monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}
