// The extension's internals, for its own extension-host tests only: reachable through a command that
// is registered only while the test suite runs, so they are no part of the public API (src/api.ts).
import * as vscode from 'vscode';
import type { BreakdownPanels } from '../breakdown/breakdownPanels';
import type { CheckpointsTreeProvider } from '../checkpoints/checkpointsTree';
import type { ContextKeys } from './contextKeys';
import type { RunRunner } from '../runs/runRunner';
import type { MetricsPanels } from '../metrics/metricsPanels';
import type { PlaygroundPanels } from '../playground/playgroundPanels';
import type { RewardEditor } from '../rewards/rewards';
import type { RunRegistry } from '../runs/runRegistry';
import type { RunStatusItem } from '../runs/runStatusBar';
import type { RunsModel } from '../runs/runsModel';
import type { RunsTreeProvider } from '../runs/runsTree';
import type { SpecCodeLensProvider } from '../runs/specCodeLens';

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
  /** starts GRPO and SFT runs (the commands' back end) */
  runner: RunRunner;
  /** the context keys the manifest's `when` clauses read */
  contextKeys: ContextKeys;
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
