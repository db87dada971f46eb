// Shared by the UI tests: runs a command through the command palette as a person would (F1, type
// the title, wait for the row, Enter), opens the Tinker container and finds a view's pane.
export async function runCommand(page, title) {
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.press('F1');
  await palette.waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(title);
  await palette.locator('.monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Opens the Tinker container from the activity bar (idempotent). */
export async function openTinker(page) {
  const icon = page.locator('.activitybar .action-item a[aria-label^="Tinker"]').first();
  await icon.waitFor({ timeout: 60_000 });
  const header = page.locator('.pane-header', { hasText: 'Runs' });
  if (!(await header.isVisible())) await icon.click();
  await header.waitFor({ timeout: 30_000 });
}

/** The pane of the view titled `title`. */
export function pane(page, title) {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) });
}
