#!/usr/bin/env node
// Runs the mocha suite (out/test/suite/index.js) inside the real VS Code
// extension host that code-server starts, driven by headless Chromium, and
// exits 0 only if every test passed.
//
//   npm run build && npm run compile-tests && node scripts/run-web-tests.mjs
//
// How it works:
//   1. start code-server with `--vscode-option enable-smoke-test-driver`; without
//      it the built workbench ignores the extension-development keys of `payload`;
//   2. open /?folder=<workspace>&payload=<JSON list of [key, value] pairs>:
//        extensionDevelopmentPath = vscode-remote://<authority><project root>
//        extensionTestsPath       = vscode-remote://<authority><root>/out/test/suite/index
//   3. the workbench starts the remote (Node) extension host with the extension
//      under development and calls run() of the tests module in it;
//   4. when run() settles, the workbench calls window.codeAutomationExit(code),
//      which this script exposes with page.exposeFunction. The suite also writes
//      $VSCODE_TEST_RESULTS (JSON), printed at the end.
//
// Environment (see also scripts/lib/code-server.mjs):
//   --host floor|newest / CODE_SERVER_HOST=floor|newest  the code-server host to run in (default
//                      newest); the suite reads its VS Code version from TINKER_TEST_VSCODE_VERSION
//   --vsix / VSIX=<file.vsix>  install the packaged extension (default
//                      <name>-<version>.vsix) and test the installed copy
//                      instead of the source folder
//   ENABLE_OTHER_EXTENSIONS=1  keep built-in extensions enabled (default: all
//                      extensions but the one under test are disabled)
//   TEST_TIMEOUT_MS    overall limit (default 180000)
//   VSCODE_TEST_SETTINGS  JSON object merged into the seeded user settings
//   VERBOSE=1          print the whole workbench log (it carries the extension
//                      host's console output, i.e. mocha's spec report)
//   KEEP_TMP=1         keep the temp dir (code-server log, VS Code logs, results)
//   Anything else (MOCHA_GREP, HELLO_FORCE_FAIL, ...) reaches the extension host
//   through code-server's environment.

import fs from 'node:fs';
import path from 'node:path';
import {
  createSandbox,
  findVsix,
  installVsix,
  launchChromium,
  makeLogger,
  resolveCodeServer,
  root,
  startCodeServer,
  workbenchUrl,
} from './lib/code-server.mjs';

const { log, elapsed } = makeLogger('host-tests:code-server');

async function main() {
  const timeoutMs = Number(process.env.TEST_TIMEOUT_MS || 180_000);
  // The suite may write into its workspace: a throw-away copy of the fixture, inside the sandbox.
  const testsModule = path.join(root, 'out/test/suite/index');
  const vsix = process.argv.includes('--vsix') || process.env.VSIX ? findVsix() : undefined;

  for (const f of [path.join(root, 'dist/extension.js'), `${testsModule}.js`]) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: run "npm run build && npm run compile-tests" first`);
  }

  const hostArg = process.argv.indexOf('--host');
  const cs = resolveCodeServer(hostArg >= 0 ? process.argv[hostArg + 1] : process.env.CODE_SERVER_HOST || 'newest');
  log(`host ${cs.host}: code-server ${cs.codeServer}, VS Code ${cs.vscode}`);
  const sandbox = createSandbox('tinker-host-test-');
  const resultsFile = path.join(sandbox.tmp, 'results.json');
  const workspace = path.join(sandbox.tmp, 'workspace');
  fs.cpSync(path.join(root, 'test/fixtures/workspace'), workspace, { recursive: true });

  let devPath = root;
  if (vsix) {
    log(`installing ${vsix}`);
    installVsix(cs, sandbox, vsix);
    // Tests only run in extension-development mode, which needs an
    // extensionDevelopmentPath; an empty folder contributes no extension.
    devPath = path.join(sandbox.tmp, 'no-dev-extension');
    fs.mkdirSync(devPath);
  }

  log(`starting code-server (${cs.node})`);
  const server = await startCodeServer(cs, sandbox, {
    smokeTestDriver: true,
    // TINKER_STUDIO_TEST_HOOKS: the suite reaches the extension's internals through its test hook
    // (src/vscode/common/testHooks.ts), also when it tests an installed VSIX (not in extension-test mode)
    env: { VSCODE_TEST_RESULTS: resultsFile, TINKER_STUDIO_TEST_HOOKS: '1', ...(cs.vscode ? { TINKER_TEST_VSCODE_VERSION: cs.vscode } : {}) },
  });
  log(`code-server is up at ${server.base}, remote authority "${server.authority}"`);

  let browser;
  let exitCode = 1;
  const cleanup = async () => {
    await browser?.close().catch(() => {});
    await server.stop();
  };
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => void cleanup().then(() => process.exit(130)));
  }

  try {
    const remote = (p) => `vscode-remote://${server.authority}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(devPath)],
      ['extensionTestsPath', remote(testsModule)],
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
      // Like desktop `--disable-extensions`: everything but the extension under
      // development is disabled. Not in VSIX mode (it would disable that too).
      ...(process.env.ENABLE_OTHER_EXTENSIONS === '1' || vsix ? [] : [['disableExtensions', 'true']]),
    ];

    browser = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();

    // Called by the workbench once the extension host's test run has settled.
    const exited = new Promise((resolve) => {
      void page.exposeFunction('codeAutomationExit', (code) => resolve(Number(code)));
    });
    // The workbench log. It includes the extension host's console (mocha's spec
    // report, as info lines) but is noisy, so only warnings/errors by default.
    const verbose = process.env.VERBOSE === '1';
    await page.exposeFunction('codeAutomationLog', (level, msg) => {
      if (verbose || level === 'error' || level === 'warn') console.log(`[workbench ${elapsed()} ${level}] ${msg}`);
    });
    page.on('pageerror', (err) => console.log(`[page error] ${err.message}`));

    log('opening workbench');
    await page.goto(workbenchUrl(server.base, workspace, payload));

    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const code = await Promise.race([exited, timedOut]);
    clearTimeout(timer);

    if (code === 'timeout') {
      log(`timed out after ${timeoutMs} ms`);
      await page.screenshot({ path: path.join(sandbox.tmp, 'timeout.png') }).catch(() => {});
    } else {
      log(`extension host reported exit code ${code}`);
      exitCode = code;
    }

    if (fs.existsSync(resultsFile)) {
      const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
      for (const t of results.tests) {
        const mark = t.state === 'passed' ? 'ok  ' : t.state === 'failed' ? 'FAIL' : 'skip';
        console.log(`  ${mark} ${t.title}${t.durationMs ? ` (${t.durationMs} ms)` : ''}`);
        if (t.error) console.log(`       ${t.error.split('\n').slice(0, 4).join('\n       ')}`);
      }
      if (!results.ok && exitCode === 0) exitCode = 1;
      if (results.activation) {
        const a = results.activation;
        console.log(
          `activate() took ${a.activationMs.toFixed(1)} ms` +
            (a.loadAndActivateMs != null ? `, ${a.loadAndActivateMs.toFixed(1)} ms including loading the bundle` : '') +
            ' (goal: under 100 ms)',
        );
      }
      console.log(`extension-host (${cs.host}, Code ${results.host?.vscodeVersion ?? cs.vscode}): ${results.passed} passed, ${results.failed} failed`);
    } else {
      log(`no results file was written; see ${sandbox.log}`);
      if (exitCode === 0) exitCode = 1;
    }
  } catch (err) {
    log(`error: ${err?.stack ?? err}`);
    exitCode = 1;
  } finally {
    await cleanup();
  }

  if (process.env.KEEP_TMP === '1' || exitCode !== 0) {
    log(`logs kept in ${sandbox.tmp}`);
  } else {
    fs.rmSync(sandbox.tmp, { recursive: true, force: true });
  }
  log(`done, exit code ${exitCode}`);
  process.exit(exitCode);
}

main().catch((err) => {
  console.error(`[run-web-tests] ${err?.stack ?? err}`);
  process.exit(1);
});
