// The webview panels of the extension, found rather than listed (scripts/build.mjs bundles each one).
// A panel is a folder of webview/ other than shared/, with its entry webview/<panel>/main.ts, and the
// activation event onWebviewPanel:tinker.<panel> in package.json (its serializer restores it after a
// window reload). docs/layout.md says how to add one.
import fs from 'node:fs';
import path from 'node:path';

/**
 * The panels under `root`: `entries` as [source, dist name] pairs (webview/<panel>/main.ts becomes
 * dist/webview/<panel>.js and .css), and `problems`, one sentence each, when a panel folder has no
 * entry, a panel has no activation event, or package.json declares a panel that has no folder.
 */
export function findPanels(root) {
  const dir = path.join(root, 'webview');
  const panels = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'shared')
    .map((e) => e.name)
    .sort();
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const declared = (manifest.activationEvents ?? []).flatMap((e) => /^onWebviewPanel:tinker\.(.+)$/.exec(e)?.[1] ?? []);
  const problems = [];
  for (const p of panels) {
    if (!fs.existsSync(path.join(dir, p, 'main.ts'))) problems.push(`webview/${p}/ is a panel folder without its entry webview/${p}/main.ts`);
    if (!declared.includes(p)) problems.push(`webview/${p}/ is a panel, but package.json has no activation event onWebviewPanel:tinker.${p}`);
  }
  for (const p of declared) {
    if (!panels.includes(p)) problems.push(`package.json declares the panel ${p} (onWebviewPanel:tinker.${p}), but webview/${p}/main.ts is missing`);
  }
  return { entries: panels.map((p) => [`webview/${p}/main.ts`, p]), problems };
}
