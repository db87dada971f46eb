// Shared by the UI tests: runs a command through the command palette as a person would (F1, type
// the title, wait for the row, Enter), opens a file by Quick Open, reloads the window, opens the Tinker
// container and finds a view's pane.
/**
 * Runs a command from the palette (F1, its title, Enter). The palette lists commands by their `when`
 * clauses as they are when it opens and does not update an open list: a command whose clause turns
 * true a moment later (e.g. `isWorkspaceTrusted` on a busy machine) is missing from that list. So
 * while the command is not listed, the palette is closed and opened again, up to 60 s in all.
 */
export async function runCommand(page, title) {
  const palette = page.locator('.quick-input-widget');
  const row = palette.locator('.monaco-list-row', { hasText: title }).first();
  const deadline = Date.now() + 60_000;
  for (;;) {
    await page.keyboard.press('F1');
    await palette.waitFor({ state: 'visible', timeout: 15_000 });
    await page.keyboard.type(title);
    try {
      await row.waitFor({ timeout: Math.max(1_000, Math.min(10_000, deadline - Date.now())) });
      break;
    } catch (e) {
      if (Date.now() >= deadline) throw e;
      await page.keyboard.press('Escape');
      await palette.waitFor({ state: 'hidden', timeout: 15_000 });
    }
  }
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

/** Right-clicks `row` and picks `item` from its context menu. */
export async function contextMenu(page, row, item) {
  await row.click({ button: 'right' });
  const menu = page.locator('.context-view .monaco-menu');
  await menu.waitFor({ timeout: 15_000 });
  if (item === undefined) return menu;
  // Picked with the keyboard: a menu item ignores a mouse click until some time after it renders (the
  // workbench arms its mouse-up handler on a timer), which a loaded machine can stretch past the click.
  const named = (text) => text.trim().replace(/(…|\.\.\.)$/, '') === item; // labels that open an input end in "…"
  const label = menu.locator('.action-item:not(.disabled) .action-label', { hasText: new RegExp(`^${item}(…|\\.\\.\\.)?$`) });
  await label.waitFor({ timeout: 15_000 });
  const items = await menu.locator('.action-item:not(.disabled) .action-label').count();
  const focused = menu.locator('.action-item.focused .action-label');
  let found = false;
  for (let i = 0; i < items && !found; i++) {
    await page.keyboard.press('ArrowDown');
    await focused.waitFor({ timeout: 15_000 });
    found = named((await focused.textContent()) ?? '');
  }
  if (!found) throw new Error(`the arrow keys never reached "${item}" in the context menu`);
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'hidden', timeout: 15_000 });
  return menu;
}
