// Shared by the UI tests: runs a command through the command palette as a person would (F1, type
// the title, wait for the row, Enter), opens a file by Quick Open, reloads the window, opens the Tinker
// container and finds a view's pane.
export async function runCommand(page, title) {
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.press('F1');
  await palette.waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(title);
  await palette.locator('.monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/**
 * "Developer: Reload Window" through the command center (a webview may hold the keyboard focus, so
 * not F1): the workbench saves its state, then reloads, as a person's reload would.
 */
export async function reloadWindow(page) {
  await page.locator('.command-center-center').click();
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type('>Developer: Reload Window');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Developer: Reload Window' }).first().waitFor({ timeout: 15_000 });
  await Promise.all([page.waitForEvent('load', { timeout: 90_000 }), page.keyboard.press('Enter')]);
  await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
}

/** Opens a workspace file through Quick Open (Ctrl+P, type its name, Enter) and waits for its tab. */
export async function quickOpen(page, fileName) {
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type(fileName);
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: fileName }).waitFor({ timeout: 15_000 });
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
