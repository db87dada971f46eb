// What the CLI prints while a run goes: on a terminal, one progress bar line redrawn in place (log
// lines scroll above it); otherwise plain lines, one per step, for logs and CI.
import type { RunEvent } from '../core/runs/runEvents';
import { METRIC } from '../protocol/metricKeys';

export interface ProgressOutput {
  write(text: string): void;
  isTTY: boolean;
  columns?: number;
}

const fmt = (v: number | undefined, digits = 3) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));

export class Progress {
  private start = 0;
  private end = 0;
  private step = 0;
  private phase = '';
  private done?: number;
  private total?: number;
  private reward?: number;
  private test?: number;
  private barShown = false;
  /** steps finished in this invocation */
  private completed = 0;

  constructor(private readonly out: ProgressOutput) {}

  log(line: string): void {
    this.clearBar();
    this.out.write(`${line}\n`);
    this.drawBar();
  }

  onEvent(e: RunEvent): void {
    switch (e.type) {
      case 'started':
        this.start = e.startStep;
        this.end = e.endStep;
        this.step = e.startStep;
        this.log(`run ${e.runDir} — ${e.model}, steps ${e.startStep}..${e.endStep - 1}${e.resumed ? ' (resumed)' : ''}`);
        break;
      case 'phase':
        this.step = e.step;
        this.phase = e.phase;
        this.done = e.done;
        this.total = e.total;
        this.drawBar();
        break;
      case 'metrics':
        // the loop's own log line reports the step; the bar just moves on
        this.reward = e.metrics[METRIC.reward];
        this.test = e.metrics[METRIC.testReward] ?? this.test;
        this.completed = e.step + 1 - this.start;
        this.phase = '';
        this.total = undefined;
        this.drawBar();
        break;
      case 'checkpoint':
        if (!this.out.isTTY) this.out.write(`checkpoint ${e.record.name}: ${e.record.state_path ?? e.record.sampler_path ?? ''}\n`);
        break;
      case 'warning':
        this.log(`warning (step ${e.step}): ${e.message}`);
        break;
      case 'finished':
        this.clearBar();
        break;
    }
  }

  private drawBar(): void {
    if (!this.out.isTTY || this.end === 0) return;
    const width = 24;
    const span = Math.max(1, this.end - this.start);
    const filled = Math.round(Math.min(1, this.completed / span) * width);
    const phase = this.phase ? ` ${this.phase}${this.total ? ` ${this.done ?? 0}/${this.total}` : ''}` : '';
    const test = this.test !== undefined ? `  test reward ${fmt(this.test)}` : '';
    let line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] step ${this.step}/${this.end}${phase}  reward ${fmt(this.reward)}${test}`;
    const cols = this.out.columns ?? 100;
    if (line.length > cols - 1) line = line.slice(0, cols - 1);
    this.out.write(`\r\x1b[2K${line}`);
    this.barShown = true;
  }

  private clearBar(): void {
    if (this.barShown) this.out.write('\r\x1b[2K');
    this.barShown = false;
  }
}
