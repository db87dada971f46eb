/**
 * Standard path: downloads VS Code (desktop, Electron) with @vscode/test-electron
 * and runs the mocha suite in its extension host. Needs internet access to the
 * VS Code update service; scripts/run-host-tests.mjs picks the code-server path where that is blocked.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '../..');
  // The suite may write into its workspace: give it a throw-away copy of the fixture.
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-host-ws-'));
  fs.cpSync(path.join(root, 'test/fixtures/workspace'), workspace, { recursive: true });
  try {
    await runTests({
      // VSCODE_TEST_VERSION=stable|insiders|1.139.1 (default: stable)
      version: process.env.VSCODE_TEST_VERSION || undefined,
      extensionDevelopmentPath: root,
      extensionTestsPath: path.resolve(__dirname, 'suite/index'),
      // the suite reaches the extension's internals through its test hook (src/vscode/common/testHooks.ts)
      // the embedded engine's checkpoint store (and cache) of this run, never the user's
      extensionTestsEnv: { TINKER_STUDIO_TEST_HOOKS: '1', TINKER_STUDIO_CACHE_DIR: `${workspace}-cache` },
      launchArgs: [
        workspace,
        '--disable-extensions',
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
  } catch (err) {
    console.error('Failed to run tests:', err);
    process.exitCode = 1;
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(`${workspace}-cache`, { recursive: true, force: true });
  }
}

void main();
