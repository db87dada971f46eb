// The list of local runs shared by the Runs and Checkpoints views: read from the runs folder with the
// core reader, refreshed when run files change (debounced) or on request.
import * as vscode from 'vscode';
import type { RunSummary } from '../core/runs/runDirectory';
import { Log } from './log';

export class RunsModel implements vscode.Disposable {
  private runs: RunSummary[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private watcher: vscode.FileSystemWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  private loaded = false;

  constructor(
    private folder: string,
    private readonly log: Log,
  ) {
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
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          const { listRuns } = await import('../core/runs/runDirectory'); // zod: loaded on first use
          this.runs = await listRuns(this.folder);
          for (const run of this.runs) {
            for (const p of run.problems) this.log.warn(`${p.file}:${p.line}: ${p.message}`);
          }
        } catch (err) {
          this.log.error(`could not read runs in ${this.folder}`, err);
          this.runs = [];
        }
      } while (this.again);
      this.loaded = true;
      this.loading = undefined;
      this.changed.fire();
    })();
    return this.loading;
  }

  private watch(): void {
    this.watcher?.dispose();
    // Direct children too, not only the run files: a file written into a brand-new folder can be
    // missed by the OS watcher (the folder's own watch is added after the write), the folder is not.
    const pattern = new vscode.RelativePattern(
      vscode.Uri.file(this.folder),
      '{*,*/metrics.jsonl,*/checkpoints.jsonl,*/config.json}',
    );
    this.watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const schedule = (uri: vscode.Uri) => {
      this.log.trace(`runs folder changed: ${uri.fsPath}`);
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.refresh(), 300);
    };
    this.watcher.onDidCreate(schedule);
    this.watcher.onDidChange(schedule);
    this.watcher.onDidDelete(schedule);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.watcher?.dispose();
    this.changed.dispose();
  }
}
