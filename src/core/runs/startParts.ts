// What startGrpoRun, startSftRun and startDpoRun share before their loops differ: holding the run
// directory's lock for exactly the call, the spec (given, from its file, or from a resumed run's
// config.json), the answer for a finished run, the learning rate a spec leaves out, the
// skipped-lines summary and the config.json written for a new run.
import * as path from 'node:path';
import { getLr } from '../render/modelInfo';
import { RunWriter } from './runWriter';
import type { RunCore } from './loopRuntime';
import type { RunEvent, RunResultBase } from './runEvents';
import type { RunTrackingOptions } from './runTracking';
import type { BackendChoice } from '../spec/fields';
import type { ServiceClient } from '../tinker/client';
import type { NetworkOptions } from '../tinker/proxy';
import type { Renderer } from '../render/types';
import { errorMessage } from '../errors';
import type { PriceTable } from '../cost/prices';
import type { BudgetGate } from '../cost/sharedBudget';
import { changesText, resumedSpec } from '../spec/resume';

/** How every kind's run is started or resumed (the CLI, the extension, sweeps and the agent session pass this). */
export interface RunStartOptions<S> {
  /** a spec file of the kind … */
  specFile?: string;
  /** … or a spec already parsed (paths absolute; with specFile, the spec read from it, so it is not parsed again) */
  spec?: S;
  /** the run directory is created here: <name>-YYYYMMDD-HHMMSS */
  runsDir: string;
  /** create the run directory at exactly this path (a sweep's point) instead of `<runsDir>/<name>-<time>` */
  runDir?: string;
  /** more fields for config.json (a sweep's point: `sweep`) */
  configExtra?: Record<string, unknown>;
  /** opens the backend the spec names (the caller owns engines and keys; the client is closed when the run ends) */
  connect: (spec: BackendChoice) => Promise<ServiceClient>;
  /** tokenizer files, Hugging Face dataset pages */
  cacheDir: string;
  /** how the Hugging Face hub and datasets-server are reached (proxy …); default: the environment */
  network?: NetworkOptions;
  /** interpreter for the workspace's Python (reward, environment and grader files; default python3) */
  python?: string;
  /** environment variables passed to reward and environment workers besides the built-in allowlist */
  rewardEnvironment?: readonly string[];
  /** an existing run directory to resume (spec from its config.json unless specFile/spec is given) */
  resumeDir?: string;
  /** cancel: the run stops cleanly, status 'cancelled' */
  signal?: AbortSignal;
  onEvent?: (e: RunEvent) => void;
  /** human-readable progress lines (no secrets) */
  log?: (line: string) => void;
  /** experiment tracking (W&B): the host's tracker factory and warning */
  tracking?: RunTrackingOptions;
  /** the price table in force (the tinker.prices setting or --prices over the defaults); default: a resumed run's recorded one, else the defaults */
  prices?: PriceTable;
  /** a budget shared with other runs (a sweep's), asked before each step after the run's own; `run` names this run to it */
  budgetGate?: { run: string; gate: BudgetGate };
}

/** A run ready to advance (its service client connected, its workers started), or the answer for a finished one. */
export type PreparedRun<R extends RunResultBase, Run extends RunCore<R> = RunCore<R>, S = unknown, Held = object> =
  | { done: R; run?: undefined }
  | ({ done?: undefined; run: Run; spec: S; renderer: Renderer; close(): Promise<void> } & Held);

/** Runs `body` with the resume directory (if any) locked; every writer `body` adds is closed after. */
export async function withRunWriters<T>(resumeDir: string | undefined, body: (resume: RunWriter | undefined, writers: RunWriter[]) => Promise<T>): Promise<T> {
  // the lock is taken first, so a run another process is writing is refused before any work
  const resume = resumeDir ? RunWriter.open(resumeDir) : undefined;
  const writers: RunWriter[] = resume ? [resume] : [];
  try {
    return await body(resume, writers);
  } finally {
    for (const w of writers) w.close();
  }
}

/**
 * The one-call run both start functions are: with the resume directory locked, `prepare` the run
 * (or learn it is finished), advance it to the end (`final`, or a resume point on cancel), close it.
 */
export function runToEnd<R extends RunResultBase>(
  resumeDir: string | undefined,
  prepare: (resume: RunWriter | undefined, writers: RunWriter[]) => Promise<{ done: R; run?: undefined } | { done?: undefined; run: RunCore<R>; close(): Promise<void> }>,
  o: { signal?: AbortSignal | undefined; onEvent?: ((e: RunEvent) => void) | undefined },
): Promise<R> {
  return withRunWriters(resumeDir, async (resume, writers) => {
    const p = await prepare(resume, writers);
    if (p.run === undefined) return p.done;
    try {
      return await p.run.advance(undefined, { signal: o.signal, onEvent: o.onEvent, toEnd: true });
    } finally {
      await p.close();
    }
  });
}

/**
 * The run's spec: `o.spec` as given, else parsed from `o.specFile`, else (resuming) rebuilt from the
 * run directory's config.json. A resumed run continues with its recorded spec: a given one may change
 * only `read.resumable` (each change is logged and recorded in config.json), any other difference is
 * refused (spec/resume.ts). `starter` names the function in the error when there is none of them.
 */
export async function resolveRunSpec<S extends object>(
  o: { spec?: S | undefined; specFile?: string | undefined; log?: ((line: string) => void) | undefined },
  resume: RunWriter | undefined,
  read: { file(specFile: string): Promise<{ spec: S }>; config(config: unknown, where: string): S; resumable: readonly string[] },
  starter: string,
): Promise<S> {
  const given = o.spec ?? (o.specFile ? (await read.file(path.resolve(o.specFile))).spec : undefined);
  if (!resume) {
    if (given) return given;
    throw new Error(`${starter} needs a specFile, a spec or a resumeDir`);
  }
  const where = path.join(resume.dir, 'config.json');
  const config = resume.readConfig();
  const recorded = read.config(config, where);
  if (!given) return recorded;
  const { spec, changes } = resumedSpec(recorded, given, read.resumable, where);
  if (changes.length > 0) {
    const at = resume.lastStateCheckpoint()?.batch ?? 0;
    // config.json says what the run continues with; `resumes` keeps what each resume changed
    const previous = Array.isArray(config.resumes) ? (config.resumes as unknown[]) : [];
    const record = { at: new Date().toISOString(), step: at, changed: Object.fromEntries(changes.map((c) => [c.field, { recorded: c.recorded ?? null, given: c.given ?? null }])) };
    resume.writeConfig({ ...config, ...Object.fromEntries(changes.map((c) => [c.field, c.given])), resumes: [...previous, record] });
    const line = `resuming at step ${at} with ${changesText(changes)} (recorded in config.json)`;
    o.log?.(line);
    resume.appendLog(`${new Date().toISOString()} ${line}`);
  }
  return spec;
}

/**
 * The answer for a resumed run that already ended (its last state checkpoint is `final`): logged,
 * announced as a finished event, nothing run; undefined for any other run. `steps`: the run's length,
 * for the last step when the checkpoint does not record its batch.
 */
export function completedRun<K extends string>(
  kind: K,
  resume: RunWriter | undefined,
  o: { log?: ((line: string) => void) | undefined; onEvent?: ((e: RunEvent) => void) | undefined },
  steps = 0,
): (RunResultBase & { kind: K }) | undefined {
  const last = resume?.lastStateCheckpoint();
  if (!resume || last?.name !== 'final') return undefined;
  o.log?.(`${resume.dir} is complete (it has a final checkpoint); nothing to resume`);
  o.onEvent?.({ type: 'finished', runDir: resume.dir, status: 'completed', lastStep: (last.batch ?? steps) - 1 });
  return { kind, runDir: resume.dir, status: 'completed', iterationsRun: 0 };
}

/** The spec's learning rate, or the model's recommended one (getLr); throws naming the setting. */
export function resolveLearningRate(spec: { learning_rate?: number | undefined; model: string }): number {
  if (spec.learning_rate !== undefined) return spec.learning_rate;
  try {
    return getLr(spec.model);
  } catch (err) {
    throw new Error(`no learning_rate in the spec and none known for ${spec.model} (${errorMessage(err)}); set "learning_rate"`);
  }
}

/** Logs the first five skipped dataset lines and how many more there were. */
export function logSkipped(skipped: ReadonlyArray<{ where: string; reason: string }>, log: (line: string) => void): void {
  for (const s of skipped.slice(0, 5)) log(`skipped ${s.where}: ${s.reason}`);
  if (skipped.length > 5) log(`… ${skipped.length - 5} more lines skipped`);
}

/** The writer of a new run (its config.json written) or the resumed one. */
export function runWriterFor(
  o: { resume: RunWriter | undefined; writers: RunWriter[]; runsDir: string; specFile: string | undefined; runDir?: string | undefined; configExtra?: Record<string, unknown> | undefined },
  spec: { name: string; model: string },
  extra: { rendererName: string; learningRate: number; [key: string]: unknown },
): RunWriter {
  if (o.resume) return o.resume;
  const writer = o.runDir ? RunWriter.createAt(o.runDir) : RunWriter.create(o.runsDir, spec.name);
  o.writers.push(writer);
  const { rendererName, learningRate, ...rest } = extra;
  writer.writeConfig({
    ...spec,
    ...rest,
    renderer: rendererName,
    learning_rate: learningRate,
    model_name: spec.model,
    renderer_name: rendererName,
    log_path: writer.dir,
    ...(o.specFile ? { spec_file: o.specFile } : {}),
    created_at: new Date().toISOString(),
    ...o.configExtra,
  });
  return writer;
}
