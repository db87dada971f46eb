// The contract between a GRPO run (src/core/grpo, driven by the extension host or the CLI) and
// whoever shows it: events while it runs, and the result when it ends.

export type GrpoPhase = 'eval' | 'sampling' | 'rewards' | 'training' | 'checkpoint';

export type GrpoEvent =
  /** the run directory is ready; iterations [startStep, endStep) will run (startStep > 0 on resume) */
  | { type: 'started'; runDir: string; runName: string; model: string; startStep: number; endStep: number; resumed: boolean }
  /** progress inside an iteration; `done`/`total` count samples, rewards or eval problems */
  | { type: 'phase'; step: number; phase: GrpoPhase; done?: number; total?: number }
  /** the metrics line just appended to metrics.jsonl for `step` */
  | { type: 'metrics'; step: number; metrics: Record<string, number> }
  /** the record just appended to checkpoints.jsonl */
  | { type: 'checkpoint'; record: { name: string; batch?: number; state_path?: string; sampler_path?: string } & Record<string, unknown> }
  /** something the user should know that does not stop the run (e.g. a reward function raised) */
  | { type: 'warning'; step: number; message: string }
  | { type: 'finished'; runDir: string; status: GrpoRunStatus; lastStep: number };

/** 'paused': stopped after the iterations asked for (`stopAfter`), resumable like 'cancelled'. */
export type GrpoRunStatus = 'completed' | 'paused' | 'cancelled' | 'failed';

export interface GrpoRunResult {
  runDir: string;
  status: GrpoRunStatus;
  /** iterations run in this invocation */
  iterationsRun: number;
  /** the error that failed the run, in words a person can act on */
  error?: string;
  /** first and last test/env/all/reward/total seen in this invocation, when evaluations ran */
  firstTestReward?: number;
  lastTestReward?: number;
}
