// The backend's training runs as the Runs and Checkpoints views list them: one listing for both,
// fetched a page at a time (hundreds of runs never block the first rows) when a view's server node
// is first expanded, with "Load more", and the failure or the emptiness as a row of its own.
import type { ServiceClient } from '../tinker/client';
import type { TrainingRun } from '../tinker/wire';
import { errorMessage } from '../errors';

/** A row under a view's server node. */
export type ServerRunRow =
  | { kind: 'serverRun'; run: TrainingRun }
  | { kind: 'loadMore'; offset: number }
  | { kind: 'message'; text: string; detail?: string; error: boolean };

const PAGE = 20;

export class ServerRunList {
  /** runs fetched per page */
  pageSize: number;
  /** the project whose runs are listed (read at each fetch; undefined: every run) */
  private readonly projectId: () => string | undefined;
  private pages: { runs: TrainingRun[]; nextOffset?: number; error?: string } | undefined;
  private loading: Promise<void> | undefined;
  /** bumped by reset(), so a fetch begun before it does not land after it */
  private generation = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly client: () => Promise<ServiceClient>,
    o: { pageSize?: number; projectId?: () => string | undefined } = {},
  ) {
    this.pageSize = o.pageSize ?? PAGE;
    this.projectId = o.projectId ?? (() => undefined);
  }

  /** `listener` runs when the listing changed (reset, a page appended); the result stops it. */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The rows under the server node: the runs fetched so far and "Load more", or one message row. */
  async rows(): Promise<ServerRunRow[]> {
    await this.ensureFirstPage();
    const pages = this.pages;
    if (!pages) return this.rows(); // reset while the first page was fetched
    if (pages.error) return [{ kind: 'message', text: 'Could not list the server’s training runs', detail: pages.error, error: true }];
    if (pages.runs.length === 0) return [{ kind: 'message', text: 'No training runs on this server yet', error: false }];
    const rows: ServerRunRow[] = pages.runs.map((run) => ({ kind: 'serverRun', run }));
    if (pages.nextOffset !== undefined) rows.push({ kind: 'loadMore', offset: pages.nextOffset });
    return rows;
  }

  /** Fetches the next page (the "Load more" row); the number of runs listed after it. */
  async loadMore(): Promise<number> {
    await this.ensureFirstPage();
    const pages = this.pages;
    if (!pages || pages.nextOffset === undefined) return pages?.runs.length ?? 0;
    await this.fetchPage(pages.nextOffset);
    this.fire();
    return this.pages?.runs.length ?? 0;
  }

  /** Forgets what was fetched; the next rows() fetches the first page again. */
  reset(): void {
    this.generation++;
    this.pages = undefined;
    this.loading = undefined;
    this.fire();
  }

  private ensureFirstPage(): Promise<void> {
    if (this.pages) return Promise.resolve();
    this.loading ??= this.fetchPage(0);
    return this.loading;
  }

  private async fetchPage(offset: number): Promise<void> {
    const generation = this.generation;
    const { listServerRuns } = await import('./manage'); // the client and its schemas: loaded on first use
    try {
      const page = await listServerRuns(await this.client(), { offset, limit: this.pageSize, projectId: this.projectId() }, AbortSignal.timeout(30_000));
      if (generation !== this.generation) return;
      const before = offset === 0 ? [] : (this.pages?.runs ?? []);
      this.pages = { runs: [...before, ...page.runs], nextOffset: page.nextOffset };
    } catch (err) {
      if (generation !== this.generation) return;
      if (offset === 0) this.pages = { runs: [], error: errorMessage(err) };
      else throw err;
    }
  }

  private fire(): void {
    for (const l of [...this.listeners]) l();
  }
}
