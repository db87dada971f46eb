// A Tracker that logs a run to Weights & Biases through @wandb/sdk, run in a child process
// (wandbLogger.ts) fed over the IPC channel. Never hurts training: start/log only queue and return;
// a slow, unreachable, refusing (4xx/5xx, bad key) or crashed logger gives ONE warning, the rows stay
// in a bounded buffer (the oldest dropped with a count when full) and a new logger is started in the
// background (resuming the same W&B run by its id); finish waits at most `finishTimeoutMs` (30 s).
import { ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import { errorMessage } from '../errors';
import type { Tracker, TrackerEvents, TrackerReport, TrackerStart } from './tracker';
import { FromLogger, type ToLogger, type WandbInit } from './wandbMessages';

/** The W&B fields of a spec (the cookbook's names). */
export interface WandbFields {
  wandb_project?: string;
  wandb_name?: string;
  wandb_entity?: string;
  wandb_group?: string;
  wandb_tags?: string[];
  wandb_notes?: string;
}

export interface WandbTrackerOptions {
  fields: WandbFields & { wandb_project: string };
  /** the W&B API key (SecretStorage or WANDB_API_KEY); sent to the configured host only */
  apiKey: string;
  /** WANDB_BASE_URL or the tinker.wandb.baseUrl setting; W&B's cloud without */
  baseUrl?: string;
  /** the environment the WANDB_* variables are taken from (nothing else reaches the logger) */
  env?: NodeJS.ProcessEnv;
  events?: TrackerEvents;
  finishTimeoutMs?: number;
  /** how long W&B may take to answer the start before the one warning */
  answerTimeoutMs?: number;
  retryDelayMs?: number;
  bufferLimit?: number;
  /** the logger script; default wandbLogger.js next to this module (dist/ or out/) */
  loggerScript?: string;
}

interface Pending {
  seq: number;
  step: number;
  row: Record<string, number>;
}

export const WANDB_FINISH_TIMEOUT_MS = 30_000;

/** The environment the logger child gets: the WANDB_* variables (minus WANDB_API_KEY, given apart) and the key; never TINKER_*. */
export function loggerEnv(env: NodeJS.ProcessEnv, apiKey: string, baseUrl: string | undefined): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith('WANDB_') && v !== undefined) out[k] = v;
  // the SDK's worker-thread mode loads a file by path that a bundle does not have
  delete out.WANDB_WORKER;
  out.WANDB_API_KEY = apiKey;
  if (baseUrl) out.WANDB_BASE_URL = baseUrl;
  // inside the extension host process.execPath is Electron: run the logger as plain node
  out.ELECTRON_RUN_AS_NODE = '1';
  return out;
}

export class WandbTracker implements Tracker {
  private child: ChildProcess | undefined;
  private started: TrackerStart | undefined;
  private buffer: Pending[] = [];
  private seq = 0;
  private rows = 0;
  private logged = 0;
  private dropped = 0;
  private lastStep: number | undefined;
  private url: string | undefined;
  private answered = false;
  private warned = false;
  private finishing = false;
  private finishedOk = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private answerTimer: NodeJS.Timeout | undefined;
  private onFinished: (() => void) | undefined;
  private readonly script: string;

  constructor(private readonly o: WandbTrackerOptions) {
    this.script = o.loggerScript ?? path.join(__dirname, 'wandbLogger.js');
  }

  start(start: TrackerStart): void {
    this.started = start;
    this.spawn(start.resume);
  }

  log(step: number, row: Readonly<Record<string, number>>): void {
    const p: Pending = { seq: this.seq++, step, row: finiteOnly(row) };
    this.rows++;
    this.lastStep = step;
    this.buffer.push(p);
    const limit = this.o.bufferLimit ?? 10_000;
    while (this.buffer.length > limit) {
      this.buffer.shift();
      this.dropped++;
    }
    this.post({ type: 'log', seq: p.seq, step: p.step, row: p.row });
  }

  async finish(summary: Readonly<Record<string, unknown>>): Promise<TrackerReport> {
    this.finishing = true;
    clearTimeout(this.retryTimer);
    const timeout = this.o.finishTimeoutMs ?? WANDB_FINISH_TIMEOUT_MS;
    // a logger that died and waits for its retry: give it one last chance now
    if (!this.child && this.started) this.spawn(true);
    const done = new Promise<void>((resolve) => (this.onFinished = resolve));
    this.post({ type: 'finish', step: this.lastStep, summary: { ...summary } });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout)))]);
    clearTimeout(timer);
    clearTimeout(this.answerTimer);
    const sent = this.finishedOk ? this.logged : 0;
    if (!this.finishedOk) this.warn(`W&B did not finish within ${Math.round(timeout / 1000)} s; the rows not sent are lost for W&B (metrics.jsonl has them all)`);
    this.stopChild();
    const line = `W&B: ${sent} of ${this.rows} rows sent${this.dropped ? ` (${this.dropped} dropped from a full buffer)` : ''}${this.url ? ` — ${this.url}` : ''}`;
    this.o.events?.log?.(line);
    return { rows: this.rows, sent, dropped: this.dropped, url: this.url, line };
  }

  private spawn(resume: boolean): void {
    const start = this.started;
    if (!start) return;
    const f = this.o.fields;
    const init: WandbInit = {
      id: start.id,
      project: f.wandb_project,
      entity: f.wandb_entity,
      name: f.wandb_name,
      group: f.wandb_group,
      tags: f.wandb_tags,
      notes: f.wandb_notes,
      resume,
      config: start.config,
    };
    let child: ChildProcess;
    try {
      child = fork(this.script, [], {
        env: loggerEnv(this.o.env ?? process.env, this.o.apiKey, this.o.baseUrl),
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        // its own process group: a terminal's Ctrl-C goes to the CLI, which decides
        detached: true,
        serialization: 'json',
      });
    } catch (err) {
      return this.failed(`the W&B logger could not start: ${errorMessage(err)}`);
    }
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.on('message', (raw) => this.received(child, raw));
    child.on('error', (err) => this.childGone(child, errorMessage(err)));
    child.on('exit', (code, signal) => this.childGone(child, `the W&B logger exited (${signal ?? `code ${code}`})${stderr.trim() ? `: ${lastLine(stderr)}` : ''}`));
    child.unref();
    // the IPC channel keeps the parent alive unless unref'd: a CLI run must be able to end
    (child as unknown as { channel?: { unref(): void } }).channel?.unref();
    this.post({ type: 'init', init });
    for (const p of this.buffer) this.post({ type: 'log', seq: p.seq, step: p.step, row: p.row });
    if (this.finishing) this.post({ type: 'finish', step: this.lastStep, summary: {} });
    clearTimeout(this.answerTimer);
    if (!this.answered) {
      this.answerTimer = setTimeout(() => {
        if (!this.answered) this.warn(`W&B has not answered for ${(this.o.answerTimeoutMs ?? 60_000) / 1000} s (${this.o.baseUrl ?? 'https://api.wandb.ai'})`);
      }, this.o.answerTimeoutMs ?? 60_000);
      this.answerTimer.unref();
    }
  }

  private received(child: ChildProcess, raw: unknown): void {
    if (child !== this.child) return;
    const parsed = FromLogger.safeParse(raw);
    if (!parsed.success) return this.failed(`the W&B logger sent a message that is not understood: ${parsed.error.issues[0]?.message ?? ''}`);
    const m = parsed.data;
    if (m.type === 'started') {
      this.answered = true;
      clearTimeout(this.answerTimer);
      if (!this.url) {
        this.url = m.url;
        this.o.events?.onUrl?.(m.url);
      }
    } else if (m.type === 'logged') {
      const before = this.buffer.length;
      this.buffer = this.buffer.filter((p) => p.seq > m.seq);
      this.logged += before - this.buffer.length;
    } else if (m.type === 'error') {
      this.failed(m.reason);
    } else {
      this.finishedOk = true;
      this.onFinished?.();
    }
  }

  private childGone(child: ChildProcess, reason: string): void {
    if (child !== this.child) return;
    this.child = undefined;
    if (this.finishedOk) return;
    this.failed(reason);
  }

  private failed(reason: string): void {
    this.warn(reason);
    this.stopChild();
    if (this.finishing) {
      this.onFinished?.();
      return;
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      if (!this.child && !this.finishing) this.spawn(true);
    }, this.o.retryDelayMs ?? 15_000);
    this.retryTimer.unref();
  }

  private warn(reason: string): void {
    if (this.warned) return;
    this.warned = true;
    const message = `W&B logging is failing: ${redact(reason, this.o.apiKey)}. Training goes on and metrics.jsonl keeps every row; the rows are kept and retried in the background. Check the W&B key ("Tinker: Set W&B API Key" or WANDB_API_KEY), the host (${this.o.baseUrl ?? 'https://api.wandb.ai'}) and your network.`;
    this.o.events?.log?.(message);
    this.o.events?.onWarning?.(message);
  }

  private post(msg: ToLogger): void {
    const child = this.child;
    if (!child?.connected) return;
    try {
      child.send(msg, (err) => {
        if (err) this.childGone(child, `the W&B logger stopped reading: ${errorMessage(err)}`);
      });
    } catch (err) {
      this.childGone(child, errorMessage(err));
    }
  }

  private stopChild(): void {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

function finiteOnly(row: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(row)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  return out;
}

function lastLine(s: string): string {
  const lines = s.trim().split('\n');
  return lines[lines.length - 1].slice(0, 300);
}

function redact(s: string, key: string): string {
  return key ? s.split(key).join('***') : s;
}
