// Status bar item for runs in progress: "iteration k/N · phase" (GRPO) or "step k/N · phase" (SFT), a click cancels (after a
// confirmation in the Cancel Run command). Hidden when nothing runs.
import * as vscode from 'vscode';
import { progressText } from '../../core/runs/runStatus';
import { describeQueuePause } from '../../core/tinker/queuePauses';
import { kindRow } from '../../core/spec/kinds';
import { ActiveRun, RunRegistry } from './runRegistry';
import { Disposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';

export function describeProgress(run: ActiveRun): string {
  // a run on a paused queue is waiting, not hung: say so
  const paused = run.queuePause ? ` · ${describeQueuePause(run.queuePause)}` : '';
  if (run.status === 'starting' || run.step === undefined || run.endStep === undefined) return `starting${paused}`;
  return progressText({ unit: kindRow(run.kind).unit.one, step: run.step, endStep: run.endStep, phase: run.phase, phaseDone: run.phaseDone, phaseTotal: run.phaseTotal }) + paused;
}

export class RunStatusItem extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('tinker.run', vscode.StatusBarAlignment.Left, 49));
  /** while a run is paused, "for N s so far" is redrawn every second */
  private ticking: NodeJS.Timeout | undefined;

  constructor(private readonly registry: RunRegistry) {
    super();
    this.item.name = 'Tinker GRPO Run';
    this._register(registry.onDidChange(() => this.update()));
    this._register({ dispose: () => clearInterval(this.ticking) });
  }

  /** The text shown (for tests); undefined when hidden. */
  get text(): string | undefined {
    return this.registry.active().length ? this.item.text : undefined;
  }

  private update(): void {
    const active = this.registry.active();
    const paused = active.some((r) => r.queuePause);
    if (paused && !this.ticking) this.ticking = setInterval(() => this.update(), 1000);
    if (!paused && this.ticking) {
      clearInterval(this.ticking);
      this.ticking = undefined;
    }
    // the paused run is the one to show
    const run = active.find((r) => r.queuePause) ?? active[active.length - 1];
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
