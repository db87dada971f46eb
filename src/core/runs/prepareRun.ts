// The one start sequence of every kind: the spec (given, from its file, or from a resumed run), the
// answer for a finished run, the resume point, the learning rate, the renderer, the kind's data, the
// kind's workers, the connection, what needs the connection (teachers), the run directory and its
// tracking, then the kind's loop. A kind passes its own parts (a KindStarter); the order, the logging
// and the closing of what was opened are the same for all.
import * as path from 'node:path';
import { loadRenderer } from '../render';
import type { Renderer } from '../render/types';
import type { ServiceClient } from '../tinker/client';
import type { BackendChoice } from '../spec/fields';
import type { RunWriter } from './runWriter';
import type { PriceTable } from '../cost/prices';
import type { RunCore } from './loopRuntime';
import type { RunResultBase } from './runEvents';
import { trackRun } from './runTracking';
import { recordRunSession } from './runSessions';
import { resumePoint } from './resumePoint';
import type { CheckpointRecord } from './runDirectory';
import type { Budget } from '../cost/budget';
import { UsageMeter } from '../tinker/usage';
import { PRICES_CONFIG_KEY, budgetOf, pricesInForce } from './runCost';
import { completedRun, resolveRunSpec, runToEnd, runWriterFor, type PreparedRun, type RunStartOptions } from './startParts';

/** The spec fields the start sequence reads (every kind's spec has them). */
export type StartableSpec = BackendChoice & Budget & { name: string; model: string; renderer?: string | undefined; lora_rank: number };

/** What a kind's parts get: the options, the spec, where it lives, the renderer and the learning rate. */
export interface StartContext<S> {
  readonly o: RunStartOptions<S>;
  readonly spec: S;
  readonly resume: RunWriter | undefined;
  /** the spec file's folder (dataset and worker paths are relative to it) */
  readonly specDir: string;
  readonly renderer: Renderer;
  readonly learningRate: number;
  readonly log: (line: string) => void;
  /** `close` runs when the run ends or its start fails; the last held is closed first */
  hold(close: () => Promise<void> | void): void;
}

/** A kind's own parts of the start sequence. `D` is what the kind carries from one part to the next. */
export interface KindStarter<S extends StartableSpec, R extends RunResultBase, Run extends RunCore<R>, D, Held extends object = object> {
  /** the kinds table's id (a finished run's answer, tracking) */
  readonly kind: R['kind'];
  /** the start function's name, for the error when there is no spec */
  readonly starter: string;
  /** how the kind's spec is read from a file and from a run's config.json, and what a resume may change */
  readonly read: Parameters<typeof resolveRunSpec<S>>[2];
  /** the run's length, for a finished run whose final checkpoint does not record its step */
  steps?(spec: S): number;
  learningRate(spec: S): number;
  /** the kind's data, its skipped lines logged; `sizes` and `note` go into the summary line */
  load(c: StartContext<S>): Promise<{ data: D; sizes: string; note?: string }>;
  /** what the kind starts before connecting (workers, evaluators), each handed to c.hold */
  open?(c: StartContext<S>, data: D): Promise<D>;
  /** what needs the connection, before the run directory exists (a problem leaves nothing behind) */
  connected?(c: StartContext<S>, service: ServiceClient, data: D): Promise<D>;
  /** the kind's fields of a new run's config.json */
  config(data: D): Record<string, unknown>;
  /** the kind's loop over the run directory */
  run(c: StartContext<S>, data: D, parts: { service: ServiceClient; writer: RunWriter; resumeFrom: CheckpointRecord | undefined }): Run;
  /** what the prepared run carries besides the loop (GRPO: its reward workers, for the agent session) */
  held?(data: D): Held;
}

/** Everything a kind's start does before the loop: the session of an agent advances the run a few steps per call. */
export async function prepareRun<S extends StartableSpec, R extends RunResultBase, Run extends RunCore<R>, D, Held extends object = object>(
  kind: KindStarter<S, R, Run, D, Held>,
  o: RunStartOptions<S>,
  resume: RunWriter | undefined,
  writers: RunWriter[],
): Promise<PreparedRun<R, Run, S, Held>> {
  const log = o.log ?? (() => undefined);
  const specFile = o.specFile ? path.resolve(o.specFile) : undefined;
  const spec = await resolveRunSpec<S>(o, resume, kind.read, kind.starter);
  const done = completedRun(kind.kind, resume, { log, onEvent: o.onEvent }, kind.steps?.(spec));
  if (done) return { done: done as R };
  const resumeFrom = resumePoint(resume, log);

  const learningRate = kind.learningRate(spec);
  const { renderer, warnings } = await loadRenderer({ model: spec.model, renderer: spec.renderer, cacheDir: o.cacheDir, ...(o.network ? { network: o.network } : {}) });
  for (const w of warnings) log(`warning: ${w}`);
  const specDir = specFile ? path.dirname(specFile) : resume?.dir ?? process.cwd();
  const held: Array<() => Promise<void> | void> = [];
  const c: StartContext<S> = { o, spec, resume, specDir, renderer, learningRate, log, hold: (close) => void held.push(close) };
  const loaded = await kind.load(c);
  log(`${loaded.sizes}; renderer ${renderer.name}; lr ${learningRate}${loaded.note ? `; ${loaded.note}` : ''}`);

  const close = async () => {
    while (held.length > 0) await held.pop()!();
  };
  try {
    let data = kind.open ? await kind.open(c, loaded.data) : loaded.data;
    const service = await o.connect(spec);
    // the tracker finishes last and the service closes after the kind's workers
    held.splice(0, 0, () => service.close());
    // the run's meter, before its teachers and references are made: they count into it too
    service.usage ??= new UsageMeter();
    if (kind.connected) data = await kind.connected(c, service, data);
    const prices = recordPrices(resume, o.prices, log);
    const writer = runWriterFor({ resume, writers, runsDir: o.runsDir, specFile, runDir: o.runDir, configExtra: o.configExtra }, spec, { rendererName: renderer.name, learningRate, ...kind.config(data), [PRICES_CONFIG_KEY]: prices });
    // the service bills by session: each start and resume records its own (the Usage command reads them)
    if (service.sessionId) recordRunSession(writer.dir, { session_id: service.sessionId, started_at: new Date().toISOString(), base_url: service.transport.baseUrl });
    const tracked = trackRun(o.tracking, writer, spec, { kind: kind.kind, model: spec.model, renderer: renderer.name, backend: spec.backend, lora_rank: spec.lora_rank, learning_rate: learningRate }, log);
    if (tracked) held.splice(0, 0, () => tracked.finish());
    const run = kind.run(c, data, { service, writer, resumeFrom });
    run.setCostTerms({ prices, budget: budgetOf(spec), ...(o.budgetGate ? { gate: o.budgetGate } : {}) });
    return { run, spec, renderer, close, ...(kind.held?.(data) ?? ({} as Held)) };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Starts a run of the kind (or resumes `o.resumeDir`) and advances it to its end (see runToEnd). */
export function startRun<S extends StartableSpec, R extends RunResultBase, Run extends RunCore<R>, D, Held extends object = object>(kind: KindStarter<S, R, Run, D, Held>, o: RunStartOptions<S>): Promise<R> {
  return runToEnd<R>(o.resumeDir, (resume, writers) => prepareRun(kind, o, resume, writers), o);
}

/** The price table a run uses; a resumed run whose table changed records the new one in config.json, and says so. */
function recordPrices(resume: RunWriter | undefined, given: PriceTable | undefined, log: (line: string) => void): PriceTable {
  const config = resume?.readConfig();
  const prices = pricesInForce(given, config);
  if (resume && config && JSON.stringify(config[PRICES_CONFIG_KEY]) !== JSON.stringify(prices)) {
    resume.writeConfig({ ...config, [PRICES_CONFIG_KEY]: prices });
    if (config[PRICES_CONFIG_KEY] !== undefined) log(`the price table changed since the run's last start (now taken ${prices.taken}); the steps from here are estimated with it (recorded in config.json)`);
  }
  return prices;
}
