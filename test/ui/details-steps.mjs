// Steps shared by details-light.ui.mjs and details-dark.ui.mjs: the extension details page of the
// installed VSIX, as the Extensions view opens it. Its README (the front page) must render with its
// screenshots as relative image links to files in the package and its headings and docs index intact.
import { runCommand } from './palette.mjs';
import { webviewWith } from './grpo-steps.mjs';

export function detailsTests(suffix) {
  return [
    {
      name: `details${suffix}: the extension details page renders the README with its pictures and the docs index`,
      async run({ page, open, screenshot }) {
        await open();
        await runCommand(page, 'Extensions: Show Installed Extensions');
        const row = page.locator('.extensions-viewlet .monaco-list-row', { hasText: 'Tinker Studio' }).first();
        await row.waitFor({ timeout: 60_000 });
        await row.click();
        const readme = await webviewWith(page, 'img[alt^="The metrics panel"]');
        for (const heading of ['Quick start (desktop VS Code)', 'For contributors: two commands', 'Documentation']) {
          await readme.locator('h2', { hasText: heading }).first().waitFor({ timeout: 15_000 });
        }
        await readme.locator('a', { hasText: 'Rewards and environments' }).first().waitFor({ timeout: 15_000 });
        // The pictures are relative links to files the VSIX ships. VS Code's details page draws https
        // images only (it drops any other src), so offline — no `repository` for vsce to rewrite them to —
        // each shows as its alt text: check that every one is there and named.
        const alts = await readme.locator('img').evaluateAll((imgs) => imgs.map((img) => img.getAttribute('alt') ?? ''));
        if (alts.length < 3 || alts.some((alt) => alt.length < 20)) throw new Error(`the README's pictures: ${JSON.stringify(alts)}`);
        await page.mouse.move(640, 790); // no hover tooltip over the header
        await screenshot(`extension-details${suffix}`);
      },
    },
  ];
}
