// The list of local runs shared by the Runs and Checkpoints views: read from the runs folder with the
// core reader, refreshed when run files change (debounced; only the runs whose files changed) or on
// request (the whole folder).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunSummary } from '../../core/runs/runDirectory';
import { Log } from '../common/log';
import { Disposable, toDisposable } from '../common/lifecycle';

const LOCK_POLL_MS = 2_000;

export class RunsModel extends Disposable {
  private runs: RunSummary[] = [];
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;
  private watcher: vscode.FileSystemWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** checks whether the writers of locked runs are still alive (see watchLockHolders) */
  private lockPoll: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  private loaded = false;
  /** what the next read covers: some run directories, or the whole folder */
  private pending: ReadonlySet<string> | 'all' = new Set();

  constructor(
    private folder: string,
    private readonly log: Log,
  ) {
    super();
    this._register(
      toDisposable(() => {
        clearTimeout(this.timer);
        clearInterval(this.lockPoll);
        this.watcher?.dispose();
      }),
    );
    this.watch();
  }

  get runsFolder(): string {
    return this.folder;
  }

  /** Runs, newest first; the first call loads them. */
  async list(): Promise<RunSummary[]> {
    if (!this.loaded) await this.refresh();
    return this.runs;
  }

  setFolder(folder: string): void {
    if (folder === this.folder) return;
    this.folder = folder;
    this.watch();
    void this.refresh();
  }

  /** Re-reads the runs folder. A request made while a read is under way runs once more after it. */
  refresh(): Promise<void> {
    return this.update('all');
  }

  /**
   * Re-reads the runs in `what` (run directories) or the whole folder ('all'). Only a known run's
   * files changing is read alone; anything else (a run appearing, a read failing) lists the folder.
   */
  private update(what: 'all' | ReadonlySet<string>): Promise<void> {
    this.pending = what === 'all' || this.pending === 'all' ? 'all' : new Set([...this.pending, ...what]);
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        const want = this.pending;
        this.pending = new Set();
        try {
          const { listRuns, summarizeRun } = await import('../../core/runs/runDirectory'); // zod: loaded on first use
          const known = new Set(this.runs.map((r) => r.dir));
          let fresh: RunSummary[];
          if (want === 'all' || !this.loaded || [...want].some((d) => !known.has(d))) {
            fresh = this.runs = await listRuns(this.folder);
          } else {
            try {
              fresh = await Promise.all([...want].map((d) => summarizeRun(d)));
              const byDir = new Map(fresh.map((r) => [r.dir, r]));
              this.runs = this.runs.map((r) => byDir.get(r.dir) ?? r).sort((a, b) => b.modifiedMs - a.modifiedMs);
            } catch {
              fresh = this.runs = await listRuns(this.folder); // a run folder went away
            }
          }
          for (const run of fresh) {
            for (const p of run.problems) this.log.warn(`${p.file}:${p.line}: ${p.message}`);
          }
        } catch (err) {
          this.log.error(`could not read runs in ${this.folder}`, err);
          this.runs = [];
        }
      } while (this.again);
      this.loaded = true;
      this.loading = undefined;
      this.watchLockHolders();
      this.changed.fire();
    })();
    return this.loading;
  }

  /**
   * A writer that dies (a window reloaded or closed mid-run, a killed CLI) leaves its lock behind and
   * changes no file, so the file watcher cannot tell that its run became interrupted. While some run
   * is locked, its holder's liveness is checked every few seconds and the run re-read once it lets go.
   */
  private watchLockHolders(): void {
    const locked = this.runs.filter((r) => r.locked && !r.finished).map((r) => r.dir);
    clearInterval(this.lockPoll);
    this.lockPoll = undefined;
    if (locked.length === 0) return;
    this.lockPoll = setInterval(() => {
      void import('../../core/runs/runLock').then(({ runLockState }) => {
        const released = locked.filter((d) => runLockState(d) !== 'held');
        if (released.length) void this.update(new Set(released));
      });
    }, LOCK_POLL_MS);
  }

  private watch(): void {
    this.watcher?.dispose();
    // Direct children too, not only the run files: a file written into a brand-new folder can be
    // missed by the OS watcher (the folder's own watch is added after the write), the folder is not.
    const pattern = new vscode.RelativePattern(
      vscode.Uri.file(this.folder),
      // and a sweep folder's runs, one level further down (<sweep>/<point>/…)
      '{*,*/metrics.jsonl,*/checkpoints.jsonl,*/config.json,*/sweep.json,*/*/metrics.jsonl,*/*/checkpoints.jsonl,*/*/config.json,*/*/stopped_early.json}',
    );
    this.watcher = vscode.workspace.createFileSystemWatcher(pattern);
    let changed: Set<string> | 'all' = new Set();
    const schedule = (uri: vscode.Uri) => {
      this.log.trace(`runs folder changed: ${uri.fsPath}`);
      // a file inside a run folder (or a sweep's run folder): that run; a direct child appearing or going: the whole folder
      const parts = path.relative(this.folder, uri.fsPath).split(path.sep);
      if (parts[0] !== '..' && (parts.length === 2 || parts.length === 3) && changed !== 'all') changed.add(path.join(this.folder, ...parts.slice(0, -1)));
      else changed = 'all';
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        const what = changed;
        changed = new Set();
        void this.update(what);
      }, 300);
    };
    this.watcher.onDidCreate(schedule);
    this.watcher.onDidChange(schedule);
    this.watcher.onDidDelete(schedule);
  }
}
