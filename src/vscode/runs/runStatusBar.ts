// Status bar item for runs in progress: "iteration k/N · phase" (GRPO) or "step k/N · phase" (SFT), a click cancels (after a
// confirmation in the Cancel Run command). Hidden when nothing runs.
import * as vscode from 'vscode';
import { progressText } from '../../core/runs/runStatus';
import { kindRow } from '../../core/spec/kinds';
import { ActiveRun, RunRegistry } from './runRegistry';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';

export function describeProgress(run: ActiveRun): string {
  if (run.status === 'starting' || run.step === undefined || run.endStep === undefined) return 'starting';
  return progressText({ unit: kindRow(run.kind).unit.one, step: run.step, endStep: run.endStep, phase: run.phase, phaseDone: run.phaseDone, phaseTotal: run.phaseTotal });
}

export class RunStatusItem extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('tinker.run', vscode.StatusBarAlignment.Left, 49));

  constructor(private readonly registry: RunRegistry) {
    super();
    this.item.name = 'Tinker GRPO Run';
    this._register(registry.onDidChange(() => this.update()));
  }

  /** The text shown (for tests); undefined when hidden. */
  get text(): string | undefined {
    return this.registry.active().length ? this.item.text : undefined;
  }

  private update(): void {
    const active = this.registry.active();
    const run = active[active.length - 1];
    if (!run) {
      this.item.hide();
      return;
    }
    const more = active.length > 1 ? ` (+${active.length - 1})` : '';
    this.item.text = `$(sync~spin) ${kindRow(run.kind).label} ${run.runName}: ${describeProgress(run)}${more}`;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(`**${run.runName}** — ${describeProgress(run)}\n\n`);
    if (run.lastReward !== undefined) tip.appendMarkdown(`Reward: ${run.lastReward.toFixed(3)}\n\n`);
    if (run.lastTestReward !== undefined) tip.appendMarkdown(`Holdout reward: ${run.lastTestReward.toFixed(3)}\n\n`);
    if (run.runDir) tip.appendMarkdown(`\`${run.runDir}\`\n\n`);
    tip.appendMarkdown('Click to cancel the run.');
    this.item.tooltip = tip;
    this.item.command = { command: COMMAND.cancelRun, title: 'Cancel Run', arguments: [run.runDir ?? run.id] };
    this.item.show();
  }
}
