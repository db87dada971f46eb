// How a run stands, as the Runs view and the metrics panel show it, and the progress text of a run
// in flight. One definition, so that the tree, the status bar, the CodeLens and the panel agree.
import type { GrpoPhase, GrpoRunStatus } from '../grpo/types';

export const RUN_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'interrupted', 'not finished'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What this window knows of a run it started (its registry entry), when it started it. */
export type ActiveRunStatus = 'starting' | 'running' | GrpoRunStatus;

/**
 * The status a run this window started reports once it has begun or ended. A paused run (an agent
 * trains it a few iterations at a time) is resumable, so it is left to its directory, like one
 * not finished.
 */
export function reportedRunStatus(active: { status: ActiveRunStatus } | undefined): RunStatus | undefined {
  return active && active.status !== 'starting' && active.status !== 'paused' ? active.status : undefined;
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

/**
 * Whether Resume can continue a run: its directory has no final checkpoint, and this window is not
 * starting or running it, nor has it just completed it (the directory is re-read a moment later).
 * A run this window paused, cancelled or saw fail is resumable, and so is any other unfinished run
 * (interrupted or not finished). The Runs view, the Resume Run command and its context key, and the
 * spec's Resume CodeLens all ask this.
 */
export function isResumable(dir: DirectoryState, active: { status: ActiveRunStatus } | undefined): boolean {
  if (dir.finished) return false;
  return !active || (active.status !== 'starting' && active.status !== 'running' && active.status !== 'completed');
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
  phase?: GrpoPhase | string;
  phaseDone?: number;
  phaseTotal?: number;
}

/** "iteration 3/10 · sampling 4/8": the 1-based iteration in progress, its phase and how far it is. */
export function progressText(p: RunProgress): string {
  const k = Math.min(p.step + 1, p.endStep);
  const count = p.phaseDone !== undefined && p.phaseTotal ? ` ${p.phaseDone}/${p.phaseTotal}` : '';
  return `${p.unit} ${k}/${p.endStep}${p.phase ? ` · ${p.phase}${count}` : ''}`;
}
