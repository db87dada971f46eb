// How a run stands and the progress text of a run in flight, as the Runs view, the status bar, the
// CodeLens and the metrics panel show them: one definition, so that they agree. The rules that judge a
// run's status from its directory and its registry entry are core's (src/core/runs/runStatus.ts).

export const RUN_STATUSES = ['running', 'paused (agent)', 'completed', 'failed', 'cancelled', 'interrupted', 'not finished', 'stopped early'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface RunProgress {
  /** what a run of the kind counts (its row of the kinds table): GRPO iterations, SFT and DPO steps */
  unit: string;
  /** the iteration in progress (0-based) */
  step: number;
  endStep: number;
  /** the phase of the iteration in progress (a GRPO loop's: sampling, training, …) */
  phase?: string;
  phaseDone?: number;
  phaseTotal?: number;
}

/** "iteration 3/10 · sampling 4/8": the 1-based iteration in progress, its phase and how far it is. */
export function progressText(p: RunProgress): string {
  const k = Math.min(p.step + 1, p.endStep);
  const count = p.phaseDone !== undefined && p.phaseTotal ? ` ${p.phaseDone}/${p.phaseTotal}` : '';
  return `${p.unit} ${k}/${p.endStep}${p.phase ? ` · ${p.phase}${count}` : ''}`;
}
