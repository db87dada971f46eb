#!/usr/bin/env node
// Layer 3: UI end-to-end tests. Installs the packaged VSIX into a throw-away code-server profile,
// opens the workbench in headless Debian Chromium (playwright-core) and runs the steps of every
// test/ui/*.ui.mjs file as a person would use the extension: activity bar, views, command palette,
// quick picks, status bar. It runs on each code-server host (scripts/lib/code-server-hosts.json: the
// floor, VS Code 1.96, and the newest), one after the other; screenshots go to test-results/ui/ (newest)
// and test-results/ui-floor/ (floor). Prints "ui (<host>, Code <version>): N passed, N failed" per host,
// then "ui: N passed, N failed" over all.
//   UI_HOSTS=floor,newest (default: both)  VSIX=<file> (default <name>-<version>.vsix)
//   UI_GREP=<substring of a test name>  UI_FILES=<substrings of file names, comma-separated>  KEEP_TMP=1
//   TINKER_README_SHOTS=<folder>: a screenshot that a test file lists in its `readmeShots`
//   ({ screenshot name: README image name }) is also written there as <README image name>.jpg, from
//   the newest host only (scripts/screenshots.mjs, `npm run screenshots`, copies them into media/screenshots/).
// A test file that exports `servedReadmeImages = true` gets instead a VSIX packaged with its README's
// pictures linked to a local https server of media/ (scripts/lib/readme-images.mjs), made once per run,
// and a browser context that accepts that server's self-signed certificate; its steps see `readmeImages`.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createSandbox,
  findVsix,
  hostNames,
  installVsix,
  launchChromium,
  makeLogger,
  resolveCodeServer,
  root,
  startCodeServer,
  workbenchUrl,
} from './lib/code-server.mjs';
import { packageWithServedImages } from './lib/readme-images.mjs';

const { log } = makeLogger('ui-tests');
const readmeShots = process.env.TINKER_README_SHOTS ? path.resolve(process.env.TINKER_README_SHOTS) : undefined;
/** JPEG quality of the README's screenshots: text stays sharp and a 1280×800 workbench stays well under 200 KB. */
const README_JPEG_QUALITY = 85;

/** Where a host's screenshots go: the newest host keeps test-results/ui/, the others get ui-<host>/. */
function screenshotsDir(host) {
  return path.join(root, 'test-results', host === 'newest' ? 'ui' : `ui-${host}`);
}

/** The VSIX with served README pictures, packaged the first time a test file asks for it. */
let servedImages;
async function readmeImagesPackage() {
  servedImages ??= packageWithServedImages(log);
  return servedImages;
}

/** Runs every selected UI test file on one host; returns its results. */
async function runOnHost(host, vsix, files) {
  const cs = resolveCodeServer(host);
  const shots = screenshotsDir(host);
  fs.mkdirSync(shots, { recursive: true });
  const readme = host === 'newest' ? readmeShots : undefined;
  if (readme) fs.mkdirSync(readme, { recursive: true });
  log(`host ${host}: code-server ${cs.codeServer}, VS Code ${cs.vscode}; screenshots in ${path.relative(root, shots)}/`);
  const results = [];
  for (const file of files) {
    const suite = await import(pathToFileURL(path.join(root, 'test/ui', file)).href);
    const sandbox = createSandbox('tinker-ui-test-', suite.settings ?? {});
    const workspace = path.join(sandbox.tmp, 'workspace');
    fs.cpSync(path.join(root, 'test/fixtures/workspace'), workspace, { recursive: true });
    let served;
    if (suite.servedReadmeImages) {
      try {
        served = await readmeImagesPackage();
      } catch (err) {
        // this file's steps fail; the other files still run
        for (const t of suite.tests) results.push({ title: `${file.replace(/\.ui\.mjs$/, '')}: ${t.name}`, ok: false, error: String(err?.message ?? err) });
        fs.rmSync(sandbox.tmp, { recursive: true, force: true });
        continue;
      }
    }
    log(`${file}: installing ${path.basename(served?.vsix ?? vsix)}`);
    installVsix(cs, sandbox, served?.vsix ?? vsix);
    const server = await startCodeServer(cs, sandbox, { env: suite.env ?? {} });
    let browser;
    let failed = false;
    try {
      browser = await launchChromium();
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: Boolean(served) })).newPage();
      page.on('pageerror', (err) => log(`[page error] ${err.message}`));
      const ctx = {
        page,
        log,
        /** the code-server host ('floor' | 'newest') and its VS Code version, for steps whose workbench differs */
        host: cs.host,
        vscodeVersion: cs.vscode,
        sandbox: sandbox.tmp,
        workspace,
        /** the served README pictures ({ imagesUrl }) for a file with `servedReadmeImages` */
        readmeImages: served,
        open: async (folder = workspace) => {
          await page.goto(workbenchUrl(server.base, folder));
          await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
          await page.locator('#workbench\\.parts\\.statusbar').waitFor({ timeout: 90_000 });
        },
        screenshot: async (name) => {
          const file = path.join(shots, `${name}.png`);
          await page.screenshot({ path: file });
          log(`screenshot ${path.relative(root, file)}`);
          const readmeName = suite.readmeShots?.[name];
          if (readme && readmeName) {
            const jpeg = path.join(readme, `${readmeName}.jpg`);
            await page.screenshot({ path: jpeg, type: 'jpeg', quality: README_JPEG_QUALITY });
            log(`README screenshot ${jpeg}`);
          }
          return file;
        },
      };
      for (const t of suite.tests) {
        if (process.env.UI_GREP && !t.name.includes(process.env.UI_GREP)) continue;
        const title = `${file.replace(/\.ui\.mjs$/, '')}: ${t.name}`;
        if (failed) {
          // Steps build on each other: after a failure the rest cannot be judged; they count as failed.
          results.push({ title, ok: false, error: 'not run: an earlier step of this file failed' });
          continue;
        }
        const t0 = Date.now();
        try {
          await t.run(ctx);
          results.push({ title, ok: true, ms: Date.now() - t0 });
        } catch (err) {
          failed = true;
          const shot = await ctx.screenshot(`FAILED-${t.name.replace(/[^\w]+/g, '-')}`).catch(() => undefined);
          results.push({ title, ok: false, error: `${err?.message ?? err}${shot ? `\n(screenshot ${path.relative(root, shot)})` : ''}` });
        }
      }
    } finally {
      await browser?.close().catch(() => {});
      await server.stop();
      if (failed || process.env.KEEP_TMP === '1') log(`logs kept in ${sandbox.tmp}`);
      else fs.rmSync(sandbox.tmp, { recursive: true, force: true });
    }
  }
  return { cs, results };
}

async function main() {
  const hosts = hostNames(process.env.UI_HOSTS);
  const vsix = findVsix();
  const only = process.env.UI_FILES?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  const files = fs.readdirSync(path.join(root, 'test/ui')).filter((f) => f.endsWith('.ui.mjs') && (only.length === 0 || only.some((s) => f.includes(s)))).sort();
  const summaries = [];
  let passed = 0;
  let failedCount = 0;
  for (const host of hosts) {
    const t0 = Date.now();
    let outcome;
    try {
      outcome = await runOnHost(host, vsix, files);
    } catch (err) {
      // a host that cannot start counts as one failure; the other hosts still run
      console.error(`[ui-tests] host ${host}: ${err?.stack ?? err}`);
      outcome = { cs: undefined, results: [{ title: `host ${host}`, ok: false, error: String(err?.message ?? err) }] };
    }
    const { cs, results } = outcome;
    console.log(`\n[ui-tests] host ${host}${cs ? ` (code-server ${cs.codeServer}, VS Code ${cs.vscode})` : ''}, ${((Date.now() - t0) / 1000).toFixed(0)} s:`);
    for (const r of results) {
      console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.title}${r.ms !== undefined ? ` (${r.ms} ms)` : ''}`);
      if (r.error) console.log(`       ${r.error.split('\n').slice(0, 6).join('\n       ')}`);
    }
    const p = results.filter((r) => r.ok).length;
    const f = results.length - p;
    summaries.push(`ui (${host}${cs ? `, Code ${cs.vscode}` : ''}): ${p} passed, ${f} failed`);
    passed += p;
    failedCount += f;
  }
  if (servedImages) await (await servedImages.catch(() => undefined))?.close();
  for (const line of summaries) console.log(line);
  console.log(`ui: ${passed} passed, ${failedCount} failed`);
  process.exit(failedCount > 0 || passed === 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(`[ui-tests] ${err?.stack ?? err}`);
  console.log('ui: 0 passed, 1 failed');
  process.exit(1);
});
