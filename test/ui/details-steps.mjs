// Steps shared by details-light.ui.mjs and details-dark.ui.mjs: the extension details page of the
// installed VSIX, as the Extensions view opens it. Its README (the front page) must render with its
// headings and docs index intact and every picture drawn. The page draws https images only, so these
// files ask the runner (`servedReadmeImages`) for a VSIX that vsce packaged with README_IMAGES_URL set to a
// local https server of media/ — the rewrite a marketplace build gets from package.json's `repository`.
import { runCommand } from './palette.mjs';
import { webviewWith } from './grpo-steps.mjs';

export function detailsTests(suffix) {
  return [
    {
      name: `details${suffix}: the extension details page renders the README with its pictures and the docs index`,
      async run({ page, open, screenshot, readmeImages }) {
        if (!readmeImages) throw new Error('the runner gave no served README pictures (servedReadmeImages)');
        await open();
        // The Extensions view's search, as a person finds an installed extension (both hosts have it;
        // the floor's palette has no "Show Installed Extensions").
        await runCommand(page, 'View: Show Extensions');
        const search = page.locator('.extensions-viewlet .suggest-input-container').first();
        await search.waitFor({ timeout: 60_000 });
        await search.click();
        await page.keyboard.press('ControlOrMeta+A');
        await page.keyboard.type('@installed tinker');
        const row = page.locator('.extensions-viewlet .monaco-list-row', { hasText: 'Tinker Studio' }).first();
        await row.waitFor({ timeout: 60_000 });
        await row.click();
        await page.mouse.move(640, 790); // away from the row before its hover shows
        const readme = await webviewWith(page, 'img[alt^="The metrics panel"]');
        for (const heading of ['Quick start (desktop VS Code)', 'For contributors: two commands', 'Documentation']) {
          await readme.locator('h2', { hasText: heading }).first().waitFor({ timeout: 15_000 });
        }
        await readme.locator('a', { hasText: 'Rewards and environments' }).first().waitFor({ timeout: 15_000 });
        // Every picture: named (alt text), linked to the served copy of a media/ file, and drawn.
        const images = readme.locator('img');
        const count = await images.count();
        if (count < 3) throw new Error(`the README shows ${count} pictures`);
        for (let i = 0; i < count; i++) {
          const img = images.nth(i);
          const alt = (await img.getAttribute('alt')) ?? '';
          const src = (await img.getAttribute('src')) ?? '';
          if (alt.length < 20) throw new Error(`picture ${i + 1} has no description: alt ${JSON.stringify(alt)}`);
          if (!src.startsWith(`${readmeImages.imagesUrl}media/`)) throw new Error(`picture ${i + 1} links ${src}, not ${readmeImages.imagesUrl}media/…`);
          await img.scrollIntoViewIfNeeded();
          const deadline = Date.now() + 30_000;
          while (!(await img.evaluate((el) => el.complete && el.naturalWidth > 0))) {
            if (Date.now() > deadline) throw new Error(`picture ${i + 1} (${src}) was not drawn`);
            await page.waitForTimeout(250);
          }
        }
        await readme.locator('h1').first().scrollIntoViewIfNeeded();
        await readme.locator('h2', { hasText: 'What it looks like' }).first().scrollIntoViewIfNeeded();
        await page.mouse.move(640, 790);
        await page.locator('.monaco-hover, .workbench-hover').first().waitFor({ state: 'hidden', timeout: 15_000 }); // no tooltip over the header
        await screenshot(`extension-details${suffix}`);
      },
    },
  ];
}
