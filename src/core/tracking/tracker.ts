// The one small interface a run's experiment tracker implements (W&B today; another tracker later is
// one more file beside wandbTracker.ts). The loop calls it and never waits on it: start/log return at
// once, and only finish (at the end of a run) may take time, bounded by the tracker itself.

/** What a tracker is told once, at the start of a run. */
export interface TrackerStart {
  /** the run id chosen locally (written into config.json before anything is sent) */
  id: string;
  /** true when the run resumes: continue the same tracker run */
  resume: boolean;
  /** the resolved spec and environment facts, logged as the run's config once */
  config: Record<string, unknown>;
}

/** What a tracker reports at the end. */
export interface TrackerReport {
  /** rows handed to the tracker over the run */
  rows: number;
  /** rows the tracker confirms sent */
  sent: number;
  /** rows dropped from a full buffer */
  dropped: number;
  /** the run's URL when the tracker answered */
  url?: string;
  /** one line for the log and the CLI: "W&B: N of M rows sent" */
  line: string;
}

export interface Tracker {
  start(start: TrackerStart): void;
  log(step: number, row: Readonly<Record<string, number>>): void;
  /** Flushes what it can (at most its own bound) and reports; never throws. */
  finish(summary: Readonly<Record<string, unknown>>): Promise<TrackerReport>;
}

/** Calls a tracker observes from the outside: the run URL once known, and its single warning. */
export interface TrackerEvents {
  onUrl?(url: string): void;
  onWarning?(message: string): void;
  log?(line: string): void;
}
