// One stateful training session for agents (an MCP client, VS Code's agent mode): a GRPO, SFT or DPO
// run that lives between calls. init_grpo / init_sft / init_dpo connect once and create (or, resuming, load) the
// training client once; each train call advances the same run object (src/core/runs/loopRuntime.ts:
// step counter, data order, current sampler, reward runner, run writer) by N steps; sample uses the
// current sampler through the same service client; save saves from the live training client; load
// replaces it; finish saves `final` and closes everything. The run directory is an ordinary one the
// editor watches, resumes and opens. Checkpoints are saved where asked (save_every, save, finish),
// plus a best-effort resume point when the session ends in an orderly way (close()) or is released
// after `idleMs` without a call — the next call then reconnects and says so.
// One call at a time: a call that arrives while another runs waits up to `busyWaitMs`, then is
// answered "busy" with the status instead of being queued silently.
import { renderedPrompt } from '../data/problem';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import type { Problem } from '../data/types';
import { GrpoRun } from '../grpo/loop';
import { sampleGroup, scoreGroups, stopParam } from '../rollouts/rollout';
import type { RunTrackingOptions } from '../runs/runTracking';
import type { RewardRunner } from '../reward/types';
import type { Message, Renderer } from '../render/types';
import type { RunEvent, RunResult, RunResultBase } from '../runs/runEvents';
import type { SweepProgress } from '../experiments/runSweep';
import { parseGrpoSpecValue, type ResolvedGrpoSpec } from '../grpo/spec';
import type { BackendChoice } from '../spec/fields';
import { mergeSpec } from '../spec/overrides';
import { parseJsonWithPosition } from '../spec/text';
import { errorMessage } from '../errors';
import { RunWriter } from '../runs/runWriter';
import { SftRun } from '../sft/loop';
import { DpoRun } from '../dpo/loop';
import { parseDpoSpecValue, type ResolvedDpoSpec } from '../dpo/spec';
import { parseSftSpecValue, ResolvedSftSpec } from '../sft/spec';
import { specDefinition } from '../kinds/specDefinition';
import { specDifferences } from '../spec/resume';
import { isSpecKind, kindRow, runKindOfConfig, type SpecKind } from '../spec/kinds';
import { runKind } from '../kinds/registry';
import type { RunCore } from '../runs/loopRuntime';
import type { SamplingClient, ServiceClient } from '../tinker/client';
import { DpoStepReport, SftStepReport, StepReport, dpoStepReport, dpoStepReportText, sftStepReport, sftStepReportText, stepReport, stepReportText } from './report';
import { METRIC } from '../../protocol/metricKeys';

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
}

/** A sweep runner of the process that serves the tools (sweepTools.ts startSweep hands sweeps to it). */
export interface SweepHost {
  /** runs (or resumes) the sweep to its end; undefined when it did not start or failed (the host has told the person why) */
  start(sweepFile: string, o: { maxConcurrent?: number; onProgress: (p: SweepProgress) => void }): Promise<{ cancelled: boolean } | undefined>;
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

function cancelNote(result: RunResultBase, unit: 'iterations' | 'steps'): string {
  return result.status === 'cancelled' ? `\n(cancelled: the ${unit} finished are kept; the session goes on from the next step)` : '';
}

export interface ToolResult<T> {
  text: string;
  value: T;
}

/** What a live session holds while connected. */
interface Held {
  run: RunCore<RunResultBase>;
  renderer: Renderer;
  reward?: RewardRunner;
  /** closes the reward workers and the service client */
  close(): Promise<void>;
}

/** A registered kind's spec, as the session reads it (every kind's spec has a name and a model). */
type RegisteredSpec = { name: string; model: string };
type AnySpec = ResolvedGrpoSpec | ResolvedSftSpec | ResolvedDpoSpec | RegisteredSpec;

/** `kind`: a built-in kind, or 'registered' for one added by registerKind (its tools: kindTools.ts); `id`: the kinds table's id either way. */
type Current = ({ kind: 'grpo'; spec: ResolvedGrpoSpec } | { kind: 'sft'; spec: ResolvedSftSpec } | { kind: 'dpo'; spec: ResolvedDpoSpec } | { kind: 'registered'; spec: RegisteredSpec }) & {
  id: string;
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
};


/** The answer to a train call on a session of another kind: `the session is an SFT run: call train_sft_step (or init_grpo for a GRPO run)`. */
function wrongKind(c: Current, want: string): SessionError {
  return new SessionError(`the session is ${kindRow(c.id).aRun}: call train_${c.id}_step (or init_${want} for ${kindRow(want).aRun})`);
}

/** max_tokens when sampling an SFT or DPO session (its spec has none); the local engine's models see 64 tokens */
const SFT_SAMPLE_MAX_TOKENS = 64;

const LAST_METRIC_KEYS = [METRIC.trainNll, METRIC.testNll, METRIC.reward, METRIC.testReward, METRIC.fracMixed, METRIC.klV1, METRIC.entropy, 'dpo_loss', 'accuracy', 'margin'];

export interface SamplePrompt {
  /** a user message, or a whole conversation */
  prompt?: string;
  messages?: Message[];
  ground_truth?: string;
}

export class TrainingSession {
  private current: Current | undefined;
  private busy: { tool: string; since: number; done: Promise<void> } | undefined;
  private progress: { step?: number; stepsTotal?: number; phase?: string; done?: number; total?: number; metrics?: Record<string, number> } = {};
  private lastCallEnd = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly closers: Array<() => Promise<void> | void> = [];

  constructor(private readonly o: TrainingSessionOptions) {}

  /** What an evaluation needs from the session (the eval tools run beside it, never behind its call in progress). */
  evalContext(): { baseDir: string; runsDir: string; cacheDir: string; python?: string; tracking?: RunTrackingOptions; connect: TrainingSessionOptions['connect']; log: (line: string) => void } {
    return {
      baseDir: this.o.baseDir,
      runsDir: this.o.runsDir,
      cacheDir: this.o.cacheDir,
      ...(this.o.python ? { python: this.o.python } : {}),
      ...(this.o.tracking ? { tracking: this.o.tracking } : {}),
      connect: this.o.connect,
      log: this.o.log ?? (() => undefined),
    };
  }

  /** The serving process's own sweep runner, if it has one. */
  sweepHost(): SweepHost | undefined {
    return this.o.sweeps;
  }

  /** Work the session's tools started beside it (a background sweep) that must stop when the session closes. */
  onClose(fn: () => Promise<void> | void): void {
    this.closers.push(fn);
  }

  status(): SessionStatus {
    const c = this.current;
    const p = this.progress;
    const h = c?.held;
    return {
      state: this.busy ? 'running' : 'idle',
      ...(this.busy ? { tool: this.busy.tool, elapsed_s: Math.round((Date.now() - this.busy.since) / 100) / 10 } : { idle_s: Math.round((Date.now() - this.lastCallEnd) / 100) / 10 }),
      ...(c ? { run_name: c.spec.name, model: c.spec.model, run_dir: c.runDir } : {}),
      ...(c ? { holds: { tinker_session: h !== undefined, training_client: h?.run.trainer !== undefined, sampler: h?.run.sampler !== undefined, reward_workers: h?.reward !== undefined }, released: h === undefined } : {}),
      ...(p.step !== undefined ? { step: p.step } : {}),
      ...(p.stepsTotal !== undefined ? { steps_total: p.stepsTotal } : {}),
      ...(this.busy && p.phase ? { phase: p.phase, ...(p.done !== undefined ? { phase_done: p.done } : {}), ...(p.total !== undefined ? { phase_total: p.total } : {}) } : {}),
      ...(p.metrics ? { last_metrics: p.metrics } : {}),
    };
  }

  statusText(): string {
    const s = this.status();
    if (!s.run_name) return s.state === 'running' ? `running ${s.tool}` : 'no session: call init_grpo, init_sft or init_dpo first';
    const where = s.step !== undefined ? `, iteration ${s.step}${s.steps_total !== undefined ? `/${s.steps_total}` : ''}` : '';
    const holds = s.holds ? Object.entries(s.holds).filter(([, v]) => v).map(([k]) => k.replace('_', ' ')) : [];
    const held = s.released ? 'released after idling (the next call reconnects)' : `holds ${holds.join(', ') || 'nothing'}`;
    const doing = s.state === 'running' ? `running ${s.tool}${s.phase ? ` (${s.phase}${s.phase_total ? ` ${s.phase_done ?? 0}/${s.phase_total}` : ''})` : ''}, ${s.elapsed_s} s` : `idle for ${s.idle_s} s; ${held}`;
    const m = s.last_metrics ? `; last: ${Object.entries(s.last_metrics).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}` : '';
    return `${s.run_name} (${s.model})${where}: ${doing}${m}${s.run_dir ? `\nrun directory: ${s.run_dir}` : ''}`;
  }

  /** Runs `fn` as the one call in progress, after waiting up to busyWaitMs for the previous one. */
  private async exclusive<T>(tool: string, fn: () => Promise<T>): Promise<T> {
    const limit = this.o.busyWaitMs ?? 10_000;
    const deadline = Date.now() + limit;
    while (this.busy) {
      const left = deadline - Date.now();
      if (left <= 0) throw new SessionBusyError(this.status());
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.busy.done, new Promise<void>((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
    if (this.closed) throw new SessionError('the session is closing');
    let release!: () => void;
    this.busy = { tool, since: Date.now(), done: new Promise<void>((r) => (release = r)) };
    clearTimeout(this.idleTimer);
    try {
      return await fn();
    } finally {
      this.busy = undefined;
      this.lastCallEnd = Date.now();
      this.armIdle();
      release();
    }
  }

  /** After `idleMs` without a call, a live session saves a resume point and releases its clients. */
  private armIdle(): void {
    const ms = this.o.idleMs ?? 60 * 60_000;
    if (!(ms > 0) || !this.current?.held || this.closed) return;
    this.idleTimer = setTimeout(() => {
      if (this.busy || !this.current?.held) return;
      void this.exclusive('release', () => this.release(this.current!, `idle for ${Math.round(ms / 1000)} s`)).catch((err: unknown) => this.o.log?.(`releasing the idle session failed: ${errorMessage(err)}`));
    }, ms);
    this.idleTimer.unref();
  }

  /** Saves a resume point (bounded by closeTimeoutMs; a failure is logged) and closes the session's clients; the run directory stays locked. */
  private async release(c: Current, why: string): Promise<void> {
    const h = c.held;
    if (!h) return;
    c.held = undefined;
    await this.resumePoint(h, why);
    await h.close().catch(() => undefined);
    this.o.log?.(`${why}: released the Tinker session, training client, sampler and reward workers (next step ${c.step})`);
  }

  private async resumePoint(h: Held, why: string): Promise<void> {
    const limit = this.o.closeTimeoutMs ?? 5000;
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    try {
      const rec = await Promise.race([
        h.run.saveResumePoint(ac.signal),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not saved within ${limit} ms`)), limit))),
      ]);
      if (rec) this.o.log?.(`${why}: saved the resume point ${rec.name} (step ${rec.batch})`);
    } catch (err) {
      ac.abort();
      this.o.log?.(`${why}: the resume point at step ${h.run.step} could not be saved (${errorMessage(err)}); a resume continues from the last checkpoint`);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Ends the session in an orderly way (the MCP client went away, the process is asked to stop, the
   * editor closes): a best-effort resume point, then every client and the run directory's lock.
   */
  async close(why = 'session closed'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    await Promise.all(this.closers.splice(0).map(async (fn) => fn()));
    const c = this.current;
    this.current = undefined;
    if (!c) return;
    if (c.held) await this.release(c, why);
    this.endWatch(c, 'paused');
    c.writer.close();
  }

  private endWatch(c: Current, status: RunResult['status'], error?: string): void {
    const w = c.watcher;
    c.watcher = undefined;
    w?.onEnd({ kind: c.id, runDir: c.runDir, status, iterationsRun: 0, ...(error ? { error } : {}) });
  }

  /** Ends the current session (another init, finish, a cancel from the editor). */
  private async end(c: Current, why: string, status: RunResult['status']): Promise<void> {
    if (c.held) await this.release(c, why);
    this.endWatch(c, status);
    c.writer.close();
    if (this.current === c) {
      this.current = undefined;
      this.progress = {};
    }
  }

  private need(): Current {
    if (!this.current) throw new SessionError('no session: call init_grpo, init_sft or init_dpo first');
    return this.current;
  }

  /** The live run, reconnecting first when the session was released after idling; `note` says so. */
  private async live(c: Current): Promise<{ h: Held; note: string }> {
    if (c.held) return { h: c.held, note: '' };
    const idle = Math.round((Date.now() - this.lastCallEnd) / 1000);
    // the run as config.json records it (what its start resolved, what a resume changed)
    const spec = isSpecKind(c.id) ? await this.recordedSpec(c.id, c.writer, c.specFile, {}) : c.spec;
    const h = await this.connectRun(c.id, spec, c.specFile, c.writer);
    c.held = h;
    c.step = h.run.step;
    return { h, note: `(the session was idle and had released its clients; reconnected after ${idle} s and continued from step ${c.step})\n${h.said.map((l) => `${l}\n`).join('')}` };
  }

  /** Prepares the run object on `writer` (a new run directory when undefined) and opens its training client. */
  private async connectRun(kind: string, spec: AnySpec, specFile: string, writer: RunWriter | undefined, writers: RunWriter[] = []): Promise<Held & { writer: RunWriter; said: string[] }> {
    // what a resume changed or set aside is told to the agent too, not only logged
    const said: string[] = [];
    const log = (line: string) => {
      if (line.startsWith('resuming at step')) said.push(line);
      this.o.log?.(line);
    };
    const common = { spec, specFile, runsDir: this.o.runsDir, cacheDir: this.o.cacheDir, connect: this.o.connect, log, ...(this.o.tracking ? { tracking: this.o.tracking } : {}) };
    // the spec was validated by the kind's own spec module (init_<kind>)
    const p = await (await runKind(kind)).prepare({ ...common, ...(this.o.python ? { python: this.o.python } : {}) }, writer, writers);
    if (p.done) throw new SessionError(`${p.done.runDir} is complete (it has a final checkpoint): init without "resume" starts a new run`);
    try {
      await p.run.open();
    } catch (err) {
      await p.close();
      throw err;
    }
    return { run: p.run, renderer: p.renderer, ...('reward' in p ? { reward: p.reward } : {}), close: p.close, writer: p.run.writer, said };
  }

  /** The run directory `resume` names: a path (relative to the workspace or the runs folder), or "latest" for the newest run of the spec's name. */
  private resumeDir(resume: string, name: string, kind: string): string {
    if (resume !== 'latest') {
      const dir = [path.resolve(this.o.baseDir, resume), path.resolve(this.o.runsDir, resume)].find((d) => fs.existsSync(path.join(d, 'config.json')));
      if (!dir) throw new SessionError(`resume: no run directory (with a config.json) at ${resume}`);
      return dir;
    }
    const prefix = `${name}-`;
    const dirs = fs.existsSync(this.o.runsDir) ? fs.readdirSync(this.o.runsDir).filter((d) => d.startsWith(prefix) && /^\d{8}-\d{6}/.test(d.slice(prefix.length))) : [];
    const ofKind = dirs
      .map((d) => path.join(this.o.runsDir, d))
      .filter((d) => {
        try {
          return runKindOfConfig(JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8'))) === kind;
        } catch {
          return false;
        }
      })
      .sort();
    const latest = ofKind[ofKind.length - 1];
    if (!latest) throw new SessionError(`resume "latest": no run of "${name}" in ${this.o.runsDir}`);
    return latest;
  }

  /**
   * Starts the session's run: a new run directory, or `resume`'s; its training client created (or
   * loaded) once. A resumed run continues with its recorded spec (config.json) and `overrides` on top
   * (only the fields a resume may change: startParts.ts refuses the rest); `note` says where the spec
   * file now differs from what the run continues with.
   */
  private async begin(kind: string, fileSpec: AnySpec, specFile: string, resume: string | undefined, overrides: Record<string, unknown> | undefined): Promise<{ c: Current; note: string }> {
    const prior = this.current;
    if (prior) await this.end(prior, 'replaced by a new init', 'paused');
    this.closed = false;
    let resumeWriter: RunWriter | undefined;
    if (resume !== undefined) {
      const dir = this.resumeDir(resume, fileSpec.name, kind);
      try {
        resumeWriter = RunWriter.open(dir);
      } catch (err) {
        throw new SessionError(`resume: ${errorMessage(err)}`);
      }
    }
    const writers: RunWriter[] = resumeWriter ? [resumeWriter] : [];
    try {
      const spec = resumeWriter && isSpecKind(kind) ? await this.recordedSpec(kind, resumeWriter, specFile, overrides ?? {}) : fileSpec;
      const h = await this.connectRun(kind, spec, specFile, resumeWriter, writers);
      const c = { kind: isSpecKind(kind) ? kind : 'registered', id: kind, spec, specFile, runDir: h.writer.dir, writer: h.writer, held: h, step: h.run.step, endStep: h.run.endStep } as Current;
      this.current = c;
      this.progress = { stepsTotal: h.run.endStep, ...(h.run.step > 0 ? { step: h.run.step } : {}) };
      const unapplied = resumeWriter && isSpecKind(kind) ? specDifferences(spec as Record<string, unknown>, fileSpec as Record<string, unknown>).filter((d) => !(d.field in (overrides ?? {}))) : [];
      const note = h.said.map((l) => `\n${l}`).join('') + (unapplied.length
        ? `\nThe run continues with its recorded configuration (config.json); the spec file now differs in ${unapplied.map((d) => `${d.field} (run ${JSON.stringify(d.recorded) ?? '(not set)'}, file ${JSON.stringify(d.given) ?? '(not set)'})`).join(', ')}, not applied: a resume may change only ${isSpecKind(kind) ? (await specDefinition(kind)).resumable.join(', ') : ''}, given as overrides.`
        : '');
      return { c, note };
    } catch (err) {
      for (const w of writers) w.close();
      throw err;
    }
  }

  /** The spec a resumed run continues with: the one its config.json records, `overrides` on top, validated as `specFile` would be. */
  private async recordedSpec(kind: SpecKind, writer: RunWriter, specFile: string, overrides: Record<string, unknown>): Promise<AnySpec> {
    const def = await specDefinition(kind);
    const recorded = def.fromConfig(writer.readConfig(), path.join(writer.dir, 'config.json'));
    return (await def.parseValue(mergeSpec(recorded, overrides), specFile)).spec as AnySpec;
  }

  /** Validates a spec (a *.grpo.json file, fields of `overrides` on top), connects and makes it the session's run (new, or `resume`d). */
  initGrpo(a: { spec_file: string; overrides?: Record<string, unknown>; resume?: string }): Promise<ToolResult<{ run_name: string; model: string; spec_file: string; train_problems: number; holdout_problems: number; iterations: number; run_dir: string; step: number }>> {
    return this.exclusive('init_grpo', async () => {
      const specFile = path.resolve(this.o.baseDir, a.spec_file);
      const raw = parseJsonWithPosition(readSpecText(specFile), path.basename(specFile));
      const merged = mergeSpec(raw, a.overrides ?? {});
      const { spec: fileSpec } = await parseGrpoSpecValue(merged, specFile);
      const { c, note } = await this.begin('grpo', fileSpec, specFile, a.resume, a.overrides);
      const spec = c.spec as ResolvedGrpoSpec;
      const pool = (c.held!.run as GrpoRun).pool;
      const value = { run_name: spec.name, model: spec.model, spec_file: specFile, train_problems: pool.train.length, holdout_problems: pool.holdout.length, iterations: spec.iterations, run_dir: c.runDir, step: c.step };
      const where = c.step > 0 ? `Resumed ${c.runDir} at iteration ${c.step}: call train_grpo_step to continue.` : 'Nothing trained yet: call train_grpo_step.';
      const text = `session ready: ${spec.name} on ${spec.model}, ${spec.groups_per_batch} groups × ${spec.group_size}, lr ${spec.learning_rate ?? 'default'}, up to ${spec.iterations} iterations; ${pool.train.length} train / ${pool.holdout.length} holdout problems; ${spec.reward ? `reward ${spec.reward.file}` : spec.env ? `environment ${spec.env.file} (episodes of up to ${spec.env.max_turns} turn${spec.env.max_turns === 1 ? '' : 's'})` : 'no reward'}${spec.teacher || spec.dataset_configs ? ', distilling from a teacher' : ''}. ${where}${note}\nrun directory: ${c.runDir}`;
      return { text, value };
    });
  }

  /** Trains `num_iterations` GRPO iterations (default 1) on the live run. */
  trainGrpoStep(a: { num_iterations?: number }, signal?: AbortSignal): Promise<ToolResult<StepReport>> {
    return this.exclusive('train_grpo_step', async () => {
      const c = this.need();
      if (c.kind !== 'grpo') throw wrongKind(c, 'grpo');
      const n = a.num_iterations ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_iterations must be a whole number ≥ 1 (got ${n})`);
      if (c.step >= c.endStep) throw new SessionError(`the run has done all ${c.spec.iterations} iterations of its spec; call finish, or init_grpo again with a larger "iterations" override`);
      const { result, firstStep, lastStep, warnings, note, short } = await this.trainStretch(c, 'iterations', n, signal);
      const report = stepReport({ runDir: result.runDir, firstStep, lastStep, stepsTotal: c.spec.iterations, groupsPerBatch: c.spec.groups_per_batch, rewardErrors: warnings });
      return { text: note + stepReportText(report) + short + cancelNote(result, 'iterations'), value: report };
    });
  }

  /** Validates an SFT spec (a *.sft.json file, `overrides` on top), connects and makes it the session's run (new, or `resume`d). */
  initSft(a: { spec_file: string; overrides?: Record<string, unknown>; resume?: string }): Promise<ToolResult<{ run_name: string; model: string; spec_file: string; train_chats: number; validation_chats: number; run_dir: string; step: number }>> {
    return this.exclusive('init_sft', async () => {
      const specFile = path.resolve(this.o.baseDir, a.spec_file);
      const raw = parseJsonWithPosition(readSpecText(specFile), path.basename(specFile));
      const { spec: fileSpec } = await parseSftSpecValue(mergeSpec(raw, a.overrides ?? {}), specFile);
      const { c, note } = await this.begin('sft', fileSpec, specFile, a.resume, a.overrides);
      const spec = c.spec as ResolvedSftSpec;
      const run = c.held!.run as SftRun;
      const value = { run_name: spec.name, model: spec.model, spec_file: specFile, train_chats: run.trainCount, validation_chats: run.validationCount, run_dir: c.runDir, step: c.step };
      const where = c.step > 0 ? `Resumed ${c.runDir} at step ${c.step}: call train_sft_step to continue.` : 'Nothing trained yet: call train_sft_step.';
      return {
        text: `session ready: SFT ${spec.name} on ${spec.model}, batch ${spec.batch_size}, lr ${spec.learning_rate ?? 'default'}; ${value.train_chats} train / ${value.validation_chats} validation chats. ${where}${note}\nrun directory: ${c.runDir}`,
        value,
      };
    });
  }

  /** Trains `num_steps` SFT steps (default 1) on the live run. */
  trainSftStep(a: { num_steps?: number }, signal?: AbortSignal): Promise<ToolResult<SftStepReport>> {
    return this.exclusive('train_sft_step', async () => {
      const c = this.need();
      if (c.kind !== 'sft') throw wrongKind(c, 'sft');
      const n = a.num_steps ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_steps must be a whole number ≥ 1 (got ${n})`);
      const { result, firstStep, lastStep, note, short } = await this.trainStretch(c, 'steps', n, signal);
      const report = sftStepReport({ runDir: result.runDir, firstStep, lastStep });
      return { text: note + sftStepReportText(report) + short + cancelNote(result, 'steps'), value: report };
    });
  }

  /** Validates a DPO spec (a *.dpo.json file, `overrides` on top), connects, saves the reference (a new run) and makes it the session's run. */
  initDpo(a: { spec_file: string; overrides?: Record<string, unknown>; resume?: string }): Promise<ToolResult<{ run_name: string; model: string; spec_file: string; train_pairs: number; validation_pairs: number; dpo_beta: number; reference: string | null; run_dir: string; step: number }>> {
    return this.exclusive('init_dpo', async () => {
      const specFile = path.resolve(this.o.baseDir, a.spec_file);
      const raw = parseJsonWithPosition(readSpecText(specFile), path.basename(specFile));
      const { spec: fileSpec } = await parseDpoSpecValue(mergeSpec(raw, a.overrides ?? {}), specFile);
      const { c, note } = await this.begin('dpo', fileSpec, specFile, a.resume, a.overrides);
      const spec = c.spec as ResolvedDpoSpec;
      const run = c.held!.run as DpoRun;
      const value = { run_name: spec.name, model: spec.model, spec_file: specFile, train_pairs: run.trainCount, validation_pairs: run.validationCount, dpo_beta: spec.dpo_beta, reference: run.referencePath ?? null, run_dir: c.runDir, step: c.step };
      const where = c.step > 0 ? `Resumed ${c.runDir} at step ${c.step} (same reference as before): call train_dpo_step to continue.` : 'Nothing trained yet: call train_dpo_step.';
      return {
        text: `session ready: DPO ${spec.name} on ${spec.model}, batch ${spec.batch_size} pairs, β ${spec.dpo_beta}, lr ${spec.learning_rate ?? 'default'}; ${value.train_pairs} train / ${value.validation_pairs} validation pairs; reference ${value.reference ?? '–'}. ${where}${note}\nrun directory: ${c.runDir}`,
        value,
      };
    });
  }

  /** Trains `num_steps` DPO steps (default 1) on the live run. */
  trainDpoStep(a: { num_steps?: number }, signal?: AbortSignal): Promise<ToolResult<DpoStepReport>> {
    return this.exclusive('train_dpo_step', async () => {
      const c = this.need();
      if (c.kind !== 'dpo') throw wrongKind(c, 'dpo');
      const n = a.num_steps ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_steps must be a whole number ≥ 1 (got ${n})`);
      const { result, firstStep, lastStep, note, short } = await this.trainStretch(c, 'steps', n, signal);
      const report = dpoStepReport({ runDir: result.runDir, firstStep, lastStep, stepsTotal: c.endStep });
      return { text: note + dpoStepReportText(report) + short + cancelNote(result, 'steps'), value: report };
    });
  }

  /** A registered kind's init_<id> (kindTools.ts): its spec (`overrides` on top) validated by its own spec module, connected, made the session's run. */
  initRun(kindId: string, a: { spec_file: string; overrides?: Record<string, unknown>; resume?: string }): Promise<ToolResult<{ run_name: string; model: string; spec_file: string; run_dir: string; step: number; steps_total: number }>> {
    return this.exclusive(`init_${kindId}`, async () => {
      const kind = await runKind(kindId);
      const specFile = path.resolve(this.o.baseDir, a.spec_file);
      const raw = parseJsonWithPosition(readSpecText(specFile), path.basename(specFile));
      const { spec } = await (await kind.spec()).parseValue(mergeSpec(raw, a.overrides ?? {}), specFile);
      const { c, note } = await this.begin(kindId, spec as RegisteredSpec, specFile, a.resume, a.overrides);
      const value = { run_name: c.spec.name, model: c.spec.model, spec_file: specFile, run_dir: c.runDir, step: c.step, steps_total: c.endStep };
      const where = c.step > 0 ? `Resumed ${c.runDir} at ${kind.row.unit.one} ${c.step}: call train_${kindId}_step to continue.` : `Nothing trained yet: call train_${kindId}_step.`;
      return { text: `session ready: ${kind.agent.describe(spec)}. ${where}${note}\nrun directory: ${c.runDir}`, value };
    });
  }

  /** A registered kind's train_<id>_step: `num_steps` (default 1) on the live run, reported in the kind's words. */
  trainRun(kindId: string, a: { num_steps?: number }, signal?: AbortSignal): Promise<ToolResult<unknown>> {
    return this.exclusive(`train_${kindId}_step`, async () => {
      const c = this.need();
      if (c.id !== kindId) throw wrongKind(c, kindId);
      const n = a.num_steps ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_steps must be a whole number ≥ 1 (got ${n})`);
      const { result, firstStep, lastStep, warnings, note, short } = await this.trainStretch(c, 'steps', n, signal);
      const r = (await runKind(kindId)).agent.report({ runDir: result.runDir, firstStep, lastStep, stepsTotal: c.endStep, spec: c.spec, warnings });
      return { text: note + r.text + short + cancelNote(result, 'steps'), value: r.value };
    });
  }

  /**
   * Advances the live run `n` steps: the editor's watcher follows it and can stop it, progress feeds
   * status(), and a stretch that failed or ran nothing becomes a SessionError. Returns the steps it ran.
   */
  private async trainStretch(c: Current, unit: 'iterations' | 'steps', n: number, signal: AbortSignal | undefined): Promise<{ result: RunResultBase; firstStep: number; lastStep: number; warnings: string[]; note: string; short: string }> {
    const { h, note } = await this.live(c);
    const warnings: string[] = [];
    let firstStep: number | undefined;
    let lastStep = -1;
    if (!c.watcher && this.o.watch) {
      c.watcher = this.o.watch(c.spec.name, c.specFile, c.id);
      c.watcher.signal?.addEventListener('abort', () => void this.cancelledFromEditor(c), { once: true });
    }
    const watcher = c.watcher;
    const signals = [signal, watcher?.signal].filter((x): x is AbortSignal => x !== undefined);
    const result = await h.run.advance(n, {
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      onEvent: (e) => {
        if (e.type === 'started') this.progress.stepsTotal = e.endStep;
        if (e.type === 'phase') this.progress = { ...this.progress, step: e.step, phase: e.phase, done: e.done, total: e.total };
        if (e.type === 'metrics') {
          firstStep ??= e.step;
          lastStep = e.step;
          this.progress.metrics = Object.fromEntries(LAST_METRIC_KEYS.filter((k) => e.metrics[k] !== undefined).map((k) => [k, e.metrics[k]!]));
        }
        if (e.type === 'warning') warnings.push(e.message);
        watcher?.onEvent(e);
      },
    });
    c.step = h.run.step;
    this.progress.step = c.step;
    if (result.status === 'failed') {
      // the live clients may be unusable: the next call reconnects from the last checkpoint
      await this.release(c, 'the step failed');
      throw new SessionError(`the step failed: ${result.error ?? 'unknown error'} (run directory ${result.runDir}; the ${unit} written are kept, the next call continues from the last checkpoint)`);
    }
    if (firstStep === undefined) {
      const more = unit === 'steps' ? `: the run has done all its steps; call finish, or init_${c.id} again with a larger "max_steps" or "num_epochs" override` : '';
      throw new SessionError(`no ${unit === 'steps' ? 'step' : 'iteration'} ran (${result.status})${more}; run directory ${result.runDir}`);
    }
    // the run ends before the stretch asked for: say how many ran, not only which
    const ran = lastStep - firstStep + 1;
    const more = unit === 'steps' ? 'a larger "max_steps" or "num_epochs"' : 'a larger "iterations"';
    const short = ran < n && result.status !== 'cancelled' ? `\nran ${ran} of the ${n} ${unit} asked: the run ends at ${c.endStep} ${unit}, all done now; call finish, or init_${c.id} with resume and ${more} override` : '';
    return { result, firstStep, lastStep, warnings, note, short };
  }

  /** The editor's Cancel Run: a call in flight is cancelled by the signal; between calls the session ends cleanly. */
  private async cancelledFromEditor(c: Current): Promise<void> {
    try {
      await this.exclusive('cancel', async () => {
        if (this.current !== c) return;
        await this.end(c, 'cancelled from the editor', 'cancelled');
      });
    } catch (err) {
      this.o.log?.(`ending the cancelled session: ${errorMessage(err)}`);
    }
  }

  /**
   * Samples `n` completions of each prompt from the current weights (or `checkpoint`, a tinker://
   * sampler path); rewards them when a prompt has a ground truth.
   */
  sample(a: { prompts?: SamplePrompt[]; prompts_file?: string; n?: number; temperature?: number; max_tokens?: number; checkpoint?: string }, signal?: AbortSignal) {
    return this.exclusive('sample', async () => {
      const c = this.need();
      const prompts = [...(a.prompts ?? []), ...(a.prompts_file ? readPromptsFile(path.resolve(this.o.baseDir, a.prompts_file)) : [])];
      if (prompts.length === 0) throw new SessionError('give prompts (a list) or prompts_file (JSONL with "prompt" or "messages", and optionally "ground_truth")');
      if (a.checkpoint !== undefined && !a.checkpoint.startsWith('tinker://')) throw new SessionError(`checkpoint must be a tinker:// sampler path (got "${a.checkpoint}")`);
      const n = a.n ?? 4;
      const { h, note } = await this.live(c);
      const renderer = h.renderer;
      const sampler: SamplingClient = a.checkpoint ? await h.run.service.createSamplingClient({ modelPath: a.checkpoint }, signal) : await h.run.currentSampler(signal);
      const problems: Problem[] = prompts.map((p, i) => ({
        id: `prompt:${i}`,
        messages: p.messages ?? [{ role: 'user', content: p.prompt ?? '' }],
        groundTruth: p.ground_truth ?? '',
      }));
      const grpo = c.kind === 'grpo' ? c.spec : undefined;
      const params = {
        max_tokens: a.max_tokens ?? grpo?.max_tokens ?? SFT_SAMPLE_MAX_TOKENS,
        temperature: a.temperature ?? grpo?.temperature ?? 1,
        stop: grpo?.stop?.length ? grpo.stop : stopParam(renderer.stopSequences()),
      };
      const groups = await Promise.all(problems.map((p) => sampleGroup(sampler, renderer, p, renderedPrompt(renderer, p), n, params, signal)));
      // an SFT run has no reward function: its samples are shown unscored
      const scorable = h.reward !== undefined && prompts.some((p) => p.ground_truth !== undefined);
      let rewards: (number | null)[][] = groups.map((g) => g.rollouts.map(() => null));
      const errors: string[] = [];
      if (scorable) {
        const scored = await scoreGroups(groups, h.reward!, signal);
        rewards = scored.map((g, gi) => g.rollouts.map((r) => (prompts[gi]!.ground_truth === undefined ? null : r.reward)));
        for (const g of scored) for (const r of g.rollouts) if (r.rewardError && errors.length < 3) errors.push(`${r.rewardError.kind}: ${r.rewardError.message}`);
      }
      const unitName = kindRow(c.id).unit.many;
      const value = {
        source: a.checkpoint ?? `current weights after ${c.step} ${unitName}`,
        results: groups.map((g, gi) => ({
          prompt: prompts[gi]!.prompt ?? g.problem.messages[g.problem.messages.length - 1]?.content ?? '',
          ground_truth: prompts[gi]!.ground_truth ?? null,
          completions: g.rollouts.map((r, k) => ({ text: r.response.message.content, reward: rewards[gi]![k]!, stop_reason: r.stopReason, tokens: r.tokens.length })),
        })),
        reward_errors: errors,
      };
      const lines = [`${note}${n} sample(s) of ${prompts.length} prompt(s) from ${value.source}`];
      for (const r of value.results) {
        const rs = r.completions.map((x) => x.reward).filter((v): v is number => v !== null);
        lines.push(`- ${JSON.stringify(clip(r.prompt, 80))}${rs.length ? ` mean reward ${(rs.reduce((s, v) => s + v, 0) / rs.length).toFixed(3)}` : ''}: ${r.completions.slice(0, 3).map((x) => JSON.stringify(clip(x.text, 80))).join(', ')}${r.completions.length > 3 ? ', …' : ''}`);
      }
      if (errors.length) lines.push(`reward errors: ${errors.join(' | ')}`);
      if (grpo?.env) lines.push(`unscored: this run's environment (${path.basename(grpo.env.file)}) scores whole episodes, in train_grpo_step; these are single replies`);
      return { text: lines.join('\n'), value };
    });
  }

  /** Saves the live weights (state and sampler) under `name` and records it in checkpoints.jsonl. */
  save(a: { name: string; metadata?: Record<string, string> }) {
    return this.exclusive('save', async () => {
      const c = this.need();
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(a.name)) throw new SessionError(`name: letters, digits, ".", "_" and "-" only, at most 64 (got "${a.name}")`);
      const { h, note } = await this.live(c);
      const record = await h.run.saveNamed(a.name, 'both', undefined, c.watcher ? { emit: (e) => c.watcher?.onEvent(e) } : undefined, undefined, a.metadata);
      return { text: `${note}saved "${a.name}" at step ${record.batch}\nstate: ${record.state_path}\nsampler: ${record.sampler_path}`, value: record };
    });
  }

  /** The next step continues from `path` (a tinker:// state path): weights and optimizer, on a training client that replaces the live one. */
  load(a: { path: string }) {
    return this.exclusive('load', async () => {
      const c = this.need();
      if (!a.path.startsWith('tinker://')) throw new SessionError(`path must be a tinker:// state path (got "${a.path}")`);
      const { h, note } = await this.live(c);
      try {
        await h.run.service.weightsInfo(a.path);
      } catch (err) {
        throw new SessionError(`unknown checkpoint ${a.path}: ${errorMessage(err)}`);
      }
      const fresh = c.step === 0 && h.run.step === 0;
      await h.run.load(a.path);
      const text = fresh ? `the first step will start from ${a.path} (weights only, fresh optimizer)` : `the next step (${c.step}) continues from ${a.path} (weights and optimizer)`;
      return { text: note + text, value: { path: a.path, step: c.step } };
    });
  }

  /** Saves the `final` checkpoint from the live training client and ends the session; returns a summary of the run. */
  finish() {
    return this.exclusive('finish', async () => {
      const c = this.need();
      const { h } = await this.live(c);
      const batch = c.step;
      const final = await h.run.saveNamed('final', 'both', undefined, c.watcher ? { emit: (e) => c.watcher?.onEvent(e) } : undefined);
      const runDir = c.runDir;
      await h.close().catch(() => undefined);
      c.held = undefined;
      this.endWatch(c, 'completed');
      c.writer.close();
      this.current = undefined;
      this.progress = {};
      if (batch === 0) return { text: `session ended; nothing was trained (final checkpoint of the initial weights: ${final.sampler_path})\nrun directory: ${runDir}`, value: { run_dir: runDir, final, steps: 0 } };
      if (c.kind === 'dpo') {
        const r = dpoStepReport({ runDir, firstStep: 0, lastStep: batch - 1, stepsTotal: c.endStep });
        const value = { run_dir: runDir, final, steps: batch, accuracy: r.accuracy, margin: r.margin, test_accuracy: r.test_accuracy };
        return { text: `finished ${path.basename(runDir)} after ${batch} steps; last pair accuracy ${r.accuracy?.toFixed(3) ?? '–'}, margin ${r.margin?.toFixed(4) ?? '–'}${r.test_accuracy !== null ? `, validation accuracy ${r.test_accuracy.toFixed(3)}` : ''}\nfinal sampler: ${final.sampler_path}\nrun directory: ${runDir}`, value };
      }
      if (c.kind === 'sft') {
        const r = sftStepReport({ runDir, firstStep: 0, lastStep: batch - 1 });
        const value = { run_dir: runDir, final, steps: batch, train_mean_nll: r.train_mean_nll, test_nll: r.test_nll };
        return { text: `finished ${path.basename(runDir)} after ${batch} steps; last validation NLL ${r.test_nll?.toFixed(3) ?? '–'}\nfinal sampler: ${final.sampler_path}\nrun directory: ${runDir}`, value };
      }
      if (c.kind === 'registered') {
        const r = (await runKind(c.id)).agent.report({ runDir, firstStep: 0, lastStep: batch - 1, stepsTotal: c.endStep, spec: c.spec, warnings: [] });
        return { text: `finished ${path.basename(runDir)} after ${batch} ${kindRow(c.id).unit.many}\n${r.text}\nfinal sampler: ${final.sampler_path}`, value: { run_dir: runDir, final, steps: batch, report: r.value } };
      }
      const report = stepReport({ runDir, firstStep: 0, lastStep: batch - 1, stepsTotal: c.spec.iterations, groupsPerBatch: c.spec.groups_per_batch, rewardErrors: [] });
      const value = { run_dir: runDir, final, steps: batch, reward_mean: report.reward_mean, test_reward: report.test_reward };
      return { text: `finished ${path.basename(value.run_dir)} after ${batch} iterations; mean train reward ${report.reward_mean?.toFixed(3) ?? '–'}${report.test_reward !== null ? `, last holdout ${report.test_reward.toFixed(3)}` : ''}\nfinal sampler: ${final.sampler_path}\nrun directory: ${runDir}`, value };
    });
  }
}

function readSpecText(specFile: string): string {
  try {
    return fs.readFileSync(specFile, 'utf8');
  } catch (err) {
    throw new SessionError(`spec_file: cannot read ${specFile} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function readPromptsFile(file: string): SamplePrompt[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SessionError(`prompts_file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const out: SamplePrompt[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new SessionError(`${file}:${i + 1}: not JSON (${errorMessage(err)})`);
    }
    const p = SamplePromptSchema.safeParse(v);
    if (!p.success) throw new SessionError(`${file}:${i + 1}: ${p.error.issues.map((x) => `${x.path.join('.') || '(line)'}: ${x.message}`).join('; ')}`);
    out.push(p.data);
  });
  return out;
}

export const SamplePromptSchema = z
  .object({
    prompt: z.string().optional(),
    messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).optional(),
    ground_truth: z.string().optional(),
  })
  .refine((p) => (p.prompt === undefined) !== (p.messages === undefined), { message: 'give exactly one of "prompt" or "messages"' });
