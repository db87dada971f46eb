// One stateful training session for agents (an MCP client, VS Code's agent mode): a GRPO run trained
// a few iterations per call, sampled, saved and finished between calls. Every call goes through the
// ordinary machinery — startGrpoRun with `stopAfter`, the run directory, its checkpoints and resume —
// so what an agent trains is a normal run the person can watch, resume or open in the editor.
// One call at a time: a call that arrives while another runs waits up to `busyWaitMs`, then is
// answered "busy" with the status instead of being queued silently.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Problem } from '../data/types';
import { checkpointName, saveCheckpoint } from '../runs/loopRuntime';
import { sampleGroup, scoreGroups, stopParam } from '../grpo/rollout';
import { startGrpoRun } from '../grpo/start';
import type { GrpoEvent, GrpoRunResult } from '../grpo/types';
import { loadRenderer } from '../render';
import type { Message } from '../render/types';
import { createRewardRunner } from '../reward';
import { parseGrpoSpecValue, type ResolvedGrpoSpec } from '../grpo/spec';
import type { BackendChoice } from '../spec/fields';
import { mergeSpec } from '../spec/overrides';
import { parseJsonWithPosition } from '../spec/text';
import { RunWriter } from '../runs/runWriter';
import { parseSftSpecValue, ResolvedSftSpec } from '../sft/spec';
import { startSftRun } from '../sft/start';
import type { ServiceClient, TrainingClient } from '../tinker/client';
import { SftStepReport, StepReport, sftStepReport, sftStepReportText, stepReport, stepReportText } from './report';
import { METRIC } from '../../protocol/metricKeys';
import { errorMessage } from '../errors';

export interface TrainingSessionOptions {
  runsDir: string;
  cacheDir: string;
  /** relative spec and prompt files resolve against this folder (the workspace) */
  baseDir: string;
  python?: string;
  /** opens the backend for a spec; the session closes each client it gets */
  connect: (spec: BackendChoice) => Promise<ServiceClient>;
  /** how long a call waits for the call in progress before answering busy (default 10 s) */
  busyWaitMs?: number;
  /**
   * Called as each train step starts; what it returns follows that stretch of the run (an editor
   * registers it so the person watches it live and can stop it through `signal`).
   */
  watch?: (runName: string, specFile: string) => RunWatcher;
  log?: (line: string) => void;
}

export interface RunWatcher {
  signal?: AbortSignal;
  onEvent(e: GrpoEvent): void;
  onEnd(result: GrpoRunResult): void;
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

/** What every stretch of a session's run is started with (startGrpoRun and startSftRun both take it). */
interface StretchOptions {
  specFile: string;
  runsDir: string;
  cacheDir: string;
  connect: (spec: BackendChoice) => Promise<ServiceClient>;
  resumeDir?: string;
  signal?: AbortSignal;
  onEvent: (e: GrpoEvent) => void;
  log?: (line: string) => void;
}

function cancelNote(result: GrpoRunResult, unit: 'iterations' | 'steps'): string {
  return result.status === 'cancelled' ? `\n(cancelled: the ${unit} finished are kept and a resume point saved)` : '';
}

export interface ToolResult<T> {
  text: string;
  value: T;
}

type Current = ({ kind: 'grpo'; spec: ResolvedGrpoSpec } | { kind: 'sft'; spec: ResolvedSftSpec }) & { specFile: string; runDir?: string };

/** max_tokens when sampling an SFT session (its spec has none); the local engine's models see 64 tokens */
const SFT_SAMPLE_MAX_TOKENS = 64;

const LAST_METRIC_KEYS = [METRIC.trainNll, METRIC.testNll, METRIC.reward, METRIC.testReward, METRIC.fracMixed, METRIC.klV1, METRIC.entropy];

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

  constructor(private readonly o: TrainingSessionOptions) {}

  status(): SessionStatus {
    const c = this.current;
    const p = this.progress;
    return {
      state: this.busy ? 'running' : 'idle',
      ...(this.busy ? { tool: this.busy.tool, elapsed_s: Math.round((Date.now() - this.busy.since) / 100) / 10 } : {}),
      ...(c ? { run_name: c.spec.name, model: c.spec.model, ...(c.runDir ? { run_dir: c.runDir } : {}) } : {}),
      ...(p.step !== undefined ? { step: p.step } : {}),
      ...(p.stepsTotal !== undefined ? { steps_total: p.stepsTotal } : {}),
      ...(this.busy && p.phase ? { phase: p.phase, ...(p.done !== undefined ? { phase_done: p.done } : {}), ...(p.total !== undefined ? { phase_total: p.total } : {}) } : {}),
      ...(p.metrics ? { last_metrics: p.metrics } : {}),
    };
  }

  statusText(): string {
    const s = this.status();
    if (!s.run_name) return s.state === 'running' ? `running ${s.tool}` : 'no session: call init_grpo or init_sft first';
    const where = s.step !== undefined ? `, iteration ${s.step}${s.steps_total !== undefined ? `/${s.steps_total}` : ''}` : '';
    const doing = s.state === 'running' ? `running ${s.tool}${s.phase ? ` (${s.phase}${s.phase_total ? ` ${s.phase_done ?? 0}/${s.phase_total}` : ''})` : ''}, ${s.elapsed_s} s` : 'idle';
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
    let release!: () => void;
    this.busy = { tool, since: Date.now(), done: new Promise<void>((r) => (release = r)) };
    try {
      return await fn();
    } finally {
      this.busy = undefined;
      release();
    }
  }

  private need(): Current {
    if (!this.current) throw new SessionError('no session: call init_grpo or init_sft first');
    return this.current;
  }

  /** Validates a spec (a *.grpo.json file, fields of `overrides` on top) and makes it the session's run. */
  initGrpo(a: { spec_file: string; overrides?: Record<string, unknown> }): Promise<ToolResult<{ run_name: string; model: string; spec_file: string; train_problems: number; holdout_problems: number; iterations: number }>> {
    return this.exclusive('init_grpo', async () => {
      const specFile = path.resolve(this.o.baseDir, a.spec_file);
      const raw = parseJsonWithPosition(readSpecText(specFile), path.basename(specFile));
      const merged = mergeSpec(raw, a.overrides ?? {});
      const { spec } = await parseGrpoSpecValue(merged, specFile);
      // load what a step will need now, so a bad dataset or reward file is reported here
      const { loadPromptPool } = await import('../data/pool');
      const pool = await loadPromptPool(spec.dataset, { specDir: path.dirname(specFile), seed: spec.seed, cacheDir: this.o.cacheDir });
      const reward = await createRewardRunner({ file: spec.reward.file, python: this.o.python, workers: 1, timeoutMs: spec.reward.timeout_ms });
      await reward.close();
      this.current = { kind: 'grpo', spec, specFile };
      this.progress = { stepsTotal: spec.iterations };
      const value = { run_name: spec.name, model: spec.model, spec_file: specFile, train_problems: pool.train.length, holdout_problems: pool.holdout.length, iterations: spec.iterations };
      const text2 = `session ready: ${spec.name} on ${spec.model}, ${spec.groups_per_batch} groups × ${spec.group_size}, lr ${spec.learning_rate ?? 'default'}, up to ${spec.iterations} iterations; ${pool.train.length} train / ${pool.holdout.length} holdout problems; reward ${spec.reward.file}. Nothing trained yet: call train_grpo_step.`;
      return { text: text2, value };
    });
  }

  /** Trains `num_iterations` GRPO iterations (default 1), continuing the session's run directory. */
  trainGrpoStep(a: { num_iterations?: number }, signal?: AbortSignal): Promise<ToolResult<StepReport>> {
    return this.exclusive('train_grpo_step', async () => {
      const c = this.need();
      if (c.kind !== 'grpo') throw new SessionError('the session is an SFT run: call train_sft_step (or init_grpo for a GRPO run)');
      const n = a.num_iterations ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_iterations must be a whole number ≥ 1 (got ${n})`);
      const done = c.runDir ? withRunWriter(c.runDir, (w) => w.lastStateCheckpoint()?.batch ?? 0) : 0;
      if (done >= c.spec.iterations) throw new SessionError(`the run has done all ${c.spec.iterations} iterations of its spec; call finish, or init_grpo again with a larger "iterations" override`);
      const { result, firstStep, lastStep, warnings } = await this.trainStretch(c, 'iterations', signal, (common) =>
        startGrpoRun({ ...common, spec: c.spec, python: this.o.python, stopAfter: n }),
      );
      const report = stepReport({ runDir: result.runDir, firstStep, lastStep, stepsTotal: c.spec.iterations, groupsPerBatch: c.spec.groups_per_batch, rewardErrors: warnings });
      return { text: stepReportText(report) + cancelNote(result, 'iterations'), value: report };
    });
  }

  /** Validates an SFT spec (a *.sft.json file, `overrides` on top) and makes it the session's run. */
  initSft(a: { spec_file: string; overrides?: Record<string, unknown> }): Promise<ToolResult<{ run_name: string; model: string; spec_file: string; train_chats: number; validation_chats: number }>> {
    return this.exclusive('init_sft', async () => {
      const specFile = path.resolve(this.o.baseDir, a.spec_file);
      const raw = parseJsonWithPosition(readSpecText(specFile), path.basename(specFile));
      const { spec } = await parseSftSpecValue(mergeSpec(raw, a.overrides ?? {}), specFile);
      const { loadChats } = await import('../sft/data');
      const chats = await loadChats(spec.dataset, { specDir: path.dirname(specFile), seed: spec.seed, cacheDir: this.o.cacheDir });
      this.current = { kind: 'sft', spec, specFile };
      this.progress = {};
      const value = { run_name: spec.name, model: spec.model, spec_file: specFile, train_chats: chats.train.length, validation_chats: chats.validation.length };
      return {
        text: `session ready: SFT ${spec.name} on ${spec.model}, batch ${spec.batch_size}, lr ${spec.learning_rate ?? 'default'}; ${chats.train.length} train / ${chats.validation.length} validation chats. Nothing trained yet: call train_sft_step.`,
        value,
      };
    });
  }

  /** Trains `num_steps` SFT steps (default 1), continuing the session's run directory. */
  trainSftStep(a: { num_steps?: number }, signal?: AbortSignal): Promise<ToolResult<SftStepReport>> {
    return this.exclusive('train_sft_step', async () => {
      const c = this.need();
      if (c.kind !== 'sft') throw new SessionError('the session is a GRPO run: call train_grpo_step (or init_sft for an SFT run)');
      const n = a.num_steps ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new SessionError(`num_steps must be a whole number ≥ 1 (got ${n})`);
      const { result, firstStep, lastStep } = await this.trainStretch(c, 'steps', signal, (common) =>
        startSftRun({
          ...common,
          spec: c.spec,
          stopAfter: n,
          onEvent: (e) => {
            if (e.type === 'started') this.progress.stepsTotal = e.endStep;
            common.onEvent(e);
          },
        }),
      );
      const report = sftStepReport({ runDir: result.runDir, firstStep, lastStep });
      return { text: sftStepReportText(report) + cancelNote(result, 'steps'), value: report };
    });
  }

  /**
   * Runs one stretch of the session's run through `start` (startGrpoRun or startSftRun with the
   * options every stretch shares): the editor's watcher follows it and can stop it, progress feeds
   * status(), and a run that failed or ran nothing becomes a SessionError. Returns the steps it ran.
   */
  private async trainStretch(
    c: Current,
    unit: 'iterations' | 'steps',
    signal: AbortSignal | undefined,
    start: (common: StretchOptions) => Promise<GrpoRunResult>,
  ): Promise<{ result: GrpoRunResult; firstStep: number; lastStep: number; warnings: string[] }> {
    const warnings: string[] = [];
    let firstStep: number | undefined;
    let lastStep = -1;
    const watcher = this.o.watch?.(c.spec.name, c.specFile);
    const signals = [signal, watcher?.signal].filter((x): x is AbortSignal => x !== undefined);
    const result = await start({
      specFile: c.specFile,
      runsDir: this.o.runsDir,
      cacheDir: this.o.cacheDir,
      connect: this.o.connect,
      ...(c.runDir ? { resumeDir: c.runDir } : {}),
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      onEvent: (e) => {
        if (e.type === 'started') c.runDir = e.runDir;
        if (e.type === 'phase') this.progress = { ...this.progress, step: e.step, phase: e.phase, done: e.done, total: e.total };
        if (e.type === 'metrics') {
          firstStep ??= e.step;
          lastStep = e.step;
          this.progress.metrics = Object.fromEntries(LAST_METRIC_KEYS.filter((k) => e.metrics[k] !== undefined).map((k) => [k, e.metrics[k]!]));
        }
        if (e.type === 'warning') warnings.push(e.message);
        watcher?.onEvent(e);
      },
      ...(this.o.log ? { log: this.o.log } : {}),
    }).catch((err: unknown) => {
      const error = errorMessage(err);
      watcher?.onEnd({ runDir: c.runDir ?? '', status: 'failed', iterationsRun: 0, error });
      throw new SessionError(error);
    });
    watcher?.onEnd(result);
    c.runDir = result.runDir;
    if (firstStep !== undefined) this.progress.step = lastStep + 1;
    if (result.status === 'failed') throw new SessionError(`the step failed: ${result.error ?? 'unknown error'} (run directory ${result.runDir}; the ${unit} written are kept)`);
    if (firstStep === undefined) {
      const more = unit === 'steps' ? ': the run has done all its steps; call finish, or init_sft again with a larger "max_steps" or "num_epochs" override' : '';
      throw new SessionError(`no ${unit === 'steps' ? 'step' : 'iteration'} ran (${result.status})${more}; run directory ${result.runDir}`);
    }
    return { result, firstStep, lastStep, warnings };
  }

  /** The tinker:// sampler path of the current weights (the run's last checkpoint), if any. */
  private currentSamplerPath(c: Current): string | undefined {
    if (!c.runDir) return undefined;
    const recs = withRunWriter(c.runDir, (w) => w.readCheckpoints());
    for (let i = recs.length - 1; i >= 0; i--) if (recs[i]!.sampler_path) return recs[i]!.sampler_path;
    return undefined;
  }

  /**
   * Samples `n` completions of each prompt from the current weights (or `checkpoint`, a tinker://
   * sampler path, or the base model before any step); rewards them when a prompt has a ground truth.
   */
  sample(a: { prompts?: SamplePrompt[]; prompts_file?: string; n?: number; temperature?: number; max_tokens?: number; checkpoint?: string }, signal?: AbortSignal) {
    return this.exclusive('sample', async () => {
      const c = this.need();
      const prompts = [...(a.prompts ?? []), ...(a.prompts_file ? readPromptsFile(path.resolve(this.o.baseDir, a.prompts_file)) : [])];
      if (prompts.length === 0) throw new SessionError('give prompts (a list) or prompts_file (JSONL with "prompt" or "messages", and optionally "ground_truth")');
      const n = a.n ?? 4;
      const { renderer } = await loadRenderer({ model: c.spec.model, renderer: c.spec.renderer, cacheDir: this.o.cacheDir });
      const service = await this.o.connect(c.spec);
      try {
        const modelPath = a.checkpoint ?? this.currentSamplerPath(c);
        if (a.checkpoint !== undefined && !a.checkpoint.startsWith('tinker://')) throw new SessionError(`checkpoint must be a tinker:// sampler path (got "${a.checkpoint}")`);
        const sampler = await service.createSamplingClient(modelPath ? { modelPath } : { baseModel: c.spec.model }, signal);
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
        const groups = await Promise.all(problems.map((p) => sampleGroup(sampler, renderer, p, renderer.buildGenerationPrompt(p.messages), n, params, signal)));
        // an SFT run has no reward function: its samples are shown unscored
        const scorable = grpo !== undefined && prompts.some((p) => p.ground_truth !== undefined);
        let rewards: (number | null)[][] = groups.map((g) => g.rollouts.map(() => null));
        const errors: string[] = [];
        if (scorable) {
          const runner = await createRewardRunner({ file: grpo!.reward.file, python: this.o.python, workers: grpo!.reward.workers, timeoutMs: grpo!.reward.timeout_ms });
          try {
            const scored = await scoreGroups(groups, runner, signal);
            rewards = scored.map((g, gi) => g.rollouts.map((r) => (prompts[gi]!.ground_truth === undefined ? null : r.reward)));
            for (const g of scored) for (const r of g.rollouts) if (r.rewardError && errors.length < 3) errors.push(`${r.rewardError.kind}: ${r.rewardError.message}`);
          } finally {
            await runner.close().catch(() => undefined);
          }
        }
        const value = {
          source: modelPath ?? `base model ${c.spec.model}`,
          results: groups.map((g, gi) => ({
            prompt: prompts[gi]!.prompt ?? g.problem.messages[g.problem.messages.length - 1]?.content ?? '',
            ground_truth: prompts[gi]!.ground_truth ?? null,
            completions: g.rollouts.map((r, k) => ({ text: r.response.message.content, reward: rewards[gi]![k]!, stop_reason: r.stopReason, tokens: r.tokens.length })),
          })),
          reward_errors: errors,
        };
        const lines = [`${n} sample(s) of ${prompts.length} prompt(s) from ${value.source}`];
        for (const r of value.results) {
          const rs = r.completions.map((x) => x.reward).filter((v): v is number => v !== null);
          lines.push(`- ${JSON.stringify(clip(r.prompt, 80))}${rs.length ? ` mean reward ${(rs.reduce((s, v) => s + v, 0) / rs.length).toFixed(3)}` : ''}: ${r.completions.slice(0, 3).map((x) => JSON.stringify(clip(x.text, 80))).join(', ')}${r.completions.length > 3 ? ', …' : ''}`);
        }
        if (errors.length) lines.push(`reward errors: ${errors.join(' | ')}`);
        return { text: lines.join('\n'), value };
      } finally {
        service.close();
      }
    });
  }

  /** A training client on the run's last state (weights and optimizer). */
  private async lastState(c: Current, service: ServiceClient): Promise<{ tc: TrainingClient; batch: number }> {
    const last = c.runDir ? withRunWriter(c.runDir, (w) => w.lastStateCheckpoint()) : undefined;
    if (!c.runDir || !last?.state_path) throw new SessionError('nothing trained yet: call train_grpo_step first');
    const tc = await service.createTrainingClientFromState(last.state_path, { withOptimizer: true });
    return { tc, batch: last.batch ?? 0 };
  }

  /** Saves the current weights (state and sampler) under `name` and records it in checkpoints.jsonl. */
  save(a: { name: string }) {
    return this.exclusive('save', async () => {
      const c = this.need();
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(a.name)) throw new SessionError(`name: letters, digits, ".", "_" and "-" only, at most 64 (got "${a.name}")`);
      const service = await this.o.connect(c.spec);
      try {
        const { tc, batch } = await this.lastState(c, service);
        const record = await saveCheckpoint(tc, a.name, batch, 'both');
        withRunWriter(c.runDir!, (w) => w.appendCheckpoint(record));
        return { text: `saved "${a.name}" at step ${batch}\nstate: ${record.state_path}\nsampler: ${record.sampler_path}`, value: record };
      } finally {
        service.close();
      }
    });
  }

  /** The next step continues from `path` (a tinker:// state path): weights and optimizer. */
  load(a: { path: string }) {
    return this.exclusive('load', async () => {
      const c = this.need();
      if (!a.path.startsWith('tinker://')) throw new SessionError(`path must be a tinker:// state path (got "${a.path}")`);
      const service = await this.o.connect(c.spec);
      try {
        try {
          await service.weightsInfo(a.path);
        } catch (err) {
          throw new SessionError(`unknown checkpoint ${a.path}: ${errorMessage(err)}`);
        }
        if (!c.runDir) {
          // before the first step: start the run from these weights with a fresh optimizer
          c.spec = { ...c.spec, load_checkpoint_path: a.path };
          return { text: `the first step will start from ${a.path} (weights only, fresh optimizer)`, value: { path: a.path, step: 0 } };
        }
        const step = withRunWriter(c.runDir, (w) => {
          const at = w.lastStateCheckpoint()?.batch ?? 0;
          w.appendCheckpoint({ name: `load-${checkpointName(at)}`, batch: at, state_path: a.path });
          return at;
        });
        return { text: `the next step (${step}) continues from ${a.path} (weights and optimizer)`, value: { path: a.path, step } };
      } finally {
        service.close();
      }
    });
  }

  /** Saves the `final` checkpoint and ends the session; returns a summary of the run. */
  finish() {
    return this.exclusive('finish', async () => {
      const c = this.need();
      if (!c.runDir) {
        this.current = undefined;
        return { text: 'session ended; nothing was trained', value: { run_dir: null, final: null, steps: 0 } };
      }
      const service = await this.o.connect(c.spec);
      try {
        const { tc, batch } = await this.lastState(c, service);
        const final = await saveCheckpoint(tc, 'final', batch, 'both');
        withRunWriter(c.runDir, (w) => w.appendCheckpoint(final));
        this.current = undefined;
        this.progress = {};
        if (c.kind === 'sft') {
          const r = sftStepReport({ runDir: c.runDir, firstStep: 0, lastStep: batch - 1 });
          const value = { run_dir: c.runDir, final, steps: batch, train_mean_nll: r.train_mean_nll, test_nll: r.test_nll };
          return { text: `finished ${path.basename(c.runDir)} after ${batch} steps; last validation NLL ${r.test_nll?.toFixed(3) ?? '–'}\nfinal sampler: ${final.sampler_path}\nrun directory: ${c.runDir}`, value };
        }
        const report = stepReport({ runDir: c.runDir, firstStep: 0, lastStep: batch - 1, stepsTotal: c.spec.iterations, groupsPerBatch: c.spec.groups_per_batch, rewardErrors: [] });
        const value = { run_dir: c.runDir, final, steps: batch, reward_mean: report.reward_mean, test_reward: report.test_reward };
        return { text: `finished ${path.basename(value.run_dir)} after ${batch} iterations; mean train reward ${report.reward_mean?.toFixed(3) ?? '–'}${report.test_reward !== null ? `, last holdout ${report.test_reward.toFixed(3)}` : ''}\nfinal sampler: ${final.sampler_path}\nrun directory: ${c.runDir}`, value };
      } finally {
        service.close();
      }
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

/** Opens (and so locks) a run directory for `fn` only: the next train step must be able to lock it. */
function withRunWriter<T>(dir: string, fn: (w: RunWriter) => T): T {
  const w = RunWriter.open(dir);
  try {
    return fn(w);
  } finally {
    w.close();
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
