// How a run stands, as the Runs view and the metrics panel show it: judged from its directory and from
// what this window knows of it. The statuses and the progress text are the panels' protocol's
// (src/protocol/runProgress.ts), re-exported here for core's readers.
import type { RunEndStatus } from './runEvents';
import type { RunStatus } from '../../protocol/runProgress';

export { RUN_STATUSES, progressText } from '../../protocol/runProgress';
export type { RunProgress, RunStatus } from '../../protocol/runProgress';

/** What this window knows of a run it started (its registry entry), when it started it. */
export type ActiveRunStatus = 'starting' | 'running' | RunEndStatus;

/**
 * The status a run this window started reports once it has begun or ended. A paused run is a live
 * agent session waiting between calls: "paused (agent)", which Cancel Run ends cleanly.
 */
export function reportedRunStatus(active: { status: ActiveRunStatus } | undefined): RunStatus | undefined {
  if (!active || active.status === 'starting') return undefined;
  return active.status === 'paused' ? 'paused (agent)' : active.status;
}

/** What a run directory says of its run (see runDirectory.ts's RunSummary). */
export interface DirectoryState {
  /** it has a final checkpoint */
  finished: boolean;
  /** its writer died holding the directory's lock (a window reloaded or closed mid-run, a killed process) */
  interrupted?: boolean;
  /** a sweep's median rule stopped it (its STOPPED_EARLY_FILE): done, not to be resumed */
  stoppedEarly?: boolean;
}

/** The marker a run stopped by a sweep's median rule gets in its directory (checkpoints kept). */
export const STOPPED_EARLY_FILE = 'stopped_early.json';

/** A run judged from its directory alone: completed with a final checkpoint, stopped early by a sweep, else resumable (interrupted or not finished). */
export function directoryRunStatus(dir: DirectoryState): RunStatus {
  return dir.finished ? 'completed' : dir.stoppedEarly ? 'stopped early' : dir.interrupted ? 'interrupted' : 'not finished';
}

/**
 * Whether Resume can continue a run: its directory has no final checkpoint, and this window is not
 * starting or running it, holding it live between an agent's calls (paused), nor has it just
 * completed it (the directory is re-read a moment later). A run this window cancelled or saw fail is resumable, and so is any other unfinished run
 * (interrupted or not finished). The Runs view, the Resume Run command and its context key, and the
 * spec's Resume CodeLens all ask this.
 */
export function isResumable(dir: DirectoryState, active: { status: ActiveRunStatus } | undefined): boolean {
  if (dir.finished || dir.stoppedEarly) return false;
  return !active || (active.status !== 'starting' && active.status !== 'running' && active.status !== 'paused' && active.status !== 'completed');
}

/** A run's status: what this window reports of it, else its directory's; a run the sweep's median rule stopped (which this window saw end as cancelled) reads "stopped early". */
export function deriveRunStatus(dir: DirectoryState, active: { status: ActiveRunStatus } | undefined): RunStatus {
  if (dir.stoppedEarly) return 'stopped early';
  return reportedRunStatus(active) ?? directoryRunStatus(dir);
}
