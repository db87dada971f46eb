// The API another extension gets from `vscode.extensions.getExtension('tinker-studio.tinker-studio').activate()`.
// Kept small and stable: runs are started and opened through the contributed `tinker.*` commands, and
// read from the runs folder (one directory per run, see docs/checkpoints.md, "The run directory"). No secrets.
import type * as vscode from 'vscode';

export interface TinkerStudioApi {
  /** wall-clock time activate() took, in milliseconds */
  readonly activationMs: number;
  /** time to evaluate the bundle (module load) plus activationMs, when bundled */
  readonly loadAndActivateMs: number | undefined;
  /** the folder the Runs view lists (setting `tinker.runsDirectory`, else the workspace's `runs/`) */
  runsFolder(): string;
  /** fires after the runs read from the runs folder change (a run's files, or the folder setting) */
  readonly onDidChangeRuns: vscode.Event<void>;
}

/** The members of TinkerStudioApi: a host test checks the returned object has exactly these. */
export const PUBLIC_API_MEMBERS = ['activationMs', 'loadAndActivateMs', 'onDidChangeRuns', 'runsFolder'] as const;
