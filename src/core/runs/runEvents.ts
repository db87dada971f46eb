// The contract between a run (GRPO in src/core/grpo, SFT in src/core/sft, driven by the extension
// host, the CLI or an agent session) and whoever shows it: events while it runs, and the result of
// each stretch it ran.

/** 'rewards' is GRPO's ('teacher': a distillation run's teacher scoring the samples); SFT steps report 'eval', 'training' and 'checkpoint'. */
export type RunPhase = 'eval' | 'sampling' | 'rewards' | 'teacher' | 'training' | 'checkpoint';

export type RunEvent =
  /** the run directory is ready; steps [startStep, endStep) will run (startStep > 0 on resume) */
  | { type: 'started'; runDir: string; runName: string; model: string; startStep: number; endStep: number; resumed: boolean }
  /** progress inside a step; `done`/`total` count samples, rewards or eval problems */
  | { type: 'phase'; step: number; phase: RunPhase; done?: number; total?: number }
  /** the metrics line just appended to metrics.jsonl for `step` */
  | { type: 'metrics'; step: number; metrics: Record<string, number> }
  /** the record just appended to checkpoints.jsonl */
  | { type: 'checkpoint'; record: { name: string; batch?: number; state_path?: string; sampler_path?: string } & Record<string, unknown> }
  /** something the user should know that does not stop the run (e.g. a reward function raised) */
  | { type: 'warning'; step: number; message: string }
  /** `budgetStop`: the run stopped (status 'cancelled', a resume point saved) before a step that would cross its budget, in budgetStopMessage's words */
  | { type: 'finished'; runDir: string; status: RunEndStatus; lastStep: number; budgetStop?: string };

/** 'paused': stopped after the steps asked for (an agent session between calls), resumable like 'cancelled'. */
export type RunEndStatus = 'completed' | 'paused' | 'cancelled' | 'failed';

/** What every kind's result has; `kind` is the kinds table's id (src/core/kinds/registry.ts). */
export interface RunResultBase {
  kind: string;
  runDir: string;
  status: RunEndStatus;
  /** iterations (GRPO) or steps (SFT) run in this invocation */
  iterationsRun: number;
  /** the error that failed the run, in words a person can act on */
  error?: string;
  /** the budget stopped the run before its end (status 'cancelled'): "stopped at $4.92 of $5.00 …" */
  budgetStop?: string;
}

export interface GrpoRunResult extends RunResultBase {
  kind: 'grpo';
  /** first and last test/env/all/reward/total seen in this invocation, when evaluations ran */
  firstTestReward?: number;
  lastTestReward?: number;
}

export interface SftRunResult extends RunResultBase {
  kind: 'sft';
  /** first and last validation NLL seen in this invocation */
  firstTestNll?: number;
  lastTestNll?: number;
  /** first and last train_mean_nll of this invocation */
  firstTrainNll?: number;
  lastTrainNll?: number;
}

export interface DpoRunResult extends RunResultBase {
  kind: 'dpo';
  /** first and last validation NLL (of the chosen completions) seen in this invocation */
  firstTestNll?: number;
  lastTestNll?: number;
  /** first and last training pair accuracy and DPO loss of this invocation */
  firstAccuracy?: number;
  lastAccuracy?: number;
  firstDpoLoss?: number;
  lastDpoLoss?: number;
}

/** How a run of a built-in kind (or one stretch of it) ended; `kind` tells GRPO's fields from SFT's and DPO's. */
export type RunResult = GrpoRunResult | SftRunResult | DpoRunResult;
