#!/usr/bin/env node
// `npm run screenshots`: regenerates the README's screenshots (media/screenshots/*.jpg) from the UI
// test run, so they show the panels as the current build draws them. Runs the UI test files that
// declare `readmeShots` (light theme) with TINKER_README_SHOTS pointing at a fresh temporary folder,
// checks that every declared screenshot was written and is under 200 KB, and only then replaces the
// folder's contents. `npm run package` afterwards puts the new set into the VSIX.
//   README_SHOT_FILES=<comma-separated substrings> narrows the test files (default: all that declare
//   shots) and then replaces only their screenshots
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, 'media/screenshots');
const MAX_BYTES = 200 * 1024;

async function main() {
  const only = process.env.README_SHOT_FILES?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  const expected = new Map(); // README image name → test file
  const files = [];
  for (const file of fs.readdirSync(path.join(root, 'test/ui')).filter((f) => f.endsWith('.ui.mjs')).sort()) {
    if (only.length > 0 && !only.some((s) => file.includes(s))) continue;
    const suite = await import(pathToFileURL(path.join(root, 'test/ui', file)).href);
    if (!suite.readmeShots) continue;
    files.push(file);
    for (const name of Object.values(suite.readmeShots)) {
      if (expected.has(name)) throw new Error(`README screenshot ${name} is declared by ${expected.get(name)} and ${file}`);
      expected.set(name, file);
    }
  }
  if (files.length === 0) throw new Error('no test/ui/*.ui.mjs file declares readmeShots');

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-readme-shots-'));
  try {
    console.log(`[screenshots] running ${files.join(', ')} for ${expected.size} README screenshots`);
    const run = spawnSync(process.execPath, [path.join(root, 'scripts/run-ui-tests.mjs')], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, UI_HOSTS: 'newest', UI_FILES: files.join(','), TINKER_README_SHOTS: tmp },
    });
    if (run.status !== 0) throw new Error(`the UI tests failed (exit ${run.status ?? run.signal}); media/screenshots/ is left as it was`);

    const problems = [];
    for (const name of expected.keys()) {
      const file = path.join(tmp, `${name}.jpg`);
      if (!fs.existsSync(file)) problems.push(`${name}.jpg was not written (declared by ${expected.get(name)})`);
      else if (fs.statSync(file).size > MAX_BYTES) problems.push(`${name}.jpg is ${fs.statSync(file).size} bytes, over ${MAX_BYTES}`);
    }
    if (problems.length > 0) throw new Error(`${problems.join('; ')}; media/screenshots/ is left as it was`);

    fs.mkdirSync(target, { recursive: true });
    // a full run replaces the set (a screenshot no longer declared goes); a narrowed one only its own
    if (only.length === 0) for (const old of fs.readdirSync(target).filter((f) => f.endsWith('.jpg'))) fs.rmSync(path.join(target, old));
    for (const name of [...expected.keys()].sort()) {
      fs.copyFileSync(path.join(tmp, `${name}.jpg`), path.join(target, `${name}.jpg`));
      console.log(`[screenshots] media/screenshots/${name}.jpg  ${(fs.statSync(path.join(target, `${name}.jpg`)).size / 1024).toFixed(1)} KB`);
    }
    console.log('[screenshots] done; `npm run package` puts them into the VSIX');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`[screenshots] ${err?.message ?? err}`);
  process.exit(1);
});
