#!/usr/bin/env node
// `npm run package`: writes <name>-<version>.vsix with vsce (its prepublish step builds the production
// bundle). The README shows media/screenshots/*.jpg by relative links, and the VSIX ships those files.
// vsce refuses relative image links unless it can make them absolute:
//   - package.json has a `repository` (GitHub/GitLab): vsce rewrites them to that repository's files,
//     which is what a marketplace and VS Code's extension page need (that page draws https images only);
//   - README_IMAGES_URL=<https base URL> is set: vsce prefixes the image links with it (--baseImagesUrl);
//   - neither: the links stay relative (--no-rewrite-relative-links), right for GitHub and any viewer
//     of the repository or the unpacked VSIX, but VS Code's extension page then shows the images' alt text.
// Extra arguments are passed on to vsce (e.g. `npm run package -- -o out.vsix`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const args = ['package', '--no-dependencies'];
const imagesUrl = process.env.README_IMAGES_URL?.trim();
if (imagesUrl) {
  if (!/^https:\/\//.test(imagesUrl)) {
    console.error(`[package] README_IMAGES_URL must be an https URL (VS Code's extension page draws no other images), got ${imagesUrl}`);
    process.exit(1);
  }
  args.push('--baseImagesUrl', imagesUrl);
} else if (!pkg.repository) {
  args.push('--no-rewrite-relative-links');
}
args.push(...process.argv.slice(2));
const vsce = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'vsce.cmd' : 'vsce');
console.log(`[package] vsce ${args.join(' ')}`);
const run = spawnSync(vsce, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(run.status ?? 1);
