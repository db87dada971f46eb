// Context keys that let package.json's `when` clauses show a command only where it can work:
//   tinker.runActive         a run of this window is starting or running (Cancel Run)
//   tinker.hasResumableRun   the runs folder holds a run that is neither finished nor running (Resume Run)
//   tinker.rewardFileActive  the active editor shows a reward file (Dry Run, Show Reward Examples)
// Each follows the state it describes through that state's own change event.
import * as vscode from 'vscode';
import type { RunSummary } from '../../core/runs/runDirectory';
import { ActiveRunStatus, isResumable } from '../../core/runs/runStatus';
import { Disposable } from './lifecycle';

/** What the keys follow, as the features provide it (the run registry, the runs model, the reward file index). */
export interface ContextKeySources {
  /** the runs this window started */
  registry: { readonly onDidChange: vscode.Event<unknown>; active(): ReadonlyArray<{ runDir: string | undefined }>; byDir(runDir: string): { status: ActiveRunStatus } | undefined };
  /** the run directories of the runs folder */
  runs: { readonly onDidChange: vscode.Event<unknown>; list(): Promise<RunSummary[]> };
  rewardFiles: { readonly onDidChange: vscode.Event<unknown>; isRewardFile(uri: vscode.Uri): boolean };
}

export const CONTEXT_KEYS = {
  runActive: 'tinker.runActive',
  hasResumableRun: 'tinker.hasResumableRun',
  rewardFileActive: 'tinker.rewardFileActive',
} as const;

export class ContextKeys extends Disposable {
  private readonly values = new Map<string, boolean>();

  constructor(
    private readonly registry: ContextKeySources['registry'],
    private readonly runs: ContextKeySources['runs'],
    private readonly rewardFiles: ContextKeySources['rewardFiles'],
  ) {
    super();
    this._registerAll(
      registry.onDidChange(() => void this.updateRuns()),
      runs.onDidChange(() => void this.updateRuns()),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateEditor()),
      rewardFiles.onDidChange(() => this.updateEditor()),
    );
    void this.updateRuns();
    this.updateEditor();
  }

  /** The value last set for `key` (what `when` clauses see). */
  get(key: string): boolean | undefined {
    return this.values.get(key);
  }

  private set(key: string, value: boolean): void {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  private async updateRuns(): Promise<void> {
    const active = this.registry.active();
    this.set(CONTEXT_KEYS.runActive, active.length > 0);
    this.set(CONTEXT_KEYS.hasResumableRun, (await this.runs.list()).some((r) => isResumable(r, this.registry.byDir(r.dir))));
  }

  private updateEditor(): void {
    const uri = vscode.window.activeTextEditor?.document.uri;
    this.set(CONTEXT_KEYS.rewardFileActive, uri !== undefined && this.rewardFiles.isRewardFile(uri));
  }
}
