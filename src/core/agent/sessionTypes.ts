// The agent session's vocabulary: its options, status, errors and what it holds (session.ts runs it).
import type { Budget } from '../cost/budget';
import type { RunTrackingOptions } from '../runs/runTracking';
import type { RewardRunner } from '../reward/types';
import type { Message, Renderer } from '../render/types';
import type { RunEvent, RunResultBase } from '../runs/runEvents';
import type { SweepProgress } from '../experiments/runSweep';
import type { BackendChoice } from '../spec/fields';
import type { RunWriter } from '../runs/runWriter';
import type { RunCore } from '../runs/loopRuntime';
import type { ServiceClient } from '../tinker/client';
import type { AnyRunKind } from '../training/runKind';

export interface TrainingSessionOptions {
  runsDir: string;
  /** experiment tracking (W&B) for the session's runs */
  tracking?: RunTrackingOptions;
  cacheDir: string;
  /** relative spec and prompt files resolve against this folder (the workspace) */
  baseDir: string;
  python?: string;
  /** opens the backend for a spec; the session closes each client it gets */
  connect: (spec: BackendChoice) => Promise<ServiceClient>;
  /** how long a call waits for the call in progress before answering busy (default 10 s) */
  busyWaitMs?: number;
  /** after this long without a call the session saves a resume point and releases its clients (default 60 min; 0: never) */
  idleMs?: number;
  /** how long close() waits for the resume point (default 5 s) */
  closeTimeoutMs?: number;
  /**
   * Called when the session's run starts training; what it returns follows the run until the
   * session ends (an editor registers it so the person watches it live and can stop it through
   * `signal`: a stop during a call cancels the call, a stop between calls ends the session).
   */
  watch?: (runName: string, specFile: string, kind: string) => RunWatcher;
  /** where `start_sweep` runs a sweep when the serving process has a sweep runner of its own (the extension host: its runs in the Runs view, Cancel Sweep on its node); without one, in this process beside the session */
  sweeps?: SweepHost;
  log?: (line: string) => void;
  /** the Hugging Face token for publish_to_hub (VS Code: SecretStorage); absent or empty: HF_TOKEN */
  hubToken?: () => Promise<string | undefined>;
}

/** A sweep runner of the process that serves the tools (sweepTools.ts startSweep hands sweeps to it). */
export interface SweepHost {
  /** runs (or resumes) the sweep to its end; undefined when it did not start or failed (the host has told the person why) */
  start(sweepFile: string, o: { maxConcurrent?: number; onProgress: (p: SweepProgress) => void; budget?: Budget }): Promise<{ cancelled: boolean } | undefined>;
  /** the progress of the sweep running in `dir`, if the host runs it (started by the agent or by the person) */
  running(dir: string): SweepProgress | undefined;
  cancel(dir: string): void;
}

export interface RunWatcher {
  signal?: AbortSignal;
  onEvent(e: RunEvent): void;
  onEnd(result: RunResultBase): void;
}

export interface SessionStatus {
  state: 'idle' | 'running';
  /** the tool in progress */
  tool?: string;
  run_name?: string;
  run_dir?: string;
  model?: string;
  step?: number;
  steps_total?: number;
  phase?: string;
  phase_done?: number;
  phase_total?: number;
  last_metrics?: Record<string, number>;
  elapsed_s?: number;
  /** seconds since the last call ended */
  idle_s?: number;
  /** what the session holds now; all false once released after idling */
  holds?: { tinker_session: boolean; training_client: boolean; sampler: boolean; reward_workers: boolean };
  /** the clients were released after idling; the next call reconnects */
  released?: boolean;
}

/** The answer to a call made while another one runs. */
export class SessionBusyError extends Error {
  constructor(readonly status: SessionStatus) {
    super(`busy: ${status.tool ?? 'a call'} is still running${status.step !== undefined ? ` (iteration ${status.step}${status.phase ? `, ${status.phase}` : ''})` : ''}; call status to follow it, or retry later`);
    this.name = 'SessionBusyError';
  }
}

/** A call that cannot be done as asked; the message says what to change. */
export class SessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionError';
  }
}

export interface ToolResult<T> {
  text: string;
  value: T;
}

/** What a live session holds while connected. */
export interface Held {
  run: RunCore<RunResultBase>;
  renderer: Renderer;
  reward?: RewardRunner;
  /** closes the reward workers and the service client */
  close(): Promise<void>;
}

/** What the session reads of every kind's spec: its name and model. */
export type SessionSpec = { name: string; model: string };

/** The session's run: its kind (the kinds table's descriptor), spec, run directory and live clients. */
export interface Current {
  kind: AnyRunKind;
  /** the kinds table's id */
  id: string;
  spec: SessionSpec;
  specFile: string;
  runDir: string;
  /** the run directory's writer (and its lock), held for the whole session */
  writer: RunWriter;
  /** undefined once released after idling */
  held: Held | undefined;
  watcher?: RunWatcher;
  /** steps done by this session's run (the run object's counter survives a release through this) */
  step: number;
  endStep: number;
}

export interface SamplePrompt {
  /** a user message, or a whole conversation */
  prompt?: string;
  messages?: Message[];
  ground_truth?: string;
}
