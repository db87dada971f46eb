// Above the reward function: "Test on N examples — k match, mean 0.63" (the latest validation of
// the editor's text) and "Dry Run"; hovering the function's name shows every example's result.
import * as path from 'node:path';
import { codeSpan } from '../../core/text/markdown';
import * as vscode from 'vscode';
import { functionNameRange } from '../../core/reward/diagnostics';
import { formatReward, rewardLanguage, summaryText } from '../../core/reward/summary';
import { RewardFileIndex } from '../common/rewardFiles';
import { RewardFileState, RewardValidator } from './rewardValidation';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';

/** every file that could be a reward file; the index decides which are */
export const REWARD_SELECTOR: vscode.DocumentSelector = [{ scheme: 'file', pattern: '**/*.{py,ts,js,mjs,cjs}' }];

function anchorOf(doc: vscode.TextDocument): vscode.Range {
  const r = functionNameRange(doc.getText(), rewardLanguage(doc.fileName));
  return r ? new vscode.Range(r.line - 1, r.column - 1, r.endLine - 1, r.endColumn - 1) : new vscode.Range(0, 0, 0, 0);
}

/** the CodeLens title for a reward file's current state */
export function lensTitle(state: RewardFileState | undefined, version: number): string {
  if (!state) return '$(sync~spin) Testing the reward function…';
  if (state.untrusted) return '$(shield) Not run: the workspace is not trusted';
  const v = state.validation;
  if (!v) return '$(sync~spin) Testing the reward function…';
  const stale = state.version !== undefined && state.version !== version ? ' (testing the latest edit…)' : '';
  if (!v.loaded) return `$(error) The reward file does not load — see Problems${stale}`;
  if (!v.summary) return `$(beaker) No examples: add ${path.basename(state.examplesFile)}${stale}`;
  return `${summaryText(v.summary)}${stale}`;
}

export class RewardCodeLensProvider extends Disposable implements vscode.CodeLensProvider, vscode.HoverProvider {
  private readonly emitter = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.emitter.event;

  constructor(
    private readonly index: RewardFileIndex,
    private readonly validator: RewardValidator,
  ) {
    super();
    this._registerAll(validator.onDidValidate(() => this.emitter.fire()), index.onDidChange(() => this.emitter.fire()));
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (!this.index.isRewardFile(doc.uri)) return [];
    const range = anchorOf(doc);
    const state = this.validator.state(doc.uri);
    return [
      new vscode.CodeLens(range, { title: lensTitle(state, doc.version), command: COMMAND.showRewardExamples, arguments: [doc.uri], tooltip: 'Show each example and its reward' }),
      new vscode.CodeLens(range, { title: 'Dry Run', command: COMMAND.dryRunReward, arguments: [doc.uri], tooltip: "Score a run's samples with this function and show the no-signal fractions" }),
    ];
  }

  provideHover(doc: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    if (!this.index.isRewardFile(doc.uri)) return undefined;
    const range = anchorOf(doc);
    if (!range.contains(position)) return undefined;
    const state = this.validator.state(doc.uri);
    if (!state) return undefined;
    return new vscode.Hover(new vscode.MarkdownString(examplesMarkdown(state)), range);
  }
}

// completions are model output: shown as code spans, so no link, image or HTML in them renders
const cell = (s: string, max = 40) => codeSpan(s, max);

/** every example with its reward, as a Markdown table (hover and the examples document) */
export function examplesMarkdown(state: RewardFileState): string {
  if (state.untrusted) return 'Reward code is not run in an untrusted workspace. Trust the workspace to test the function on its examples.';
  const v = state.validation;
  if (!v) return 'Testing…';
  if (!v.loaded) return 'The file does not load; see the Problems view.';
  if (!v.summary) return `No examples yet: add lines like \`{"completion": "…", "ground_truth": "…", "expected": 1}\` to ${path.basename(state.examplesFile)}.`;
  const lines = [`**${summaryText(v.summary)}**`, '', '| example | completion | ground truth | expected | reward |', '|---|---|---|---|---|'];
  for (const r of v.results) {
    const reward = r.outcome.ok ? formatReward(r.outcome.reward) : `0 (${r.outcome.error.kind})`;
    const mark = r.matches === undefined ? '' : r.matches ? ' ✓' : ' ✗';
    const expected = r.example.expected !== undefined ? formatReward(r.example.expected) : r.example.recorded !== undefined ? `(run: ${formatReward(r.example.recorded)})` : '';
    lines.push(`| ${cell(r.example.source, 48)} | ${cell(r.example.completion)} | ${cell(r.example.groundTruth, 20)} | ${expected} | ${reward}${mark} |`);
  }
  if (state.runDir) lines.push('', `Examples after the file's come from the run \`${path.basename(state.runDir)}\`.`);
  return lines.join('\n');
}
