// Above an environment file's class: what the latest validation found ("Plays on 2 dataset lines"),
// "Dry Run Episode" (the model plays one episode) and "Play as the Model" (you type the replies).
import * as vscode from 'vscode';
import { isEnvFile, looksLikeEnv } from '../../core/env/files';
import { classAnchor } from '../../core/env/validate';
import { rewardLanguage } from '../../core/reward/summary';
import { COMMAND } from '../common/commandIds';
import { Disposable } from '../common/lifecycle';
import type { EnvFileState, EnvValidator } from './envValidation';

/** every file that could be an env file; isEnvFile decides */
export const ENV_SELECTOR: vscode.DocumentSelector = [{ scheme: 'file', pattern: '**/*.env.{py,ts,js,mjs,cjs}' }];

/** the CodeLens title for an env file's validation state */
export function envLensTitle(state: EnvFileState | undefined, version: number): string {
  if (!state) return '$(sync~spin) Checking the environment…';
  if (state.untrusted) return '$(shield) Not run: the workspace is not trusted';
  const v = state.validation;
  if (!v) return '$(sync~spin) Checking the environment…';
  const stale = state.version !== undefined && state.version !== version ? ' (checking the latest edit…)' : '';
  if (!v.loaded) return `$(error) The environment does not load — see Problems${stale}`;
  if (v.episodes.length === 0) return `$(info) ${v.className ?? 'Loaded'}: no dataset line to play on${stale}`;
  const failed = v.episodes.filter((e) => !e.ok).length;
  if (failed) return `$(error) ${failed} of ${v.episodes.length} episodes failed — see Problems${stale}`;
  const turns = v.episodes.map((e) => e.turns);
  return `$(check) ${v.className}: ${v.episodes.length} episode${v.episodes.length === 1 ? '' : 's'} played (${Math.min(...turns)}–${Math.max(...turns)} turns, empty replies)${stale}`;
}

export class EnvCodeLensProvider extends Disposable implements vscode.CodeLensProvider {
  private readonly emitter = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.emitter.event;

  constructor(private readonly validator: EnvValidator) {
    super();
    this._register(validator.onDidValidate(() => this.emitter.fire()));
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (doc.uri.scheme !== 'file' || !isEnvFile(doc.fileName)) return [];
    const state = this.validator.state(doc.uri);
    if (!state && !looksLikeEnv(doc.getText())) return [];
    const r = classAnchor(doc.getText(), rewardLanguage(doc.fileName));
    const range = new vscode.Range(r.line - 1, r.column - 1, r.endLine - 1, r.endColumn - 1);
    return [
      new vscode.CodeLens(range, { title: envLensTitle(state, doc.version), command: 'workbench.actions.view.problems', tooltip: 'The checks of this environment: static checks, then an episode per dataset line with empty replies' }),
      new vscode.CodeLens(range, { title: 'Dry Run Episode', command: COMMAND.dryRunEpisode, arguments: [doc.uri], tooltip: "Play one episode with the run's model on a dataset line and show the transcript with per-step rewards" }),
      new vscode.CodeLens(range, { title: 'Play as the Model', command: COMMAND.playAsModel, arguments: [doc.uri], tooltip: 'Type the assistant\'s replies yourself and step through the environment' }),
    ];
  }
}
