// Entry point: builds the services and registers the adapters. Nothing else lives here.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Redactor } from './core/config/redact';
import { CheckpointsTreeProvider } from './vscode/checkpointsTree';
import { registerCommands, registerTable } from './vscode/commands';
import { TinkerConnection } from './vscode/connection';
import { GrpoRunner } from './vscode/grpoRunner';
import { LocalEngine } from './vscode/localEngine';
import { Log } from './vscode/log';
import { MetricsPanels } from './vscode/metricsPanel';
import { RewardEditor, registerRewardEditor } from './vscode/rewards';
import { registerRunCommands } from './vscode/runCommands';
import { RunRegistry } from './vscode/runRegistry';
import { RunStatusItem } from './vscode/runStatusBar';
import { SPEC_SELECTOR, SpecCodeLensProvider } from './vscode/specCodeLens';
import { RunsModel } from './vscode/runsModel';
import { RunsTreeProvider } from './vscode/runsTree';
import { ApiKeyStore } from './vscode/secrets';
import { affects, readBackend, runsDirectory } from './vscode/settings';
import { BackendStatusItem } from './vscode/statusBar';
import { TrustedServers } from './vscode/trustedServers';

// Set by the bundle's first and last lines (scripts/build.mjs banner/footer) to measure load time.
declare const __tinkerLoadStart: number | undefined;
declare const __tinkerLoadEnd: number | undefined;

/** What activate() returns: used by the integration tests and by other extensions. No secrets. */
export interface TinkerStudioApi {
  /** wall-clock time activate() took, in milliseconds */
  activationMs: number;
  /** time to evaluate the bundle (module load) plus activationMs, when bundled */
  loadAndActivateMs: number | undefined;
  /** where the API key would come from, without revealing it */
  apiKeySource(): Promise<string | undefined>;
  runs: RunsModel;
  runsTree: RunsTreeProvider;
  checkpointsTree: CheckpointsTreeProvider;
  /** GRPO runs started in this window */
  registry: RunRegistry;
  metrics: MetricsPanels;
  codeLenses: SpecCodeLensProvider;
  runStatus: RunStatusItem;
  /** the reward-function editor: reward files, validation state, CodeLens */
  rewards: RewardEditor;
  /** starts GRPO runs (the commands' back end) */
  runner: GrpoRunner;
}

export function activate(context: vscode.ExtensionContext): TinkerStudioApi {
  const t0 = performance.now();
  const own = <T extends vscode.Disposable>(d: T): T => {
    context.subscriptions.push(d);
    return d;
  };

  const redactor = new Redactor();
  const log = own(new Log(redactor));
  const apiKeys = own(new ApiKeyStore(context.secrets, redactor));
  const runs = own(new RunsModel(runsDirectory(context.globalStorageUri), log));
  const registry = own(new RunRegistry());
  const engine = own(new LocalEngine(context.extensionPath, context.globalStorageUri, log));
  stopEngine = () => engine.stop();
  const trustedServers = new TrustedServers(context.globalState);
  const connection = own(new TinkerConnection(engine, apiKeys, log, String(context.extension.packageJSON.version), trustedServers));
  for (const d of registerTable(
    {
      'tinker.forgetTrustedServers': async () => {
        await trustedServers.forgetAll();
        connection.reset();
        void vscode.window.showInformationMessage('Tinker: no server other than the official cloud will receive your API key without asking again.');
      },
    },
    log,
  ))
    own(d);
  const runsTree = own(new RunsTreeProvider(runs, registry, connection));
  const checkpointsTree = own(new CheckpointsTreeProvider(runs));
  own(vscode.window.createTreeView('tinker.runs', { treeDataProvider: runsTree, showCollapseAll: false }));
  own(vscode.window.createTreeView('tinker.checkpoints', { treeDataProvider: checkpointsTree, showCollapseAll: true }));
  const metrics = own(new MetricsPanels({ extensionUri: context.extensionUri, log, registry }));
  const runner = new GrpoRunner({ log, apiKeys, runs, connection, registry, cacheDir: path.join(context.globalStorageUri.fsPath, 'cache') });
  for (const d of registerCommands({ log, apiKeys, runs, connection, onRefresh: () => runsTree.refreshServer() })) own(d);
  for (const d of registerRunCommands({ log, runs, registry, runner, connection, metrics })) own(d);
  const runStatus = own(new RunStatusItem(registry));
  const lenses = own(new SpecCodeLensProvider(runs, registry));
  own(vscode.languages.registerCodeLensProvider(SPEC_SELECTOR, lenses));
  const rewards = registerRewardEditor(context, log, connection);
  for (const d of rewards.disposables) own(d);

  const status = own(new BackendStatusItem());
  const refreshStatus = async () => {
    const hasKey = (await apiKeys.get()) !== undefined;
    try {
      status.update(await readBackend(), hasKey);
    } catch (err) {
      status.update(err as Error, hasKey);
    }
  };
  void refreshStatus();
  own(
    apiKeys.onDidChange(() => {
      connection.reset();
      void refreshStatus();
    }),
  );
  own(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affects(e, 'backend', 'cloudBaseUrl', 'customBaseUrl')) {
        connection.reset();
        void refreshStatus();
      }
      if (affects(e, 'runsDirectory')) runs.setFolder(runsDirectory(context.globalStorageUri));
    }),
  );
  own(vscode.workspace.onDidChangeWorkspaceFolders(() => runs.setFolder(runsDirectory(context.globalStorageUri))));

  const t1 = performance.now();
  const activationMs = t1 - t0;
  const loadAndActivateMs =
    typeof __tinkerLoadStart === 'number' && typeof __tinkerLoadEnd === 'number'
      ? __tinkerLoadEnd - __tinkerLoadStart + activationMs
      : undefined;
  log.info(
    `Tinker Studio ${context.extension.packageJSON.version} activated in ${activationMs.toFixed(1)} ms` +
      (loadAndActivateMs !== undefined ? ` (${loadAndActivateMs.toFixed(1)} ms including loading the bundle)` : ''),
  );
  return {
    activationMs,
    loadAndActivateMs,
    apiKeySource: async () => (await apiKeys.get())?.source,
    runs,
    runsTree,
    checkpointsTree,
    registry,
    metrics,
    codeLenses: lenses,
    runStatus,
    rewards: rewards.editor,
    runner,
  };
}

let stopEngine: (() => Promise<void>) | undefined;

/** Disposables go with context.subscriptions; the local engine is stopped and awaited here. */
export async function deactivate(): Promise<void> {
  await stopEngine?.();
}
