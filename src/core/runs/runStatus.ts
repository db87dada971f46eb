// How a run stands, as the Runs view and the metrics panel show it, and the progress text of a run
// in flight. One definition, so that the tree, the status bar, the CodeLens and the panel agree.
import type { RunPhase, RunEndStatus } from './runEvents';

export const RUN_STATUSES = ['running', 'paused (agent)', 'completed', 'failed', 'cancelled', 'interrupted', 'not finished'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

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
}

/** A run judged from its directory alone: completed with a final checkpoint, else resumable (interrupted or not finished). */
export function directoryRunStatus(dir: DirectoryState): RunStatus {
  return dir.finished ? 'completed' : dir.interrupted ? 'interrupted' : 'not finished';
}

export function deriveRunStatus(dir: DirectoryState, active: { status: ActiveRunStatus } | undefined): RunStatus {
  return reportedRunStatus(active) ?? directoryRunStatus(dir);
}

export interface RunProgress {
  /** GRPO counts iterations, SFT steps */
  unit: 'iteration' | 'step';
  /** the iteration in progress (0-based) */
  step: number;
  endStep: number;
  phase?: RunPhase | string;
  phaseDone?: number;
  phaseTotal?: number;
}

/** "iteration 3/10 · sampling 4/8": the 1-based iteration in progress, its phase and how far it is. */
export function progressText(p: RunProgress): string {
  const k = Math.min(p.step + 1, p.endStep);
  const count = p.phaseDone !== undefined && p.phaseTotal ? ` ${p.phaseDone}/${p.phaseTotal}` : '';
  return `${p.unit} ${k}/${p.endStep}${p.phase ? ` · ${p.phase}${count}` : ''}`;
}
