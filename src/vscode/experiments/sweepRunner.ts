// Runs sweeps inside the extension host through the core runSweep (the same code as `tinker-studio
// sweep`): validates every point first (a bad one names itself, nothing starts), asks for the API key
// when the backend needs one, shows a cancellable progress notification, logs to the output channel,
// records each of its runs in the run registry (status bar, Runs view, metrics panels follow them) and
// offers the comparison at the end. Starting a sweep whose folder exists resumes it (finished runs are
// skipped, interrupted ones resumed). Cancel stops every run cleanly; each saves its resume point.
// The small API (start, cancel, byDir, byFile, onDidChange) is what the commands, the CodeLens, the
// Runs view's sweep node and agent tools use.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SweepProgress, SweepResult } from '../../core/experiments/runSweep';
import type { RunEvent, RunResultBase } from '../../core/runs/runEvents';
import { errorMessage } from '../../core/errors';
import { Disposable, toDisposable } from '../common/lifecycle';
import { COMMAND } from '../common/commandIds';
import { readNetworkSettings } from '../common/networkSettings';
import { pricesSetting, readBackendFor, rewardEnvironmentSetting } from '../common/settings';
import { confirmJobCost } from '../common/costConfirm';
import type { Budget } from '../../core/cost/budget';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import { resolvePython } from '../common/pythonInterpreter';
import type { ActiveRun, RunRegistry } from '../runs/runRegistry';
import type { RunRunner } from '../runs/runRunner';

/** A sweep this window is running. */
export interface ActiveSweep {
  readonly name: string;
  /** its folder: `<runs folder>/<sweep name>/` */
  readonly dir: string;
  readonly file: string;
  progress: SweepProgress;
  readonly abort: AbortController;
}

export interface StartSweepOptions {
  /** overrides the file's max_concurrent */
  maxConcurrent?: number;
  /** show the progress notification (default true); agent tools run without one */
  notify?: boolean;
  /** each progress report (an agent tool's sweep_status reads it) */
  onProgress?: (p: SweepProgress) => void;
  /** the sweep's shared budget over the file's (an agent's start_sweep) */
  budget?: Budget;
}

export interface SweepRunnerServices {
  runner: Pick<RunRunner, 's' | 'tracking'>;
  registry: RunRegistry;
}

export class SweepRunner extends Disposable {
  private readonly sweeps = new Map<string, ActiveSweep>();
  private readonly changed = this._register(new vscode.EventEmitter<ActiveSweep>());
  /** a sweep started, progressed or ended */
  readonly onDidChange = this.changed.event;

  constructor(private readonly s: SweepRunnerServices) {
    super();
    // closing the window cancels the sweeps it started
    this._register(toDisposable(() => [...this.sweeps.values()].forEach((x) => x.abort.abort())));
  }

  /** The running sweep in `dir`, if this window runs it. */
  byDir(dir: string): ActiveSweep | undefined {
    return this.sweeps.get(path.resolve(dir));
  }

  /** The running sweep started from `file`. */
  byFile(file: string): ActiveSweep | undefined {
    const want = path.resolve(file);
    return [...this.sweeps.values()].find((x) => x.file === want);
  }

  active(): ActiveSweep[] {
    return [...this.sweeps.values()];
  }

  /** Cancels a running sweep: every run stops cleanly and keeps its resume point. */
  cancel(dir: string): boolean {
    const sweep = this.byDir(dir);
    if (!sweep) return false;
    this.s.runner.s.log.info(`[sweep ${sweep.name}] cancelling: each run saves its resume point; Start or Resume Sweep continues it`);
    sweep.abort.abort();
    return true;
  }

  /** The folder a sweep file runs in (the runs folder and the sweep's name); throws when the file cannot be read. */
  async folderOf(file: string): Promise<string> {
    const { readSweepFile, sweepName } = await import('../../core/experiments/sweepFile');
    return path.join(this.s.runner.s.runs.runsFolder, sweepName(file, readSweepFile(file)));
  }

  /**
   * Runs (or resumes) the sweep to its end, or until cancelled. Resolves to the result, or undefined
   * when it did not start (a bad point, the workspace not trusted, no API key, already running).
   */
  async start(sweepFile: string, o: StartSweepOptions = {}): Promise<SweepResult | undefined> {
    const { log, runs, connection, cacheDir } = this.s.runner.s;
    const file = path.resolve(sweepFile);
    const { readSweepFile, sweepName } = await import('../../core/experiments/sweepFile');
    const { expandSweep } = await import('../../core/experiments/expand');
    const { RunSpecError } = await import('../../core/spec/text');
    let expanded: Awaited<ReturnType<typeof expandSweep>>;
    let name: string;
    try {
      const s = readSweepFile(file);
      name = sweepName(file, s);
      expanded = await expandSweep(file, s);
    } catch (err) {
      const problems = err instanceof RunSpecError ? err.problems : [errorMessage(err)];
      for (const p of problems) log.error(p);
      void vscode.window
        .showErrorMessage(`The sweep cannot start: ${problems[0] ?? 'unreadable'}${problems.length > 1 ? ` (and ${problems.length - 1} more; see the log)` : ''}`, 'Open Sweep File', 'Show Log')
        .then((a) => {
          if (a === 'Open Sweep File') void vscode.window.showTextDocument(vscode.Uri.file(file));
          if (a === 'Show Log') log.show();
        });
      return undefined;
    }
    const dir = path.join(runs.runsFolder, name);
    const already = this.byDir(dir);
    if (already) {
      void vscode.window.showWarningMessage(`Sweep ${name} is already running.`, 'Cancel Sweep').then((a) => {
        if (a) this.cancel(dir);
      });
      return undefined;
    }
    const { runKind } = await import('../../core/kinds/registry');
    const kind = await runKind(expanded.kind);
    // a point's reward, environment or grader file is the workspace's code
    const runsCode = kind.row.runsWorkspaceCode || expanded.points.some((p) => kind.runsWorkspaceCode(p.spec));
    if (runsCode && !(this.s.runner.s.trust ?? vscode.workspace).isTrusted) {
      log.warn(`sweep ${name} not started: the workspace is not trusted (its runs execute the workspace's code).`);
      void vscode.window.showWarningMessage(`${kind.row.label} runs of this sweep execute the workspace's code (a reward, environment or grader file), so they are disabled in an untrusted workspace.`, 'Manage Workspace Trust').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.trust.manage');
      });
      return undefined;
    }
    const first = expanded.points[0]?.spec as { backend?: 'local' | 'cloud' | 'custom'; base_url?: string } | undefined;
    const backend = await readBackendFor(first?.backend ?? 'local', first?.base_url);
    if (!(await haveKeyFor(backend, this.s.runner.s.apiKeys, 'This sweep'))) {
      void vscode.window.showInformationMessage('The sweep was not started: no Tinker API key is set.');
      return undefined;
    }
    const prices = await pricesSetting();
    // the whole sweep's cost before it starts; an agent's start (no notification) is not asked
    if (o.notify !== false) {
      const { estimateSweep } = await import('../../core/experiments/sweepEstimate');
      if (!(await confirmJobCost(() => estimateSweep(file, { cacheDir, prices }), log))) return undefined;
    }
    const python = runsCode ? await resolvePython(vscode.Uri.file(file), log) : undefined;

    const abort = new AbortController();
    const sweep: ActiveSweep = { name, dir, file, abort, progress: { total: expanded.points.length, done: 0, running: [] } };
    this.sweeps.set(path.resolve(dir), sweep);
    this.changed.fire(sweep);
    const engineWatch = backend.kind === 'local' ? connection.onLocalEngineExit((message) => {
      log.error(`[sweep ${name}] ${message}; the sweep stops (Resume Sweep continues it)`);
      abort.abort();
    }) : undefined;
    const tag = `[sweep ${name}]`;
    log.info(`${tag} starting from ${file}${python ? `; Python ${python.path} (${python.source})` : ''}`);
    const runsOf = new Map<string, ActiveRun>();
    const body = async (report?: (p: SweepProgress) => void): Promise<SweepResult | undefined> => {
      const { runSweep } = await import('../../core/experiments/runSweep');
      try {
        return await runSweep({
          sweepFile: file,
          runsDir: runs.runsFolder,
          ...(o.maxConcurrent !== undefined ? { maxConcurrent: o.maxConcurrent } : {}),
          connect: async (sp) => connection.open(await readBackendFor(sp.backend, sp.base_url)),
          cacheDir,
          network: readNetworkSettings(),
          ...(python ? { python: python.path } : {}),
          rewardEnvironment: rewardEnvironmentSetting(),
          tracking: await this.s.runner.tracking(name),
          prices,
          ...(o.budget ? { budget: o.budget } : {}),
          signal: abort.signal,
          log: (line) => log.info(`${tag} ${line}`),
          onEvent: (point, e) => this.onRunEvent(sweep, runsOf, expanded.kind, point, e),
          onProgress: (p) => {
            sweep.progress = p;
            // a run that ended: the registry learns how (it may have failed before reporting it), the views re-read its folder
            if (p.point && !p.running.includes(p.point)) {
              this.settle(runsOf.get(p.point), path.join(dir, p.point), expanded.kind, abort.signal.aborted);
              void runs.refresh();
            }
            report?.(p);
            this.changed.fire(sweep);
          },
        });
      } catch (err) {
        log.error(`${tag} failed: ${errorMessage(err)}`);
        void vscode.window.showErrorMessage(`Sweep ${name} failed: ${log.redactor.redact(errorMessage(err))}`, 'Show Log').then((a) => {
          if (a) log.show();
        });
        return undefined;
      } finally {
        engineWatch?.dispose();
        for (const run of runsOf.values()) this.settle(run, run.runDir ?? '', expanded.kind, true);
        this.sweeps.delete(path.resolve(dir));
        await runs.refresh();
        this.changed.fire(sweep);
      }
    };
    let result: SweepResult | undefined;
    if (o.notify === false) result = await body(o.onProgress);
    else {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Sweep ${name}`, cancellable: true },
        async (progress, token) => {
          const sub = token.onCancellationRequested(() => this.cancel(dir));
          let shown = 0;
          try {
            return await body((p) => {
              o.onProgress?.(p);
              const pct = p.total ? (100 * p.done) / p.total : 0;
              progress.report({ message: describeSweepProgress(p), increment: Math.max(0, pct - shown) });
              shown = Math.max(shown, pct);
            });
          } finally {
            sub.dispose();
          }
        },
      );
    }
    if (result) this.notifyEnd(result);
    return result;
  }

  /** A run's event: the registry gets the run on its first event, then every event. */
  private onRunEvent(sweep: ActiveSweep, runsOf: Map<string, ActiveRun>, kind: string, point: string, e: RunEvent): void {
    let run = runsOf.get(point);
    if (!run || (e.type === 'started' && run.status !== 'starting' && run.status !== 'running')) {
      run = this.s.registry.begin(undefined, point, kind);
      // Cancel Run on one of the sweep's runs cancels the sweep (the sweep owns its runs' lifetimes)
      run.abort.signal.addEventListener('abort', () => this.cancel(sweep.dir), { once: true });
      runsOf.set(point, run);
    }
    this.s.registry.apply(run, e);
    if (e.type === 'started') void this.s.runner.s.runs.refresh();
    if (e.type === 'warning') this.s.runner.s.log.warn(`[sweep ${sweep.name}] ${point}: step ${e.step}: ${e.message}`);
  }

  /** A run that ended without telling the registry (it failed or was stopped before its `finished` event). */
  private settle(run: ActiveRun | undefined, runDir: string, kind: string, aborted: boolean): void {
    if (!run || (run.status !== 'starting' && run.status !== 'running')) return;
    const result: RunResultBase = { kind, runDir: run.runDir ?? runDir, status: aborted ? 'cancelled' : 'failed', iterationsRun: 0 };
    this.s.registry.finish(run, result);
  }

  private notifyEnd(r: SweepResult): void {
    const { log } = this.s.runner.s;
    const stopped = r.ranking.filter((x) => x.status === 'stopped early').length;
    const failed = r.outcomes.filter((x) => x.status === 'failed');
    const best = r.ranking.find((x) => x.rank === 1);
    const bestText = best?.best !== undefined ? `; best ${best.id} (${r.manifest.metric.name} ${Number(best.best.toPrecision(4))})` : '';
    // prices.ts (zod) stays out of activation: its formatUsd's two rules, inline
    const usd = r.usdSaved > 0 ? `, $${r.usdSaved >= 1 ? r.usdSaved.toFixed(2) : Number(r.usdSaved.toPrecision(3))} estimated` : '';
    const saved = r.stepsSaved ? `; early stopping saved ${r.stepsSaved} step${r.stepsSaved === 1 ? '' : 's'} (about ${(r.msSaved / 1000).toFixed(1)} s${usd})` : '';
    const done = r.ranking.filter((x) => x.status === 'completed' || x.status === 'stopped early').length;
    const open = (a: string | undefined) => {
      if (a === 'Compare Runs') void vscode.commands.executeCommand(COMMAND.openComparison, { sweepDir: r.dir });
      if (a === 'Resume Sweep') void vscode.commands.executeCommand(COMMAND.startSweep, vscode.Uri.file(r.manifest.file));
      if (a === 'Show Log') log.show();
    };
    if (r.budgetStop) {
      log.info(`sweep ${r.name}: ${r.budgetStop} (${r.dir})`);
      void vscode.window.showWarningMessage(`Sweep ${r.name}: ${r.budgetStop} (max_cost_usd / max_tokens_total in the sweep file). ${done}/${r.outcomes.length} done; each stopped run kept its resume point.`, 'Resume Sweep', 'Compare Runs').then(open);
      return;
    }
    if (r.cancelled) {
      log.info(`sweep ${r.name} cancelled: ${done}/${r.outcomes.length} done; start it again to resume (${r.dir})`);
      void vscode.window.showInformationMessage(`Sweep ${r.name} cancelled: ${done}/${r.outcomes.length} done. Each run kept its resume point.`, 'Resume Sweep', 'Compare Runs').then(open);
      return;
    }
    const text = `Sweep ${r.name}: ${done}/${r.outcomes.length} done${stopped ? ` (${stopped} stopped early)` : ''}${failed.length ? `, ${failed.length} failed` : ''}${bestText}${saved}.`;
    for (const f of failed) log.error(`sweep ${r.name}: ${f.name} failed: ${f.error ?? 'unknown error'}`);
    log.info(`${text} (${r.dir})`);
    if (failed.length) void vscode.window.showErrorMessage(log.redactor.redact(text), 'Compare Runs', 'Resume Sweep', 'Show Log').then(open);
    else void vscode.window.showInformationMessage(text, 'Compare Runs').then(open);
  }
}

/** "2/4 done, running learning_rate_0.001" — the progress notification's and the tooltip's words. */
export function describeSweepProgress(p: SweepProgress): string {
  return `${p.done}/${p.total} done${p.running.length ? `, running ${p.running.join(', ')}` : ''}`;
}
