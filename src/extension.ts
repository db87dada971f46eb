// Entry point: builds the services and registers the adapters, and declares the handles its
// extension-host tests reach (TinkerStudioTestHandles). Nothing else lives here.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Redactor } from './core/config/redact';
import { leaveLocksAtShutdown } from './core/runs/shutdown';
import { registerBreakdownCommands } from './vscode/breakdown/breakdownCommands';
import { breakdownPanels } from './vscode/breakdown/breakdownPanels';
import { evalPanels } from './vscode/evals/evalPanels';
import { registerEvalCommands } from './vscode/evals/evalCommands';
import { registerDistillCommands } from './vscode/distill/distillCommand';
import { registerEvalSampleDocuments } from './vscode/evals/evalSampleDocuments';
import { suitePanels, type SuitePanels } from './vscode/evals/suitePanels';
import { registerSuiteCommands } from './vscode/evals/suiteCommands';
import { registerBenchmarkCommands } from './vscode/evals/benchmarkCommands';
import { SuiteDiagnostics } from './vscode/evals/suiteDiagnostics';
import { registerCheckpointCommands } from './vscode/checkpoints/checkpointCommands';
import { registerExportCommands } from './vscode/checkpoints/exportCommands';
import { registerEngineExportCommand } from './vscode/checkpoints/engineExportCommand';
import { registerPublishCommands } from './vscode/checkpoints/publishCommands';
import { CheckpointsTreeProvider } from './vscode/checkpoints/checkpointsTree';
import { registerSampleDocuments } from './vscode/samples/sampleDocuments';
import { registerSampleDiffs } from './vscode/samples/sampleDiffs';
import { registerPlaygroundCommands } from './vscode/playground/playgroundCommands';
import { registerPlaygroundDocuments } from './vscode/playground/playgroundDocuments';
import { playgroundPanels } from './vscode/playground/playgroundPanels';
import { resolvePython } from './vscode/common/pythonInterpreter';
import { registerTable } from './vscode/common/commandTable';
import { registerConnectionCommands } from './vscode/connection/connectionCommands';
import { TinkerConnection } from './vscode/connection/connection';
import { registerAgentTools } from './vscode/agent/agentTools';
import { ContextKeys } from './vscode/common/contextKeys';
import { RunRunner } from './vscode/runs/runRunner';
import { LocalEngine } from './vscode/connection/localEngine';
import { Log } from './vscode/common/log';
import { metricsPanels } from './vscode/metrics/metricsPanels';
import { pairsPanels, type PairsPanels } from './vscode/dpo/pairsPanels';
import { registerPairsDocuments } from './vscode/dpo/pairsDocuments';
import { preferencesFile, registerPairsCommands } from './vscode/dpo/pairsCommands';
import { comparePanels } from './vscode/experiments/comparePanels';
import { registerCompareCommands } from './vscode/experiments/compareCommands';
import { SweepRunner } from './vscode/experiments/sweepRunner';
import { registerSweepCommands } from './vscode/experiments/sweepCommands';
import { SWEEP_SELECTOR, SweepCodeLensProvider } from './vscode/experiments/sweepCodeLens';
import { registerRewardEditor } from './vscode/rewards/rewards';
import { registerEnvEditor, type EnvEditor } from './vscode/envs/envs';
import { registerRunCommands } from './vscode/runs/runCommands';
import { registerRunsFolderCommands } from './vscode/runs/runsFolderCommands';
import { RunRegistry } from './vscode/runs/runRegistry';
import { RunStatusItem } from './vscode/runs/runStatusBar';
import { SPEC_SELECTOR, SpecCodeLensProvider } from './vscode/runs/specCodeLens';
import { RunsModel } from './vscode/runs/runsModel';
import { RunsTreeProvider } from './vscode/runs/runsTree';
import { EvalResultsRows } from './vscode/evals/evalTreeItems';
import { ApiKeyStore, HubTokenStore, WandbKeyStore } from './vscode/connection/secrets';
import { onDidChangeSettings, readBackend, runsDirectory } from './vscode/common/settings';
import { BackendStatusItem } from './vscode/connection/backendStatusBar';
import { TrustedServers } from './vscode/connection/trustedServers';
import { haveKeyFor } from './vscode/connection/apiKeyPrompt';
import { COMMAND } from './vscode/common/commandIds';
import { registerTestHooks } from './vscode/common/testHooks';
import { overrideWindowUi } from './vscode/common/windowUi';
import type { BreakdownPanels } from './vscode/breakdown/breakdownPanels';
import type { EvalPanels } from './vscode/evals/evalPanels';
import type { MetricsPanels } from './vscode/metrics/metricsPanels';
import type { ComparePanels } from './vscode/experiments/comparePanels';
import type { PlaygroundPanels } from './vscode/playground/playgroundPanels';
import type { RewardEditor } from './vscode/rewards/rewards';
import { SpecDiagnostics } from './vscode/runs/specDiagnostics';
import type { TinkerStudioApi } from './api';
import { TinkerChatModels } from './vscode/chat/chatModels';
import { registerChatCommands } from './vscode/chat/chatCommands';
import { ModelRegistryFile } from './vscode/models/registryFile';
import { ModelsTreeProvider } from './vscode/models/modelsTree';
import { modelCardPanels, type ModelCardPanels } from './vscode/models/modelCardPanels';
import { registerModelCommands } from './vscode/models/modelCommands';

export type { TinkerStudioApi } from './api';

/** The extension's internals its extension-host tests reach (src/vscode/common/testHooks.ts); no public API. */
export interface TinkerStudioTestHandles {
  /** where the API key would come from, without revealing it */
  apiKeySource(): Promise<string | undefined>;
  runs: RunsModel;
  runsTree: RunsTreeProvider;
  checkpointsTree: CheckpointsTreeProvider;
  /** GRPO runs started in this window */
  registry: RunRegistry;
  metrics: MetricsPanels;
  /** the GRPO group breakdown panels */
  breakdowns: BreakdownPanels;
  /** the evaluation results panels */
  evals: EvalPanels;
  /** the suite results and Compare Suites panels */
  suites: SuitePanels;
  /** the suite files' problems as you type */
  suiteDiagnostics: SuiteDiagnostics;
  /** the Compare Runs panels */
  compare: ComparePanels;
  /** the sample playground panel */
  playground: PlaygroundPanels;
  /** the Preference Pairs panels (a pairs file or a DPO run each) */
  pairs: PairsPanels;
  codeLenses: SpecCodeLensProvider;
  runStatus: RunStatusItem;
  /** the reward-function editor: reward files, validation state, CodeLens */
  rewards: RewardEditor;
  /** the environment-file editor: validation, CodeLens, the Play as the Model panel */
  envs: EnvEditor;
  /** starts GRPO and SFT runs (the commands' back end) */
  runner: RunRunner;
  /** runs sweeps (Start / Resume / Cancel Sweep, the sweep CodeLens, the Runs view's sweep nodes) */
  sweeps: SweepRunner;
  /** the context keys the manifest's `when` clauses read */
  contextKeys: ContextKeys;
  /** the window's connection to the current backend (the one runs and the playground use) */
  connection: TinkerConnection;
  /** answers and records input boxes, warnings and openExternal (common/windowUi.ts) */
  ui: { override: typeof overrideWindowUi };
  /** the extension's SecretStorage (where the Tinker and W&B keys are kept) */
  secrets: vscode.SecretStorage;
  /** the folder of the extension's log files (the "Tinker" output channel's file is in it) */
  logUri: vscode.Uri;
  /** checkpoints as language models (vendor "tinker"; registered only where the host has the API) */
  chatModels: TinkerChatModels;
  /** the Models view (the workspace's model registry, by status) */
  modelsTree: ModelsTreeProvider;
  /** the model card panels, one per model version */
  modelCards: ModelCardPanels;
}

// Set by the bundle's first and last lines (scripts/build.mjs banner/footer) to measure load time.
declare const __tinkerLoadStart: number | undefined;
declare const __tinkerLoadEnd: number | undefined;

export function activate(context: vscode.ExtensionContext): TinkerStudioApi {
  const t0 = performance.now();
  const own = <T extends vscode.Disposable>(d: T): T => {
    context.subscriptions.push(d);
    return d;
  };

  const redactor = new Redactor();
  const log = own(new Log(redactor));
  const apiKeys = own(new ApiKeyStore(context.secrets, redactor));
  const wandbKeys = new WandbKeyStore(context.secrets, redactor);
  const hubToken = new HubTokenStore(context.secrets, redactor);
  const runs = own(new RunsModel(runsDirectory(context.globalStorageUri), log));
  const registry = own(new RunRegistry());
  const engine = own(new LocalEngine(context.extensionPath, context.globalStorageUri, log));
  stopEngine = () => engine.stop();
  const trustedServers = new TrustedServers(context.globalState);
  const connection = own(new TinkerConnection(engine, apiKeys, log, String(context.extension.packageJSON.version), trustedServers));
  for (const d of registerTable(
    {
      [COMMAND.showLog]: () => log.show(),
      [COMMAND.forgetTrustedServers]: async () => {
        await trustedServers.forgetAll();
        connection.reset();
        void vscode.window.showInformationMessage('Tinker: no server other than the official cloud will receive your API key without asking again.');
      },
    },
    log,
  ))
    own(d);
  // tokenizer files and dataset pages, shared by runs, dry runs, agent tools and the playground
  const cacheDir = path.join(context.globalStorageUri.fsPath, 'cache');
  const runner = new RunRunner({ log, apiKeys, wandbKeys, runs, connection, registry, cacheDir });
  const sweeps = own(new SweepRunner({ runner, registry }));
  const runsTree = own(new RunsTreeProvider(runs, registry, connection, undefined, sweeps, [own(new EvalResultsRows())]));
  // one listing of the server's runs for both views
  const checkpointsTree = own(new CheckpointsTreeProvider(runs, connection, { serverRuns: runsTree.serverRuns }));
  own(vscode.window.createTreeView('tinker.runs', { treeDataProvider: runsTree, showCollapseAll: false, canSelectMany: true }));
  own(vscode.window.createTreeView('tinker.checkpoints', { treeDataProvider: checkpointsTree, showCollapseAll: true, canSelectMany: true }));
  for (const d of registerCheckpointCommands({ log, connection, tree: checkpointsTree })) own(d);
  for (const d of registerExportCommands({ log, connection, tree: checkpointsTree })) own(d);
  for (const d of registerEngineExportCommand({ log, connection, tree: checkpointsTree })) own(d);
  for (const d of registerPublishCommands({ log, connection, tree: checkpointsTree, hubToken })) own(d);
  const metrics = own(
    metricsPanels({
      extensionUri: context.extensionUri,
      log,
      registry,
      openIteration: async (runDir, step) => (await vscode.commands.executeCommand<boolean>(COMMAND.showIteration, { runDir, step })) === true,
    }),
  );
  own(metrics.registerSerializer());
  const breakdowns = own(breakdownPanels({ extensionUri: context.extensionUri, log }));
  own(breakdowns.registerSerializer());
  for (const d of registerBreakdownCommands({ log, runs, breakdowns })) own(d);
  const compare = own(
    comparePanels({
      extensionUri: context.extensionUri,
      log,
      registry,
      cacheFolder: path.join(context.globalStorageUri.fsPath, 'columns'),
      openIteration: async (runDir, step) => (await vscode.commands.executeCommand<boolean>(COMMAND.showIteration, { runDir, step })) === true,
      compareSamples: async (runDir, otherRunDir) => {
        await vscode.commands.executeCommand(COMMAND.compareRuns, { runDir, otherRunDir, pickIterations: true });
      },
    }),
  );
  own(compare.registerSerializer());
  for (const d of registerCompareCommands({ log, runs, compare })) own(d);
  for (const d of registerSampleDocuments(log)) own(d);
  for (const d of registerSampleDiffs({ log, runs })) own(d);
  const evals = own(evalPanels({ extensionUri: context.extensionUri, log }));
  own(evals.registerSerializer());
  own(registerEvalSampleDocuments());
  for (const d of registerEvalCommands({ log, evals, runs, connection, apiKeys, cacheDir })) own(d);
  // the agreed eval suite (issue 47): its panel, commands, CodeLens and diagnostics
  const suites = own(suitePanels({ extensionUri: context.extensionUri, log }));
  own(suites.registerSerializer());
  for (const d of registerSuiteCommands({ log, suites, runs, connection, apiKeys, cacheDir })) own(d);
  for (const d of registerBenchmarkCommands({ log, evals, suites, runs, connection, apiKeys, cacheDir })) own(d);
  const suiteDiagnostics = own(new SuiteDiagnostics());
  for (const d of registerDistillCommands({ log, connection, apiKeys, cacheDir })) own(d);
  for (const d of registerConnectionCommands({ log, apiKeys, wandbKeys, connection })) own(d);
  for (const d of registerRunsFolderCommands({ log, runs, onRefresh: () => runsTree.refreshServer(), extensionPath: context.extensionPath })) own(d);
  for (const d of registerRunCommands({ log, runs, registry, runner, connection, metrics })) own(d);
  const runStatus = own(new RunStatusItem(registry));
  const lenses = own(new SpecCodeLensProvider(runs, registry));
  own(vscode.languages.registerCodeLensProvider(SPEC_SELECTOR, lenses));
  for (const d of registerSweepCommands({ log, sweeps })) own(d);
  own(vscode.languages.registerCodeLensProvider(SWEEP_SELECTOR, own(new SweepCodeLensProvider(sweeps, runs, registry))));
  own(new SpecDiagnostics());
  for (const d of registerAgentTools({ log, apiKeys, hubToken, runs, connection, registry, sweeps, cacheDir, extensionPath: context.extensionPath, packageJSON: context.extension.packageJSON })) own(d);
  const rewards = registerRewardEditor(context, log, connection);
  for (const d of rewards.disposables) own(d);
  const envs = registerEnvEditor(context, { log, index: rewards.editor.index, connection, apiKeys, cacheDir });
  for (const d of envs.disposables) own(d);
  const contextKeys = own(new ContextKeys(registry, runs, rewards.editor.index));
  const playground = own(
    playgroundPanels({
      extensionUri: context.extensionUri,
      log,
      service: async () => {
        if (!(await haveKeyFor(await readBackend(), apiKeys, 'The playground'))) throw new Error('no Tinker API key is set: run "Tinker: Set API Key" (or set TINKER_API_KEY)');
        return connection.get();
      },
      cacheDir,
      state: context.workspaceState,
      runs: async () => (await runs.list()).map((r) => ({ name: r.name, dir: r.dir })),
      checkpoints: async () =>
        (await runs.list()).flatMap((r) => [...r.checkpoints].reverse().flatMap((c) => (c.sampler_path ? [{ label: `${r.name} · ${c.name}`, path: c.sampler_path }] : []))),
      rewardFiles: () => rewards.editor.index.specRewardFiles(),
      python: async (file) => (await resolvePython(vscode.Uri.file(file), log)).path,
      trusted: () => vscode.workspace.isTrusted,
      preferences: {
        file: () => preferencesFile(true),
        open: async () => {
          await vscode.commands.executeCommand(COMMAND.showPreferencePairs, await preferencesFile(false));
        },
      },
    }),
  );
  own(playground.registerSerializer());
  own(registerPlaygroundDocuments());
  for (const d of registerPlaygroundCommands({ log, playground, cacheDir })) own(d);
  // preference pairs (DPO): the pairs panel on a file or a DPO run, its diff documents
  const pairs = own(
    pairsPanels({
      extensionUri: context.extensionUri,
      log,
      onRunEvent: (listener) => registry.onDidReceiveEvent(({ run, event }) => listener({ runDir: run.runDir, type: event.type })),
      isRunning: (runDir) => {
        const r = registry.byDir(runDir);
        return r !== undefined && (r.status === 'running' || r.status === 'starting');
      },
    }),
  );
  own(pairs.registerSerializer());
  own(registerPairsDocuments());
  for (const d of registerPairsCommands({ log, pairs, runs: async () => (await runs.list()).map((r) => ({ name: r.name, dir: r.dir })) })) own(d);

  // checkpoints as chat models and the OpenAI-compatible endpoint (issue 34)
  const chatModels = own(new TinkerChatModels({ log, connection, state: context.globalState, cacheDir, engineRunning: () => engine.url !== undefined }));
  for (const d of registerChatCommands({ log, connection, models: chatModels, runs })) own(d);

  // the model registry (issue 48): the Models view, the model cards and their commands
  const modelRegistry = own(new ModelRegistryFile());
  const modelsTree = own(new ModelsTreeProvider(modelRegistry));
  own(vscode.window.createTreeView('tinker.models', { treeDataProvider: modelsTree, showCollapseAll: true }));
  const modelCards = own(
    modelCardPanels({
      extensionUri: context.extensionUri,
      log,
      registry: modelRegistry,
      gate: async (file, id) => (await import('./vscode/models/modelCard')).gateView(file, id),
    }),
  );
  own(modelCards.registerSerializer());
  const suiteRunnerFor = async (file: string) => (await import('./vscode/models/suiteRunner')).windowSuiteRunner({ log, connection, cacheDir, runsFolder: () => runs.runsFolder }, file);
  for (const d of registerModelCommands({ log, registry: modelRegistry, cards: modelCards, connection, suiteRunner: suiteRunnerFor })) own(d);

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
      chatModels.refresh();
      void refreshStatus();
    }),
  );
  own(
    onDidChangeSettings((e) => {
      if (e.network || e.affects('backend', 'cloudBaseUrl', 'customBaseUrl')) {
        connection.reset();
        chatModels.refresh();
        void refreshStatus();
      }
      if (e.affects('runsDirectory')) runs.setFolder(runsDirectory(context.globalStorageUri));
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
  for (const d of registerTestHooks<TinkerStudioTestHandles>(context.extensionMode, {
    apiKeySource: async () => (await apiKeys.get())?.source,
    runs,
    runsTree,
    checkpointsTree,
    registry,
    metrics,
    breakdowns,
    evals,
    suites,
    suiteDiagnostics,
    compare,
    playground,
    pairs,
    codeLenses: lenses,
    runStatus,
    rewards: rewards.editor,
    envs: envs.editor,
    runner,
    sweeps,
    contextKeys,
    connection,
    ui: { override: overrideWindowUi },
    secrets: context.secrets,
    logUri: context.logUri,
    chatModels,
    modelsTree,
    modelCards,
  }))
    own(d);
  return {
    activationMs,
    loadAndActivateMs,
    runsFolder: () => runs.runsFolder,
    onDidChangeRuns: runs.onDidChange,
  };
}

let stopEngine: (() => Promise<void>) | undefined;

/** Disposables go with context.subscriptions; the local engine is stopped and awaited here. */
export async function deactivate(): Promise<void> {
  // VS Code calls this before it disposes the subscriptions (the run registry aborts runs then), so the
  // runs stopped from here on keep their locks and read as interrupted once this host exits
  leaveLocksAtShutdown();
  await stopEngine?.();
}
