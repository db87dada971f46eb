// A kind of run as the rest of the product uses it: one descriptor per kind, declared in the kind's
// own folder (grpo/kind.ts, sft/kind.ts, dpo/kind.ts) and found through the table in registry.ts.
// The CLI, the extension's run runner, sweeps, the agent session and Compare Runs look a kind up
// there and call what its descriptor carries; none of them names a kind.
import type * as z from 'zod';
import type { SpecKindInfo } from '../spec/kinds';
import type { RunWriter } from '../runs/runWriter';
import type { RunCore } from '../runs/loopRuntime';
import type { PreparedRun, RunStartOptions } from '../runs/startParts';
import type { RunResultBase } from '../runs/runEvents';
import type { RewardRunner } from '../reward/types';
import type { ResultColumn } from '../../protocol/compareData';
import type { UsageEstimate } from '../cost/estimate';

/**
 * What the product needs of a kind's spec module (a built-in kind's is its defineSpec definition).
 * Its schema takes the fields a sweep sets on every point: `wandb_group`, `wandb_name` and the kind's seedField.
 */
export interface KindSpecModule<S> {
  readonly schema: z.ZodObject;
  /** reads a spec file, validates it, names it and resolves its paths; throws RunSpecError */
  parseFile(file: string): Promise<{ spec: S }>;
  /** validates a spec given as a value, as if it were the file `specFile` */
  parseValue(value: unknown, specFile: string): Promise<{ spec: S }>;
  /** the spec a run directory's config.json records (`file` names it in errors): what a resume continues with */
  fromConfig(config: unknown, file: string): S;
  /** the fields a resume may change (given as overrides); any other difference from the recorded spec is refused */
  readonly resumable: readonly string[];
}

/** The metric keys a run of the kind logs: these keys, and any key that starts with one of the prefixes. */
export interface KindMetrics {
  readonly keys: readonly string[];
  readonly prefixes: readonly string[];
}

/** A prepared run as an agent session holds it: the loop, the renderer and any reward workers. */
export type PreparedKindRun<S, R extends RunResultBase> = PreparedRun<R, RunCore<R>, S, { reward?: RewardRunner }>;

/** The run an agent session has just started (or resumed), as init_<id> reports it. */
export interface KindSessionStart<S> {
  spec: S;
  /** the prepared, opened run object (the kind's own loop class) */
  run: RunCore<RunResultBase>;
  specFile: string;
  runDir: string;
  step: number;
  stepsTotal: number;
}

/** What an agent session shows of a kind when it starts a run, after each stretch of steps, and when it finishes. */
export interface KindAgentWords<S> {
  /** the one-line description of the session's run after init, e.g. `SFT arith on …, batch 8, …` */
  describe(spec: S): string;
  /**
   * init_<id>'s answer: what follows `session ready: ` (default: describe) and the value the tool
   * returns (default: run_name, model, spec_file, run_dir, step, steps_total); `resumed` follows
   * `Resumed <dir> at step N` (e.g. ` (same reference as before)`).
   */
  ready?(o: KindSessionStart<S>): { text: string; value: Record<string, unknown>; resumed?: string };
  /** the stretch's report: text for the agent and the value the tool returns */
  report(o: { runDir: string; firstStep: number; lastStep: number; stepsTotal: number; spec: S; warnings: readonly string[] }): { text: string; value: unknown };
  /** the override that makes a run longer, for "all done" answers: `"max_steps" or "num_epochs"` (default: `"max_steps"`) */
  readonly lengthFields?: string;
  /** a train call on a run that has done all its steps is refused before it connects (default: the stretch runs nothing and says so) */
  readonly refuseWhenDone?: boolean;
  /** how `sample` samples the session's run (default: 64 tokens, temperature 1, the renderer's stop sequences); `unscored` is said under the samples */
  sampling?(spec: S): { maxTokens?: number; temperature?: number; stop?: string[]; unscored?: string };
  /**
   * finish's words after `finished <run> after N steps` (e.g. `; last validation NLL 0.8`), and what the
   * tool's value adds to run_dir, final and steps (default: nothing, and the whole run's report as `report`)
   */
  finished?(o: { runDir: string; steps: number; stepsTotal: number; spec: S }): { text: string; value: Record<string, unknown> };
}

export interface RunKind<S, R extends RunResultBase> {
  /** the kind's row of the static table (src/core/spec/kinds.ts): id, label, extension, unit, … */
  readonly row: SpecKindInfo;
  /** its spec module, loaded on first use */
  spec(): Promise<KindSpecModule<S>>;
  /** starts a run of a spec, or resumes `resumeDir`, to its end (see RunStartOptions) */
  start(o: RunStartOptions<S>): Promise<R>;
  /** everything start does before the loop: the session of an agent advances the run a few steps per call */
  prepare(o: RunStartOptions<S>, resume: RunWriter | undefined, writers: RunWriter[]): Promise<PreparedKindRun<S, R>>;
  /** whether a run of this spec executes the workspace's code (reward, environment or grader files): Python, and never in an untrusted workspace */
  runsWorkspaceCode(spec: S): boolean;
  /** the metrics a run of this spec logs (a sweep's metric is checked against them before any run starts) */
  metrics(spec: S): KindMetrics;
  /** the spec field a sweep's `seeds` set */
  readonly seedField: string;
  /** how the run went, for the end-of-run message: `; train NLL 1.2 → 0.8` (empty when nothing was measured) */
  outcome(r: R): string;
  /** what the CLI prints when a run ends, before its status line */
  cliReport(r: R): string;
  /** the Compare Runs result columns of the kind, in table order (the steps, wall time and tokens columns are every kind's) */
  readonly compareColumns: readonly ResultColumn[];
  /** the agent tools' words for the kind (init_<id>, train_<id>_step) */
  readonly agent: KindAgentWords<S>;
  /** the editor's hints on a spec of the kind (kinds/hints.ts); none when left out */
  readonly specHints?: KindSpecHints;
  /** the tokens a whole run of this spec implies, before it starts (kinds/estimate.ts prices them); none: no estimate */
  estimate?(spec: S, o: KindEstimateOptions): Promise<UsageEstimate>;
}

/** What a kind's estimate reads its dataset with. */
export interface KindEstimateOptions {
  /** folder of the spec file (a resolved spec's paths are absolute already) */
  specDir: string;
  /** tokenizer and Hugging Face cache */
  cacheDir: string;
  signal?: AbortSignal;
}

/** Which of the editor's hints apply to a kind's specs. */
export interface KindSpecHints {
  /** the learning rate against get_lr's recommendation (calibrated for SFT and the GRPO recipes) */
  readonly learningRate?: boolean;
  /** the LoRA capacity against the completion tokens of the spec's chats dataset (`dataset.path`) */
  readonly loraCapacity?: boolean;
}

/** A kind as the table holds it: its spec and result types erased. */
export type AnyRunKind = RunKind<unknown, RunResultBase>;

/**
 * A kind's descriptor as the table holds it. The one place a kind's spec type is erased: every spec
 * that reaches the kind's functions was read or validated by that kind's own spec module (spec()).
 */
export function defineKind<S, R extends RunResultBase>(kind: RunKind<S, R>): AnyRunKind {
  return kind as unknown as AnyRunKind;
}

/** Whether a run with these metrics logs `name`. */
export function logsMetric(m: KindMetrics, name: string): boolean {
  return m.keys.includes(name) || m.prefixes.some((p) => name.startsWith(p));
}

/** `train_mean_nll, test/nll and any key under time/, progress/`: the metrics, for messages. */
export function metricsText(m: KindMetrics): string {
  const under = m.prefixes.length ? `any key starting with ${m.prefixes.map((p) => `"${p}"`).join(', ')}` : '';
  return [m.keys.join(', '), under].filter((x) => x !== '').join('; and ');
}
