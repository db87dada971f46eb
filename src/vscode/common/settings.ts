// The one typed reader of the tinker.* settings (package.json contributes.configuration), and the
// one event that says which of them changed. The backend settings go to the pure resolvers in
// src/core/config.
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BackendKind, ResolvedBackend } from '../../core/config/backendKinds';
import { DEFAULT_REWARD_RANGE } from '../../core/reward/summary';
import { NETWORK_SETTINGS } from './networkSettings';
import type { PriceTable } from '../../core/cost/prices';
import { DEFAULT_CONFIRM_COST_ABOVE_USD } from '../../core/cost/budget';

export const SECTION = 'tinker';

/** The settings, without the `tinker.` prefix. */
export type SettingKey = 'backend' | 'cloudBaseUrl' | 'customBaseUrl' | 'runsDirectory' | 'rewardFiles' | 'rewardRange' | 'rewardEnvironment' | 'pythonPath';

export interface SettingsChange {
  affects(...keys: SettingKey[]): boolean;
  /** VS Code's own http.* proxy/certificate settings changed (see networkSettings.ts) */
  readonly network: boolean;
}

/** Fires when a tinker.* setting (or one of VS Code's network settings) changes, saying which. */
export function onDidChangeSettings(listener: (e: SettingsChange) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    const network = NETWORK_SETTINGS.some((k) => e.affectsConfiguration(k));
    if (network || e.affectsConfiguration(SECTION)) listener({ network, affects: (...keys) => keys.some((k) => e.affectsConfiguration(`${SECTION}.${k}`)) });
  });
}

const config = () => vscode.workspace.getConfiguration(SECTION);

/** Resolves the backend from settings; rejects with a BackendConfigError naming the bad setting. */
export async function readBackend(): Promise<ResolvedBackend> {
  const { resolveBackend } = await import('../../core/config/backend'); // zod: loaded after activation
  const c = config();
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
  const { resolveBackend } = await import('../../core/config/backend');
  const c = config();
  return resolveBackend(
    { backend: kind, cloudBaseUrl: c.get('cloudBaseUrl'), customBaseUrl: kind === 'custom' && baseUrl ? baseUrl : c.get('customBaseUrl') },
    process.env,
  );
}

/** `tinker.confirmCostAboveUsd`: a job estimated above this asks before it starts (a bad value: the default). */
export function confirmCostAboveUsdSetting(): number {
  const v = config().get<unknown>('confirmCostAboveUsd');
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : DEFAULT_CONFIRM_COST_ABOVE_USD;
}

/** The price table in force: `tinker.prices` over the shipped one; rejects with a PriceTableError naming the bad field. */
export async function pricesSetting(): Promise<PriceTable> {
  const { pricesFrom } = await import('../../core/cost/priceSettings'); // zod: loaded after activation
  return pricesFrom(config().get<unknown>('prices', {}), 'the tinker.prices setting');
}

/** Environment variables reward workers get besides the built-in allowlist (machine setting). */
export function rewardEnvironmentSetting(): string[] {
  const v = config().get<unknown>('rewardEnvironment', []);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : [];
}

/** The Python interpreter setting (empty: not set). */
export function pythonPathSetting(): string | undefined {
  const v = config().get<string>('pythonPath', '').trim();
  return v || undefined;
}

export async function writeBackend(kind: BackendKind, customBaseUrl?: string): Promise<void> {
  const c = config();
  if (customBaseUrl !== undefined) await c.update('customBaseUrl', customBaseUrl, vscode.ConfigurationTarget.Global);
  await c.update('backend', kind, vscode.ConfigurationTarget.Global);
}

/** The folder holding run directories (setting, else <first workspace folder>/runs, else storage). */
export function runsDirectory(globalStorage: vscode.Uri): string {
  const configured = config().get<string>('runsDirectory', '').trim();
  if (configured) {
    const expanded = configured.startsWith('~') ? path.join(os.homedir(), configured.slice(1)) : configured;
    const folder = vscode.workspace.workspaceFolders?.[0];
    return path.isAbsolute(expanded) || !folder ? path.resolve(expanded) : path.join(folder.uri.fsPath, expanded);
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? path.join(folder.uri.fsPath, 'runs') : path.join(globalStorage.fsPath, 'runs');
}

/** The W&B project runs log to when their spec names none (empty: only specs with wandb_project). */
export function wandbProjectSetting(): string | undefined {
  return config().get<string>('wandb.project', '').trim() || undefined;
}

/** A self-hosted W&B server (application scope, restricted): empty means WANDB_BASE_URL or W&B's cloud. */
export function wandbBaseUrlSetting(): string | undefined {
  return config().get<string>('wandb.baseUrl', '').trim() || undefined;
}

/** The custom server's URL as set (empty: not set). */
/** The tinker.projectId setting: the project runs are created in and the server listings filter by (undefined: none). */
export function projectIdSetting(): string | undefined {
  return config().get<string>('projectId', '').trim() || undefined;
}

export function customBaseUrlSetting(): string {
  return config().get<string>('customBaseUrl', '').trim();
}

/** The `tinker.rewardFiles` globs (non-empty strings only). */
export function rewardFilesSetting(): string[] {
  const v = config().get<unknown>('rewardFiles', []);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : [];
}

/** The `tinker.rewardRange` setting, [min, max] (an invalid value falls back to [0, 1]). */
export function rewardRangeSetting(): readonly [number, number] {
  const v = config().get<unknown>('rewardRange');
  if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number' && v[0] < v[1]) return [v[0], v[1]];
  return DEFAULT_REWARD_RANGE;
}

/** so a file no spec names yet is validated: its workspace-relative path joins `tinker.rewardFiles` */
export async function addToRewardFilesSetting(uri: vscode.Uri): Promise<void> {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  const entry = folder ? path.relative(folder.uri.fsPath, uri.fsPath).split(path.sep).join('/') : uri.fsPath;
  const c = vscode.workspace.getConfiguration(SECTION, uri);
  const current = c.get<string[]>('rewardFiles', []);
  if (current.includes(entry)) return;
  await c.update('rewardFiles', [...current, entry], folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
}

/** The `tinker.preferencesFile` setting resolved against the first workspace folder (undefined: not set). */
export function preferencesFileSetting(): string | undefined {
  const v = config().get<string>('preferencesFile', '').trim();
  if (!v) return undefined;
  const expanded = v.startsWith('~') ? path.join(os.homedir(), v.slice(1)) : v;
  const folder = vscode.workspace.workspaceFolders?.[0];
  return path.isAbsolute(expanded) || !folder ? path.resolve(expanded) : path.join(folder.uri.fsPath, expanded);
}

/** Sets `tinker.preferencesFile` for the workspace (relative to its folder when inside it). */
export async function writePreferencesFileSetting(file: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const rel = folder ? path.relative(folder.uri.fsPath, file) : undefined;
  const value = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : file;
  await config().update('preferencesFile', value, folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
}
