// What the engine server's route groups share: the live sessions, training models and samplers, the
// futures, the on-disk store, and the lookups that turn a missing one into the protocol's error.
import { createHash } from 'node:crypto';
import type { ComputeBackend } from '../contract';
import { FutureError, FutureResult, FutureStore } from './futures';
import { HttpError, Reply } from './http';
import { parseTinkerPath } from '../../core/tinker/tinkerPath';
import { EngineStore, RunRecord } from './store';
import { ServiceSimulationInput, ServiceSimulator } from './simulation';
import { errorMessage } from '../../core/errors';

/** How the engine's server is started (startEngineServer): the state its routes share keeps them. */
export interface EngineServerOptions {
  port?: number;
  host?: string;
  dataDir: string;
  backend: ComputeBackend;
  /** sessions without a heartbeat for this long are expired and their models released (default 300 s) */
  sessionTimeoutMs?: number;
  /** how long retrieve_future holds a pending request before answering try_again (default 20 s) */
  longPollMs?: number;
  /** answer a timed-out long poll with 408 (SkyRL's way) instead of 200 try_again */
  longPollTimeoutStatus?: 200 | 408;
  /** how long an archive download link works (default 15 minutes) */
  archiveLinkTtlMs?: number;
  /** advertise zstd-compressed forward_backward bodies (only honoured when this Node has zstd) */
  compressForwardBackward?: boolean;
  /** extra fields for client/config, e.g. a smaller fwdbwd_max_chunk_len to exercise chunking */
  clientConfig?: Record<string, unknown>;
  log?: (line: string) => void;
  /** the per-launch token every request must carry as its API key (X-API-Key); none: no check */
  apiKey?: string;
  /** further Host values (`name:port`) to answer, when the engine is reached through a TLS front under another name */
  allowedHosts?: string[];
  /** tests and demos only: the service's queue pauses and refusals on a schedule (simulation.ts) */
  serviceSimulation?: ServiceSimulationInput;
}

export interface Session {
  id: string;
  lastSeen: number;
  /** model_seq_id → the create request (a replay with the same body gets the same future) */
  modelSeq: Map<number, { hash: string; requestId: string }>;
  /** sampling_session_seq_id → the create request (a replay with the same body gets the same sampler) */
  samplingSeq: Map<number, { hash: string; ready: Promise<void> }>;
  models: Set<string>;
  samplers: Set<string>;
  /** the project_id the session was created with */
  projectId?: string;
}

export interface Job {
  type: string;
  requestId: string;
  hash: string;
  run: () => Promise<FutureResult>;
}

/** Per training model: the next seq_id to apply, jobs waiting for their turn, and what was submitted. */
export interface ModelState {
  id: string;
  sessionId: string;
  baseModel: string;
  nextSeq: number;
  waiting: Map<number, Job>;
  submitted: Map<number, { hash: string; requestId: string; type: string }>;
  pumping: boolean;
  released: boolean;
  /** the unload request, so that a replayed unload gets the same future */
  unloadRequestId?: string;
}

export interface SamplerState {
  baseModel: string;
  modelPath: string | null;
  sessionId: string | null;
}

export const api = (p: string) => `/api/v1/${p}`;

export const hashOf = (type: string, bytes: Buffer) => createHash('sha256').update(type).update(bytes).digest('hex');

export const future = (id: string, model_id?: string): Reply => ({ json: model_id ? { request_id: id, model_id } : { request_id: id } });

export class EngineState {
  readonly futures = new FutureStore();
  readonly backend: ComputeBackend;
  readonly log: (line: string) => void;
  readonly sessions = new Map<string, Session>();
  readonly models = new Map<string, ModelState>();
  readonly samplers = new Map<string, SamplerState>();
  // Samplers of `direct:` requests belong to no session: released once idle for the session timeout.
  readonly directSamplers = new Map<string, { lastUsed: number; active: number }>();
  readonly baseModels: Map<string, ReturnType<ComputeBackend['listBaseModels']>[number]>;
  /** how long retrieve_future holds a pending request */
  readonly longPollMs: number;
  readonly sessionTimeoutMs: number;
  /** the server's own address, known once it listens (archive links point at it) */
  url = '';
  // Work started by requests (training jobs, model creation, sampling). close() stops taking new
  // training jobs and waits for these, so a stopped engine's record ends with what it applied and
  // nothing it was still doing is written to the data dir after a new engine has opened it.
  closed = false;
  readonly inFlight = new Set<Promise<unknown>>();
  /** the service simulation, when the engine was given one */
  readonly simulator: ServiceSimulator | undefined;

  constructor(
    readonly opts: EngineServerOptions,
    readonly store: EngineStore,
  ) {
    this.backend = opts.backend;
    this.log = opts.log ?? (() => undefined);
    this.longPollMs = opts.longPollMs ?? 20_000;
    this.sessionTimeoutMs = opts.sessionTimeoutMs ?? 300_000;
    this.simulator = opts.serviceSimulation ? new ServiceSimulator(opts.serviceSimulation) : undefined;
    this.baseModels = new Map(this.backend.listBaseModels().map((m) => [m.name, m]));
  }

  background<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = () => this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  track(id: string, work: () => Promise<FutureResult>): void {
    this.futures.track(id, () => this.background(work()));
  }

  /** 400, naming the served ones, unless `name` is a base model served here. */
  requireBaseModel(name: string): void {
    if (!this.baseModels.has(name)) throw new HttpError(400, `base model "${name}" is not served here; available: ${[...this.baseModels.keys()].join(', ')}`);
  }

  session(id: string): Session {
    const s = this.sessions.get(id);
    if (!s) throw new HttpError(404, `session ${id} not found (expired, or the engine restarted): create a new session`);
    s.lastSeen = Date.now();
    return s;
  }

  model(id: string): ModelState {
    const m = this.models.get(id);
    if (!m || m.released) {
      throw new HttpError(404, `model ${id} is not loaded on this engine (it was unloaded, its session expired, or the engine restarted); load a checkpoint into a new model`);
    }
    return m;
  }

  runOf(id: string): RunRecord {
    const r = this.store.run(id);
    if (!r) throw new HttpError(404, `training run ${id} not found`);
    return r;
  }

  /** A stored checkpoint's bytes by its tinker:// path; failures are the future's, not HTTP errors. */
  async loadCheckpointBytes(tinkerPath: string, want?: 'weights' | 'sampler_weights'): Promise<{ bytes: Uint8Array; run: RunRecord }> {
    let parsed;
    try {
      parsed = parseTinkerPath(tinkerPath);
    } catch (err) {
      throw new FutureError(errorMessage(err));
    }
    const kinds = parsed.kind ? [parsed.kind] : ['sampler_weights', 'weights'];
    const find = () => this.store.run(parsed.runId)?.checkpoints.find((x) => kinds.some((k) => x.checkpoint_id === `${k}/${parsed.name}`));
    // another engine on this store (the CLI's, the extension's) may have saved it since we last looked
    if (!find()) await this.store.refresh();
    const run = this.store.run(parsed.runId);
    const c = find();
    if (!run || !c) throw new FutureError(checkpointNotFound(tinkerPath, parsed.runId, run !== undefined, this.store.dataDir));
    if (want === 'weights' && c.checkpoint_type !== 'training') {
      throw new FutureError(`${tinkerPath} is a sampler checkpoint; loading into a training model needs a tinker://…/weights/… path`);
    }
    return { bytes: await this.store.readCheckpoint(c), run };
  }

  /** loadCheckpointBytes for a request answered at once: any failure is HTTP 404. */
  checkpointBytesOr404(tinkerPath: string): Promise<{ bytes: Uint8Array; run: RunRecord }> {
    return this.loadCheckpointBytes(tinkerPath).catch((err: Error) => {
      throw new HttpError(404, err.message);
    });
  }
}

/**
 * Where a tinker:// path was looked for, and where it may live instead: the embedded engine's one
 * store, or the Tinker service (whose run ids do not look like this engine's `sess-…:train:N`).
 */
export function checkpointNotFound(tinkerPath: string, runId: string, runKnown: boolean, dataDir: string): string {
  const what = runKnown ? `training run ${runId} has no such checkpoint` : `no training run ${runId}`;
  const where =
    `looked in the embedded engine's checkpoint store ${dataDir} (shared by the CLI, the MCP server and the extension; ` +
    `TINKER_STUDIO_CACHE_DIR moves it)`;
  const hint = /^sess-[0-9a-f]+:train:\d+$/.test(runId)
    ? runKnown
      ? 'it may have expired (TTL) or been deleted'
      : 'it was saved by an embedded engine using another store (another TINKER_STUDIO_CACHE_DIR or --data-dir)'
    : 'this is not a path of the embedded engine: it lives on the Tinker service; switch the backend to Tinker to use it';
  return `checkpoint ${tinkerPath} not found: ${what}; ${where}; ${hint}`;
}
