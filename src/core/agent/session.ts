// One stateful training session for agents (an MCP client, VS Code's agent mode): a run of any kind
// of the kinds table that lives between calls. init_<kind> connects once and creates (or, resuming,
// loads) the training client once; each train call advances the same run object (src/core/runs/loopRuntime.ts:
// step counter, data order, current sampler, reward runner, run writer) by N steps; sample uses the
// current sampler through the same service client; save saves from the live training client; load
// replaces it; finish saves `final` and closes everything. What differs by kind (the init answer,
// the reports, sampling, finish's summary) is the kind's descriptor's agent words (core/kinds/runKind.ts).
// The run directory is an ordinary one the editor watches, resumes and opens. Checkpoints are saved where asked (save_every, save, finish),
// plus a best-effort resume point when the session ends in an orderly way (close()) or is released
// after `idleMs` without a call — the next call then reconnects and says so.
// One call at a time: a call that arrives while another runs waits up to `busyWaitMs`, then is
// answered "busy" with the status instead of being queued silently.
import * as path from 'node:path';
import type { RunTrackingOptions } from '../runs/runTracking';
import type { RunResult, RunResultBase } from '../runs/runEvents';
import { errorMessage } from '../errors';
import { RunWriter } from '../runs/runWriter';
import { kindRow } from '../spec/kinds';
import { runKind, runKindIds } from '../kinds/registry';
import type { AnyRunKind } from '../training/runKind';
import { METRIC } from '../../protocol/metricKeys';
import { SessionBusyError, SessionError, type Current, type Held, type SessionSpec, type SessionStatus, type SweepHost, type ToolResult, type TrainingSessionOptions } from './sessionTypes';
import { recordedSpec, resumeDir, specOfFile, unappliedNote } from './sessionStart';
import { sampleLive, samplePrompts, type SampleArgs } from './sessionSample';

export type { RunWatcher, SamplePrompt, SessionStatus, SweepHost, ToolResult, TrainingSessionOptions } from './sessionTypes';
export { SessionBusyError, SessionError } from './sessionTypes';
export { SamplePromptSchema } from './sessionSample';

/** What init_<kind> returns: the run's name, model, files and step, and what the kind adds (its data counts, …). */
export type SessionStarted = { run_name: string; model: string; spec_file: string; run_dir: string; step: number } & Record<string, unknown>;
/** What train_<kind>_step returns: the steps it ran, and the kind's report of them. */
export type StretchReport = { run_dir: string; first_step: number; last_step: number } & Record<string, unknown>;

function cancelNote(result: RunResultBase, unit: string): string {
  return result.status === 'cancelled' ? `\n(cancelled: the ${unit} finished are kept; the session goes on from the next step)` : '';
}

/** The answer to a train call on a session of another kind: `the session is an SFT run: call train_sft_step (or init_grpo for a GRPO run)`. */
function wrongKind(c: Current, want: string): SessionError {
  return new SessionError(`the session is ${kindRow(c.id).aRun}: call train_${c.id}_step (or init_${want} for ${kindRow(want).aRun})`);
}

const LAST_METRIC_KEYS = [METRIC.trainNll, METRIC.testNll, METRIC.reward, METRIC.testReward, METRIC.fracMixed, METRIC.klV1, METRIC.entropy, 'dpo_loss', 'accuracy', 'margin'];

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
  /** The Hugging Face token the host keeps, if any (publish_to_hub falls back to HF_TOKEN). */
  async hubToken(): Promise<string | undefined> {
    return this.o.hubToken?.();
  }

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
    if (!s.run_name) return s.state === 'running' ? `running ${s.tool}` : `no session: call ${initToolsText()} first`;
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
    if (!this.current) throw new SessionError(`no session: call ${initToolsText()} first`);
    return this.current;
  }

  /** The live run, reconnecting first when the session was released after idling; `note` says so. */
  private async live(c: Current): Promise<{ h: Held; note: string }> {
    if (c.held) return { h: c.held, note: '' };
    const idle = Math.round((Date.now() - this.lastCallEnd) / 1000);
    // the run as config.json records it (what its start resolved, what a resume changed)
    const spec = await recordedSpec(c.kind, c.writer, c.specFile, {});
    const h = await this.connectRun(c.kind, spec, c.specFile, c.writer);
    c.held = h;
    c.step = h.run.step;
    return { h, note: `(the session was idle and had released its clients; reconnected after ${idle} s and continued from step ${c.step})\n${h.said.map((l) => `${l}\n`).join('')}` };
  }

  /** Prepares the run object on `writer` (a new run directory when undefined) and opens its training client. */
  /** Prepares the run object on `writer` (a new run directory when undefined) and opens its training client. */
  private async connectRun(kind: AnyRunKind, spec: SessionSpec, specFile: string, writer: RunWriter | undefined, writers: RunWriter[] = []): Promise<Held & { writer: RunWriter; said: string[] }> {
    // what a resume changed or set aside is told to the agent too, not only logged
    const said: string[] = [];
    const log = (line: string) => {
      if (line.startsWith('resuming at step')) said.push(line);
      this.o.log?.(line);
    };
    const common = { spec, specFile, runsDir: this.o.runsDir, cacheDir: this.o.cacheDir, connect: this.o.connect, log, ...(this.o.tracking ? { tracking: this.o.tracking } : {}) };
    // the spec was validated by the kind's own spec module (init_<kind>)
    const p = await kind.prepare({ ...common, ...(this.o.python ? { python: this.o.python } : {}) }, writer, writers);
    if (p.done) throw new SessionError(`${p.done.runDir} is complete (it has a final checkpoint): init without "resume" starts a new run`);
    try {
      await p.run.open();
    } catch (err) {
      await p.close();
      throw err;
    }
    return { run: p.run, renderer: p.renderer, ...('reward' in p ? { reward: p.reward } : {}), close: p.close, writer: p.run.writer, said };
  }

  /**
   * Starts the session's run: a new run directory, or `resume`'s; its training client created (or
   * loaded) once. A resumed run continues with its recorded spec (config.json) and `overrides` on top
   * (only the fields a resume may change: startParts.ts refuses the rest); `note` says where the spec
   * file now differs from what the run continues with.
   */
  private async begin(kind: AnyRunKind, fileSpec: SessionSpec, specFile: string, resume: string | undefined, overrides: Record<string, unknown> | undefined): Promise<{ c: Current; note: string }> {
    const prior = this.current;
    if (prior) await this.end(prior, 'replaced by a new init', 'paused');
    this.closed = false;
    let resumeWriter: RunWriter | undefined;
    if (resume !== undefined) {
      const dir = resumeDir(this.o, resume, fileSpec.name, kind.row.id);
      try {
        resumeWriter = RunWriter.open(dir);
      } catch (err) {
        throw new SessionError(`resume: ${errorMessage(err)}`);
      }
    }
    const writers: RunWriter[] = resumeWriter ? [resumeWriter] : [];
    try {
      const spec = resumeWriter ? await recordedSpec(kind, resumeWriter, specFile, overrides ?? {}) : fileSpec;
      const h = await this.connectRun(kind, spec, specFile, resumeWriter, writers);
      const c: Current = { kind, id: kind.row.id, spec, specFile, runDir: h.writer.dir, writer: h.writer, held: h, step: h.run.step, endStep: h.run.endStep };
      this.current = c;
      this.progress = { stepsTotal: h.run.endStep, ...(h.run.step > 0 ? { step: h.run.step } : {}) };
      const unapplied = resumeWriter ? await unappliedNote(kind, spec, fileSpec, overrides) : '';
      return { c, note: h.said.map((l) => `\n${l}`).join('') + unapplied };
    } catch (err) {
      for (const w of writers) w.close();
      throw err;
    }
  }

  /**
   * init_<kind>: validates the spec file (fields of `overrides` on top) with the kind's own spec
   * module, connects and makes it the session's run (new, or `resume`d); answers in the kind's words.
   */
  initRun(kindId: string, a: { spec_file: string; overrides?: Record<string, unknown>; resume?: string }): Promise<ToolResult<SessionStarted>> {
    return this.exclusive(`init_${kindId}`, async () => {
      const kind = await runKind(kindId);
      const { specFile, spec: fileSpec } = await specOfFile(kind, this.o.baseDir, a.spec_file, a.overrides);
      const { c, note } = await this.begin(kind, fileSpec, specFile, a.resume, a.overrides);
      const start = { spec: c.spec, run: c.held!.run, specFile, runDir: c.runDir, step: c.step, stepsTotal: c.endStep };
      const ready = kind.agent.ready?.(start) ?? { text: kind.agent.describe(c.spec), value: { run_name: c.spec.name, model: c.spec.model, spec_file: specFile, run_dir: c.runDir, step: c.step, steps_total: c.endStep } };
      const where = c.step > 0 ? `Resumed ${c.runDir} at ${kind.row.unit.one} ${c.step}${ready.resumed ?? ''}: call train_${kindId}_step to continue.` : `Nothing trained yet: call train_${kindId}_step.`;
      return { text: `session ready: ${ready.text}. ${where}${note}\nrun directory: ${c.runDir}`, value: ready.value as SessionStarted };
    });
  }

  /** train_<kind>_step: `n` steps (default 1) on the live run, reported in the kind's words. */
  trainRun(kindId: string, a: { num_steps?: number }, signal?: AbortSignal): Promise<ToolResult<StretchReport>> {
    return this.exclusive(`train_${kindId}_step`, async () => {
      const c = this.need();
      if (c.id !== kindId) throw wrongKind(c, kindId);
      const n = a.num_steps ?? 1;
      const unit = c.kind.row.unit;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_${unit.many} must be a whole number ≥ 1 (got ${n})`);
      if (c.kind.agent.refuseWhenDone && c.step >= c.endStep) throw new SessionError(`the run has done all ${c.endStep} ${unit.many} of its spec; call finish, or init_${c.id} again with a larger ${lengthFields(c.kind)} override`);
      const { result, firstStep, lastStep, warnings, note, short } = await this.trainStretch(c, n, signal);
      const r = c.kind.agent.report({ runDir: result.runDir, firstStep, lastStep, stepsTotal: c.endStep, spec: c.spec, warnings });
      return { text: note + r.text + short + cancelNote(result, unit.many), value: r.value as StretchReport };
    });
  }

  /**
   * Advances the live run `n` steps: the editor's watcher follows it and can stop it, progress feeds
   * status(), and a stretch that failed or ran nothing becomes a SessionError. Returns the steps it ran.
   */
  private async trainStretch(c: Current, n: number, signal: AbortSignal | undefined): Promise<{ result: RunResultBase; firstStep: number; lastStep: number; warnings: string[]; note: string; short: string }> {
    const unit = c.kind.row.unit;
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
      throw new SessionError(`the step failed: ${result.error ?? 'unknown error'} (run directory ${result.runDir}; the ${unit.many} written are kept, the next call continues from the last checkpoint)`);
    }
    if (firstStep === undefined) {
      const more = c.kind.agent.refuseWhenDone ? '' : `: the run has done all its ${unit.many}; call finish, or init_${c.id} again with a larger ${lengthFields(c.kind)} override`;
      throw new SessionError(`no ${unit.one} ran (${result.status})${more}; run directory ${result.runDir}`);
    }
    // the run ends before the stretch asked for: say how many ran, not only which
    const ran = lastStep - firstStep + 1;
    const short = ran < n && result.status !== 'cancelled' ? `\nran ${ran} of the ${n} ${unit.many} asked: the run ends at ${c.endStep} ${unit.many}, all done now; call finish, or init_${c.id} with resume and a larger ${lengthFields(c.kind)} override` : '';
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
  sample(a: SampleArgs, signal?: AbortSignal) {
    return this.exclusive('sample', async () => {
      const c = this.need();
      const prompts = samplePrompts(a, this.o.baseDir);
      const { h, note } = await this.live(c);
      return sampleLive(c, h, prompts, a, note, signal);
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
      const f = c.kind.agent.finished?.({ runDir, steps: batch, stepsTotal: c.endStep, spec: c.spec }) ?? {
        text: '',
        value: { report: c.kind.agent.report({ runDir, firstStep: 0, lastStep: batch - 1, stepsTotal: c.endStep, spec: c.spec, warnings: [] }).value },
      };
      const value = { run_dir: runDir, final, steps: batch, ...f.value };
      return { text: `finished ${path.basename(runDir)} after ${batch} ${c.kind.row.unit.many}${f.text}\nfinal sampler: ${final.sampler_path}\nrun directory: ${runDir}`, value };
    });
  }
}

/** The override that makes a run of `kind` longer: `"iterations"`, `"max_steps" or "num_epochs"`. */
function lengthFields(kind: AnyRunKind): string {
  return kind.agent.lengthFields ?? '"max_steps"';
}

/** `init_grpo, init_sft, init_dpo or init_toy`: the init tools of the kinds there are. */
function initToolsText(): string {
  const ids = runKindIds();
  return ids.length > 1 ? `${ids.slice(0, -1).map((k) => `init_${k}`).join(', ')} or init_${ids[ids.length - 1]}` : `init_${ids[0]}`;
}
