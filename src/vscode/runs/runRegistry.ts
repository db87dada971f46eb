// The GRPO runs this window started: their live state (iteration, phase, last reward), their
// cancel handles, and how the ones that ended in this session ended. The Runs view, the status bar
// and the metrics panels read it; a run directory not in here is judged from its files alone.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunEvent, RunPhase, RunResultBase } from '../../core/runs/runEvents';
import type { ActiveRunStatus } from '../../core/runs/runStatus';
import type { QueuePause } from '../../core/tinker/queuePauses';
import { METRIC } from '../../protocol/metricKeys';
import { Disposable, toDisposable } from '../common/lifecycle';

export type { ActiveRunStatus };

export interface ActiveRun {
  readonly id: number;
  readonly specFile: string | undefined;
  /** what trains: GRPO (iterations) or SFT (steps) */
  /** the run's kind: the kinds table's id */
  readonly kind: string;
  /** known from the run's `started` event on */
  runDir: string | undefined;
  /** the spec's name (the run directory adds a time stamp to it) */
  readonly runName: string;
  model: string | undefined;
  status: ActiveRunStatus;
  startStep: number;
  endStep: number | undefined;
  /** the iteration in progress (or the last one finished) */
  step: number | undefined;
  phase: RunPhase | undefined;
  phaseDone: number | undefined;
  phaseTotal: number | undefined;
  lastReward: number | undefined;
  lastTestReward: number | undefined;
  warnings: number;
  /** its requests wait on a paused queue (capacity, rate limit, billing): since when and why */
  queuePause?: QueuePause;
  error: string | undefined;
  readonly abort: AbortController;
  result: RunResultBase | undefined;
}

export class RunRegistry extends Disposable {
  private readonly runs: ActiveRun[] = [];
  private nextId = 1;
  private readonly changed = this._register(new vscode.EventEmitter<ActiveRun>());
  /** a run's state changed (any event, start, end) */
  readonly onDidChange = this.changed.event;
  private readonly events = this._register(new vscode.EventEmitter<{ run: ActiveRun; event: RunEvent }>());
  /** every event a run reported, as it arrived */
  readonly onDidReceiveEvent = this.events.event;

  constructor() {
    super();
    // closing the window cancels the runs it started, before the events about them stop
    this._register(toDisposable(() => this.active().forEach((r) => r.abort.abort())));
  }

  begin(specFile: string | undefined, runName: string, kind: string): ActiveRun {
    const run: ActiveRun = {
      id: this.nextId++,
      specFile,
      kind,
      runDir: undefined,
      runName,
      model: undefined,
      status: 'starting',
      startStep: 0,
      endStep: undefined,
      step: undefined,
      phase: undefined,
      phaseDone: undefined,
      phaseTotal: undefined,
      lastReward: undefined,
      lastTestReward: undefined,
      warnings: 0,
      error: undefined,
      abort: new AbortController(),
      result: undefined,
    };
    this.runs.push(run);
    this.changed.fire(run);
    return run;
  }

  /** Applies one event of the run to its state. */
  apply(run: ActiveRun, e: RunEvent): void {
    switch (e.type) {
      case 'started':
        run.runDir = e.runDir;
        run.model = e.model;
        run.startStep = e.startStep;
        run.endStep = e.endStep;
        run.step = e.startStep;
        // a live agent session starts a stretch per call: paused between calls, running in one
        if (run.status === 'starting' || run.status === 'paused') run.status = 'running';
        break;
      case 'phase':
        run.step = e.step;
        run.phase = e.phase;
        run.phaseDone = e.done;
        run.phaseTotal = e.total;
        break;
      case 'metrics': {
        const r = e.metrics[METRIC.reward];
        if (typeof r === 'number' && Number.isFinite(r)) run.lastReward = r;
        const t = e.metrics[METRIC.testReward];
        if (typeof t === 'number' && Number.isFinite(t)) run.lastTestReward = t;
        break;
      }
      case 'warning':
        run.warnings += 1;
        break;
      case 'finished':
        run.runDir = e.runDir;
        run.status = e.status;
        run.step = e.lastStep;
        run.phase = undefined;
        break;
      case 'checkpoint':
        break;
    }
    this.events.fire({ run, event: e });
    this.changed.fire(run);
  }

  /** Records how the run ended (also when it failed before reporting any event). */
  /** The run's service client reports a queue pause beginning, changing or ending (undefined). */
  setQueuePause(run: ActiveRun, pause: QueuePause | undefined): void {
    run.queuePause = pause;
    this.changed.fire(run);
  }

  finish(run: ActiveRun, result: RunResultBase): void {
    run.result = result;
    run.queuePause = undefined;
    run.status = result.status;
    run.runDir ??= result.runDir || undefined;
    run.error = result.error;
    run.phase = undefined;
    this.changed.fire(run);
  }

  /** The latest run of this window that wrote into `runDir`. */
  byDir(runDir: string): ActiveRun | undefined {
    const want = path.resolve(runDir);
    for (let i = this.runs.length - 1; i >= 0; i--) {
      const r = this.runs[i]!;
      if (r.runDir && path.resolve(r.runDir) === want) return r;
    }
    return undefined;
  }

  /** Runs Cancel Run can stop: starting, running, or a live agent session paused between calls. */
  cancellable(): ActiveRun[] {
    return this.runs.filter((r) => r.status === 'starting' || r.status === 'running' || r.status === 'paused');
  }

  /** Runs still starting or running, oldest first. */
  active(): ActiveRun[] {
    return this.runs.filter((r) => r.status === 'starting' || r.status === 'running');
  }

  all(): readonly ActiveRun[] {
    return this.runs;
  }
}
