// Small helpers for the extension-host suite: wait on conditions (never fixed sleeps), get the
// extension's public API or its test handles.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { TinkerStudioApi, TinkerStudioTestHandles } from '../../src/extension';
import { TEST_HANDLES_COMMAND } from '../../src/vscode/common/testHooks';

export const EXTENSION_ID = 'tinker-studio.tinker-studio';

/** A Memento in memory for one test (the extension's own state outlives the test profile); values are copied in and out as the real one stores them. */
export class MemoryMemento implements vscode.Memento {
  private readonly values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return this.values.has(key) ? structuredClone(this.values.get(key) as T) : fallback;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, structuredClone(value));
  }
}

/** Activates the extension and returns what other extensions get. */
export async function activatePublicApi(): Promise<TinkerStudioApi> {
  const ext = vscode.extensions.getExtension<TinkerStudioApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is installed`);
  return ext.activate();
}

/** Activates the extension and returns its internals, registered only while the test suite runs. */
export async function activateExtension(): Promise<TinkerStudioTestHandles> {
  await activatePublicApi();
  const handles = await vscode.commands.executeCommand<TinkerStudioTestHandles | undefined>(TEST_HANDLES_COMMAND);
  assert.ok(handles, `${TEST_HANDLES_COMMAND} returned the test handles (the host runner sets TINKER_STUDIO_TEST_HOOKS=1)`);
  return handles;
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes (then fails with `what`). */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the test workspace is open');
  return folder.uri.fsPath;
}

/**
 * VS Code starts file watchers asynchronously, so a file written right after activation can go
 * unnoticed. This waits until the runs watcher is live: it touches a probe file in a hidden folder of
 * the runs folder (ignored by the run listing) until the model reports a change.
 */
export async function waitForRunsWatcher(api: TinkerStudioTestHandles, timeoutMs = 30_000): Promise<void> {
  const probeDir = path.join(api.runs.runsFolder, '.watcher-probe');
  fs.mkdirSync(probeDir, { recursive: true });
  const deadline = Date.now() + timeoutMs;
  try {
    for (let i = 0; ; i++) {
      const changed = new Promise<boolean>((resolve) => {
        const sub = api.runs.onDidChange(() => {
          sub.dispose();
          resolve(true);
        });
        setTimeout(() => {
          sub.dispose();
          resolve(false);
        }, 1000);
      });
      fs.writeFileSync(path.join(probeDir, 'metrics.jsonl'), `{"step": ${i}}\n`);
      if (await changed) return;
      if (Date.now() > deadline) throw new Error(`the runs folder watcher did not report a change within ${timeoutMs} ms`);
    }
  } finally {
    fs.rmSync(probeDir, { recursive: true, force: true });
  }
}

/**
 * For a suite that runs on the local engine: activates the extension, points tinker.runsDirectory
 * at a fresh temp folder (user settings) before the suite and resets both settings after it.
 * Returns getters, valid inside the suite's tests.
 */
export function useLocalEngineAndRunsFolder(prefix: string): { api: () => TinkerStudioTestHandles; runsDir: () => string } {
  let api: TinkerStudioTestHandles | undefined;
  let runsDir: string | undefined;
  suiteSetup(async () => {
    api = await activateExtension();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    runsDir = dir;
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('backend', 'local', vscode.ConfigurationTarget.Global);
    await c.update('runsDirectory', dir, vscode.ConfigurationTarget.Global);
    const a = api;
    await waitFor('the runs folder setting to apply', () => a.runs.runsFolder === dir);
  });
  suiteTeardown(async () => {
    const c = vscode.workspace.getConfiguration('tinker');
    await c.update('runsDirectory', undefined, vscode.ConfigurationTarget.Global);
    await c.update('backend', undefined, vscode.ConfigurationTarget.Global);
  });
  return {
    api: () => {
      assert.ok(api, 'the suite has started');
      return api;
    },
    runsDir: () => {
      assert.ok(runsDir, 'the suite has started');
      return runsDir;
    },
  };
}
