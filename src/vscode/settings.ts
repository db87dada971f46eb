// Reads the tinker.* settings and hands them to the pure resolvers in src/core/config.
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BackendKind, ResolvedBackend } from '../core/config/backendKinds';

export const SECTION = 'tinker';

/** Resolves the backend from settings; rejects with a BackendConfigError naming the bad setting. */
export async function readBackend(): Promise<ResolvedBackend> {
  const { resolveBackend } = await import('../core/config/backend'); // zod: loaded after activation
  const c = vscode.workspace.getConfiguration(SECTION);
  return resolveBackend(
    { backend: c.get('backend'), cloudBaseUrl: c.get('cloudBaseUrl'), customBaseUrl: c.get('customBaseUrl') },
    process.env,
  );
}

/**
 * The backend a run spec names ("local" | "cloud" | "custom", and its own base_url for "custom"),
 * with the URLs the settings give where the spec has none.
 */
export async function readBackendFor(kind: BackendKind, baseUrl?: string): Promise<ResolvedBackend> {
  const { resolveBackend } = await import('../core/config/backend');
  const c = vscode.workspace.getConfiguration(SECTION);
  return resolveBackend(
    { backend: kind, cloudBaseUrl: c.get('cloudBaseUrl'), customBaseUrl: kind === 'custom' && baseUrl ? baseUrl : c.get('customBaseUrl') },
    process.env,
  );
}

/** Environment variables reward workers get besides the built-in allowlist (machine setting). */
export function rewardEnvironmentSetting(): string[] {
  const v = vscode.workspace.getConfiguration(SECTION).get<unknown>('rewardEnvironment', []);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : [];
}

/** The Python interpreter setting (empty: not set). */
export function pythonPathSetting(): string | undefined {
  const v = vscode.workspace.getConfiguration(SECTION).get<string>('pythonPath', '').trim();
  return v || undefined;
}

export async function writeBackend(kind: BackendKind, customBaseUrl?: string): Promise<void> {
  const c = vscode.workspace.getConfiguration(SECTION);
  if (customBaseUrl !== undefined) await c.update('customBaseUrl', customBaseUrl, vscode.ConfigurationTarget.Global);
  await c.update('backend', kind, vscode.ConfigurationTarget.Global);
}

/** The folder holding run directories (setting, else <first workspace folder>/runs, else storage). */
export function runsDirectory(globalStorage: vscode.Uri): string {
  const configured = vscode.workspace.getConfiguration(SECTION).get<string>('runsDirectory', '').trim();
  if (configured) {
    const expanded = configured.startsWith('~') ? path.join(os.homedir(), configured.slice(1)) : configured;
    const folder = vscode.workspace.workspaceFolders?.[0];
    return path.isAbsolute(expanded) || !folder ? path.resolve(expanded) : path.join(folder.uri.fsPath, expanded);
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? path.join(folder.uri.fsPath, 'runs') : path.join(globalStorage.fsPath, 'runs');
}

export function affects(e: vscode.ConfigurationChangeEvent, ...keys: string[]): boolean {
  return keys.some((k) => e.affectsConfiguration(`${SECTION}.${k}`));
}
