// The Tinker views under a dark theme: the same rows are visible and readable (screenshot for review).
export const settings = { 'workbench.colorTheme': 'Default Dark Modern' };

export const tests = [
  {
    name: 'the Tinker views render under the dark theme',
    async run({ page, open, screenshot }) {
      await open();
      await page.locator('.monaco-workbench.vs-dark').waitFor({ timeout: 60_000 });
      const icon = page.locator('.activitybar .action-item a[aria-label^="Tinker"]').first();
      await icon.waitFor({ timeout: 60_000 });
      await icon.click();
      const runs = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Runs' }) });
      await runs.locator('.monaco-list-row', { hasText: 'arith-demo' }).waitFor({ timeout: 30_000 });
      await page.locator('#workbench\\.parts\\.statusbar').getByText('Tinker: local engine').waitFor({ timeout: 30_000 });
      await screenshot('tinker-view-dark');
    },
  },
];
