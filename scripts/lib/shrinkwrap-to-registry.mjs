#!/usr/bin/env node
// Points every package of the given npm-shrinkwrap.json / package-lock.json files that is resolved from
// a git repository at the same version's tarball on the npm registry instead, keeping its integrity
// hash, so `npm install` fetches it from the registry and still verifies that the bytes are the ones the
// lock file names (a registry tarball that differs fails the install with EINTEGRITY, loudly).
//
// Why: code-server 4.96's bundled VS Code locks @vscode/proxy-agent 0.27.0 to a commit on GitHub
// (git+ssh://git@github.com/microsoft/vscode-proxy-agent.git#0803e0a…), which machines that reach only
// the npm registry cannot fetch; the registry's proxy-agent-0.27.0.tgz has the very integrity hash the
// lock file records. Files without git-resolved packages are left untouched.
//
//   node scripts/lib/shrinkwrap-to-registry.mjs <lock file>...
import fs from 'node:fs';

const registry = 'https://registry.npmjs.org';

for (const file of process.argv.slice(2)) {
  if (!fs.existsSync(file)) continue;
  const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
  let changed = 0;
  for (const [key, entry] of Object.entries(lock.packages ?? {})) {
    if (typeof entry?.resolved !== 'string' || !/^git\+|^github:|^git:/.test(entry.resolved)) continue;
    const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (!name || !entry.version || !entry.integrity) {
      throw new Error(`${file}: packages["${key}"] is resolved from git (${entry.resolved}) without a name, version and integrity to find it on the registry by`);
    }
    const base = name.slice(name.lastIndexOf('/') + 1);
    const tarball = `${registry}/${name}/-/${base}-${entry.version}.tgz`;
    console.log(`[shrinkwrap] ${file}: ${name}@${entry.version} from ${tarball} instead of ${entry.resolved} (integrity kept)`);
    entry.resolved = tarball;
    changed++;
  }
  if (changed > 0) fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
