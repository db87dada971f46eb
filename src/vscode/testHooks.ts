// The extension's internals, for its own extension-host tests only: reachable through a command that
// is registered only while the test suite runs, so they are no part of the public API (src/api.ts).
import * as vscode from 'vscode';
import type { BreakdownPanels } from './breakdownPanels';
import type { CheckpointsTreeProvider } from './checkpointsTree';
import type { TinkerConnection } from './connection';
import type { ContextKeys } from './contextKeys';
import type { GrpoRunner } from './grpoRunner';
import type { MetricsPanels } from './metricsPanels';
import type { PlaygroundPanels } from './playgroundPanels';
import type { RewardEditor } from './rewards';
import type { RunRegistry } from './runRegistry';
import type { RunStatusItem } from './runStatusBar';
import type { RunsModel } from './runsModel';
import type { RunsTreeProvider } from './runsTree';
import type { SpecCodeLensProvider } from './specCodeLens';

/** Not contributed, so it is in no palette or menu; the leading underscore marks it private. */
export const TEST_HANDLES_COMMAND = '_tinker.testHandles';

/** Set by the host-test runners (scripts/run-web-tests.mjs, test/runTest.ts) in the extension host's environment. */
export const TEST_HOOKS_ENV = 'TINKER_STUDIO_TEST_HOOKS';

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
  /** the sample playground panel */
  playground: PlaygroundPanels;
  codeLenses: SpecCodeLensProvider;
  runStatus: RunStatusItem;
  /** the reward-function editor: reward files, validation state, CodeLens */
  rewards: RewardEditor;
  /** starts GRPO runs (the commands' back end) */
  runner: GrpoRunner;
  /** the context keys the manifest's `when` clauses read */
  contextKeys: ContextKeys;
  /** the window's connection to the current backend (the one runs and the playground use) */
  connection: TinkerConnection;
}

/** True while the extension host runs this extension's test suite (development or installed VSIX). */
function testHooksEnabled(mode: vscode.ExtensionMode): boolean {
  return mode === vscode.ExtensionMode.Test || process.env[TEST_HOOKS_ENV] === '1';
}

/** Registers the handles' command when the test suite runs; nothing otherwise. */
export function registerTestHooks(mode: vscode.ExtensionMode, handles: TinkerStudioTestHandles): vscode.Disposable[] {
  if (!testHooksEnabled(mode)) return [];
  // Called in-process by the suite: executeCommand hands back this very object, not a copy.
  return [vscode.commands.registerCommand(TEST_HANDLES_COMMAND, () => handles)];
}
