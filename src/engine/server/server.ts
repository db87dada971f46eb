// The embedded engine's HTTP server: the Tinker protocol (tinker-protocol.md) over node:http on
// 127.0.0.1, driving a ComputeBackend. Asynchronous requests answer with a future handle at once and
// are resolved through retrieve_future; training requests of one model run strictly in seq_id order
// (waiting for gaps), replays are deduplicated, and every applied step is recorded on disk.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ComputeBackend, EngineDatum, InputTensor, LoraConfig, LossFn, SamplingParams as EngineSamplingParams } from '../contract';
import { decodeForwardBackwardRequest, encodeForwardBackwardOutput, encodeSampleResponse } from '../../core/tinker/proto';
import type { Datum, ForwardBackwardOutput, ForwardBackwardRequestData, SampleResponse, TensorData } from '../../core/tinker/types';
import * as W from '../../core/tinker/wire';
import { FutureError, FutureResult, FutureStore } from './futures';
import { HttpError, MAX_BODY, Reply, Router, decodedBody, parseJson, wantsProtobuf, zstdDecompress } from './http';
import { buildArchive } from './archive';
import { EngineStore, RunRecord, parseTinkerPath } from './store';

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
}

/** Limits on one sampling request: the engine is a local trainer, not a service for anyone. */
export const MAX_NUM_SAMPLES = 256;
export const MAX_SAMPLING_TOKENS = 16_384;

export interface EngineServer {
  url: string;
  port: number;
  store: EngineStore;
  /** what the engine holds in memory (for tests and diagnostics) */
  stats(): { sessions: number; samplers: number; directSamplers: number; archiveLinks: number; pendingRequests: number; issuedRequests: number };
  close(): Promise<void>;
}

interface Session {
  id: string;
  lastSeen: number;
  /** model_seq_id → the create request (a replay with the same body gets the same future) */
  modelSeq: Map<number, { hash: string; requestId: string }>;
  /** sampling_session_seq_id → the create request (a replay with the same body gets the same sampler) */
  samplingSeq: Map<number, { hash: string; ready: Promise<void> }>;
  models: Set<string>;
  samplers: Set<string>;
}

interface Job {
  type: string;
  requestId: string;
  hash: string;
  run: () => Promise<FutureResult>;
}

/** Per training model: the next seq_id to apply, jobs waiting for their turn, and what was submitted. */
interface ModelState {
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

const ENGINE_USER = 'local-engine';

export async function startEngineServer(opts: EngineServerOptions): Promise<EngineServer> {
  const store = await EngineStore.open(opts.dataDir, opts.log);
  const futures = new FutureStore();
  const backend = opts.backend;
  const log = opts.log ?? (() => undefined);
  const sessions = new Map<string, Session>();
  const models = new Map<string, ModelState>();
  const samplers = new Map<string, { baseModel: string; modelPath: string | null; sessionId: string | null }>();
  // Samplers of `direct:` requests belong to no session: released once idle for the session timeout.
  const directSamplers = new Map<string, { lastUsed: number; active: number }>();
  const longPollMs = opts.longPollMs ?? 20_000;
  const sessionTimeoutMs = opts.sessionTimeoutMs ?? 300_000;
  const compress = Boolean(opts.compressForwardBackward && zstdDecompress);
  const baseModels = new Map(backend.listBaseModels().map((m) => [m.name, m]));
  let url = '';
  // Work started by requests (training jobs, model creation, sampling). close() stops taking new
  // training jobs and waits for these, so a stopped engine's record ends with what it applied and
  // nothing it was still doing is written to the data dir after a new engine has opened it.
  let closed = false;
  const inFlight = new Set<Promise<unknown>>();
  function background<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p);
    const done = () => inFlight.delete(p);
    p.then(done, done);
    return p;
  }
  const track = (id: string, work: () => Promise<FutureResult>) => futures.track(id, () => background(work()));

  // ---------- helpers ----------

  const hashOf = (type: string, bytes: Buffer) => createHash('sha256').update(type).update(bytes).digest('hex');

  /** The request id of an earlier identical create for this model_seq_id; 409 if it was used differently. */
  function modelSeqReplay(s: Session, modelSeqId: number, type: string, body: Buffer): string | undefined {
    const prior = s.modelSeq.get(modelSeqId);
    if (!prior) return undefined;
    if (prior.hash === hashOf(type, body)) return prior.requestId;
    throw new HttpError(409, `model_seq_id ${modelSeqId} was already used in session ${s.id}`);
  }

  function session(id: string): Session {
    const s = sessions.get(id);
    if (!s) throw new HttpError(404, `session ${id} not found (expired, or the engine restarted): create a new session`);
    s.lastSeen = Date.now();
    return s;
  }

  function model(id: string): ModelState {
    const m = models.get(id);
    if (!m || m.released) {
      throw new HttpError(404, `model ${id} is not loaded on this engine (it was unloaded, its session expired, or the engine restarted); load a checkpoint into a new model`);
    }
    return m;
  }

  function runOf(id: string): RunRecord {
    const r = store.run(id);
    if (!r) throw new HttpError(404, `training run ${id} not found`);
    return r;
  }

  /** Queues a training request in seq_id order; replays with the same payload get the same request id. */
  function submitTraining(m: ModelState, seqId: number, type: string, body: Buffer, run: () => Promise<FutureResult>): Reply {
    const hash = hashOf(type, body);
    const prior = m.submitted.get(seqId);
    if (prior) {
      if (prior.hash === hash && prior.type === type) return { json: { request_id: prior.requestId, model_id: m.id } };
      throw new HttpError(409, `Training request sequence number was reused: seq_id ${seqId} of ${m.id} was already used by a different ${prior.type} request`);
    }
    if (seqId < m.nextSeq) {
      throw new HttpError(409, `seq_id ${seqId} of ${m.id} is below the next expected ${m.nextSeq}`);
    }
    const requestId = futures.create();
    m.submitted.set(seqId, { hash, requestId, type });
    m.waiting.set(seqId, { type, requestId, hash, run });
    void background(pump(m));
    return { json: { request_id: requestId, model_id: m.id } };
  }

  async function pump(m: ModelState): Promise<void> {
    if (m.pumping) return;
    m.pumping = true;
    try {
      for (;;) {
        if (closed) break;
        const job = m.waiting.get(m.nextSeq);
        if (!job) break;
        m.waiting.delete(m.nextSeq);
        const seq = m.nextSeq;
        let outcome: FutureResult | Error;
        try {
          if (m.released) throw new FutureError(`model ${m.id} was unloaded`);
          outcome = await job.run();
          await store.recordApplied({ model_id: m.id, seq_id: seq, type: job.type, request_id: job.requestId, time: new Date().toISOString() });
        } catch (err) {
          outcome = err as Error;
        }
        m.nextSeq++;
        if (outcome instanceof Error) {
          const e = outcome as Error & { category?: 'user' | 'server' };
          futures.settle(job.requestId, { state: 'failed', error: e.message, category: e.category ?? 'user' });
        } else futures.settle(job.requestId, { state: 'done', result: outcome });
      }
    } finally {
      m.pumping = false;
    }
  }

  function touchRun(id: string): void {
    const r = store.run(id);
    if (r) r.last_request_time = new Date().toISOString();
  }

  async function loadCheckpointBytes(tinkerPath: string, want?: 'weights' | 'sampler_weights'): Promise<{ bytes: Uint8Array; run: RunRecord }> {
    let parsed;
    try {
      parsed = parseTinkerPath(tinkerPath);
    } catch (err) {
      throw new FutureError((err as Error).message);
    }
    const run = store.run(parsed.runId);
    if (!run) throw new FutureError(`checkpoint ${tinkerPath} not found: no training run ${parsed.runId} on this engine`);
    const kinds = parsed.kind ? [parsed.kind] : ['sampler_weights', 'weights'];
    const c = run.checkpoints.find((x) => kinds.some((k) => x.checkpoint_id === `${k}/${parsed.name}`));
    if (!c) throw new FutureError(`checkpoint ${tinkerPath} not found`);
    if (want === 'weights' && c.checkpoint_type !== 'training') {
      throw new FutureError(`${tinkerPath} is a sampler checkpoint; loading into a training model needs a tinker://…/weights/… path`);
    }
    return { bytes: await store.readCheckpoint(c), run };
  }

  function toEngineDatum(d: Datum, i: number): EngineDatum {
    const parts: ArrayLike<number>[] = [];
    let n = 0;
    for (const c of d.model_input.chunks) {
      if (c.type !== 'encoded_text') throw new FutureError(`datum ${i}: the local engine's models take text only, not ${c.type} chunks`);
      parts.push(c.tokens);
      n += c.tokens.length;
    }
    const tokens = new Int32Array(n);
    let at = 0;
    for (const p of parts) {
      tokens.set(p, at);
      at += p.length;
    }
    const lossFnInputs: Record<string, InputTensor> = {};
    for (const [name, t] of Object.entries(d.loss_fn_inputs)) lossFnInputs[name] = toInputTensor(t, i, name);
    return { tokens, lossFnInputs };
  }

  function toInputTensor(t: TensorData, i: number, name: string): InputTensor {
    if (t.sparse_crow_indices) throw new FutureError(`datum ${i}: loss_fn_inputs.${name} is sparse; the local engine takes dense tensors`);
    const data = t.dtype === 'float32' ? Float32Array.from(t.data) : Float64Array.from(t.data);
    return { dtype: t.dtype, data, shape: t.shape ?? [data.length] };
  }

  function forwardBackwardJob(m: ModelState, req: ForwardBackwardRequestData): () => Promise<FutureResult> {
    return async () => {
      const data = req.data.map(toEngineDatum);
      const result = await backend.forwardBackward(m.id, data, req.loss_fn as LossFn, req.loss_fn_config ?? {}, Boolean(req.forward_only));
      const output: ForwardBackwardOutput = {
        loss_fn_output_type: 'ArrayRecord',
        loss_fn_outputs: result.outputs.map((o) => Object.fromEntries(Object.entries(o).map(([k, t]) => [k, { dtype: 'float32', data: t.data, shape: t.shape }]))),
        metrics: result.metrics,
      };
      touchRun(m.id);
      return { kind: 'forward_backward', output };
    };
  }

  function samplingParams(p: ReturnType<typeof W.SamplingParamsSchema.parse>): EngineSamplingParams {
    if (p.max_tokens == null) throw new HttpError(400, 'sampling_params.max_tokens is required by the local engine');
    if (p.max_tokens > MAX_SAMPLING_TOKENS) throw new HttpError(422, `sampling_params.max_tokens: at most ${MAX_SAMPLING_TOKENS} on the local engine`);
    const stop = p.stop == null ? [] : Array.isArray(p.stop) ? p.stop : [p.stop];
    const stopStrings = stop.filter((s): s is string => typeof s === 'string');
    const stopTokens = stop.filter((s): s is number => typeof s === 'number');
    return {
      maxTokens: p.max_tokens,
      temperature: p.temperature,
      topP: p.top_p,
      topK: p.top_k,
      stopStrings,
      stopTokens,
      seed: p.seed ?? undefined,
    };
  }

  async function createSampler(id: string, source: { baseModel: string } | { modelPath: string }, sessionId: string | null): Promise<void> {
    if ('baseModel' in source) {
      if (!baseModels.has(source.baseModel)) throw new HttpError(400, `base model "${source.baseModel}" is not served here; available: ${[...baseModels.keys()].join(', ')}`);
      await backend.createSampler(id, { baseModel: source.baseModel });
      samplers.set(id, { baseModel: source.baseModel, modelPath: null, sessionId });
    } else {
      const { bytes } = await loadCheckpointBytes(source.modelPath).catch((err: Error) => {
        throw new HttpError(404, err.message);
      });
      const desc = backend.describeState(bytes);
      await backend.createSampler(id, { state: bytes });
      samplers.set(id, { baseModel: desc.baseModel, modelPath: source.modelPath, sessionId });
    }
    if (sessionId) sessions.get(sessionId)?.samplers.add(id);
  }

  /** Releases the direct samplers idle since before `cutoff`. */
  async function releaseIdleDirectSamplers(cutoff: number): Promise<void> {
    for (const [id, d] of [...directSamplers]) {
      if (d.active > 0 || d.lastUsed >= cutoff) continue;
      directSamplers.delete(id);
      samplers.delete(id);
      await backend.releaseSampler(id).catch(() => undefined);
      log(`released sampler ${id} (idle)`);
    }
  }

  async function releaseSession(s: Session): Promise<void> {
    sessions.delete(s.id);
    for (const id of s.models) {
      const m = models.get(id);
      if (m && !m.released) {
        m.released = true;
        await backend.releaseTrainingModel(id).catch(() => undefined);
      }
    }
    for (const id of s.samplers) {
      samplers.delete(id);
      await backend.releaseSampler(id).catch(() => undefined);
    }
    log(`session ${s.id} expired: released ${s.models.size} models and ${s.samplers.size} samplers`);
  }

  function checkpointJson(c: RunRecord['checkpoints'][number]) {
    const { file: _file, ...rest } = c;
    return rest;
  }

  function runJson(r: RunRecord) {
    const last = (type: 'training' | 'sampler') =>
      [...r.checkpoints].filter((c) => c.checkpoint_type === type).sort((a, b) => b.time.localeCompare(a.time))[0];
    const lt = last('training');
    const ls = last('sampler');
    return {
      training_run_id: r.training_run_id,
      base_model: r.base_model,
      model_owner: r.model_owner,
      is_lora: r.is_lora,
      corrupted: r.corrupted,
      lora_rank: r.lora_rank,
      last_request_time: r.last_request_time,
      last_checkpoint: lt ? checkpointJson(lt) : null,
      last_sampler_checkpoint: ls ? checkpointJson(ls) : null,
      user_metadata: r.user_metadata,
    };
  }

  function page(query: URLSearchParams, defaultLimit: number): { limit: number; offset: number } {
    const limit = Number(query.get('limit') ?? defaultLimit);
    const offset = Number(query.get('offset') ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new HttpError(400, 'limit must be an integer from 1 to 10000');
    if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, 'offset must be a non-negative integer');
    return { limit, offset };
  }

  function checkpointOf(runId: string, ckptId: string) {
    const run = runOf(runId);
    if (!/^(weights|sampler_weights)\/[A-Za-z0-9_.-]+$/.test(ckptId)) {
      throw new HttpError(400, `invalid checkpoint id "${ckptId}": expected weights/<name> or sampler_weights/<name>`);
    }
    const c = run.checkpoints.find((x) => x.checkpoint_id === ckptId);
    if (!c) throw new HttpError(404, `checkpoint ${ckptId} of ${runId} not found`);
    return { run, c };
  }

  /** A new live training model: tracked for ordering, owned by its session, recorded as a training run. */
  async function registerModel(id: string, s: Session, baseModel: string, lora: LoraConfig, userMetadata: Record<string, unknown> | null | undefined): Promise<void> {
    models.set(id, { id, sessionId: s.id, baseModel, nextSeq: 1, waiting: new Map(), submitted: new Map(), pumping: false, released: false });
    s.models.add(id);
    const now = new Date().toISOString();
    await store.putRun({
      training_run_id: id,
      base_model: baseModel,
      model_owner: ENGINE_USER,
      is_lora: true,
      corrupted: false,
      lora_rank: lora.rank,
      train_attn: lora.trainAttn,
      train_mlp: lora.trainMlp,
      train_unembed: lora.trainUnembed,
      created: now,
      last_request_time: now,
      user_metadata: normalizeStrings(userMetadata),
      checkpoints: [],
    });
  }

  const future = (id: string, model_id?: string): Reply => ({ json: model_id ? { request_id: id, model_id } : { request_id: id } });

  function normalizeStrings(metadata: Record<string, unknown> | null | undefined): Record<string, string> | null {
    if (!metadata) return null;
    return Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  }

  // ---------- routes ----------

  const r = new Router((req) => admit(req, { apiKey: opts.apiKey, port: () => port, allowedHosts: (opts.allowedHosts ?? []).map((h) => h.toLowerCase()) }));
  let port = 0;
  const api = (p: string) => `/api/v1/${p}`;

  r.add('GET', api('healthz'), () => ({ json: { status: 'ok' } }));
  r.add('POST', api('client/config'), () => ({
    json: {
      pjwt_auth_enabled: false,
      proto_compress_fwdbwd: compress,
      parallel_fwdbwd_chunks: true,
      ...(opts.clientConfig ?? {}),
    },
  }));
  r.add('POST', api('client/dynamic_config'), () => ({ json: { refresh_interval_sec: 300 } }));
  r.add('POST', api('telemetry'), () => ({ json: { status: 'accepted' } }));
  r.add('GET', api('get_server_capabilities'), () => ({
    json: { supported_models: [...baseModels.values()].map((m) => ({ model_name: m.name, max_context_length: m.maxContextLength })) },
  }));

  r.add('POST', api('create_session'), (req) => {
    parseJson(req, W.CreateSessionRequest);
    const id = `sess-${randomBytes(6).toString('hex')}`;
    sessions.set(id, { id, lastSeen: Date.now(), modelSeq: new Map(), samplingSeq: new Map(), models: new Set(), samplers: new Set() });
    return { json: { type: 'create_session', session_id: id, info_message: null, warning_message: null, error_message: null } };
  });
  r.add('POST', api('session_heartbeat'), (req) => {
    const b = parseJson(req, W.HeartbeatRequest);
    session(b.session_id);
    return { json: { type: 'session_heartbeat' } };
  });

  r.add('POST', api('create_model'), (req) => {
    const b = parseJson(req, W.CreateModelRequest);
    const s = session(b.session_id);
    if (!baseModels.has(b.base_model)) {
      throw new HttpError(400, `base model "${b.base_model}" is not served here; available: ${[...baseModels.keys()].join(', ')}`);
    }
    const lc = b.lora_config;
    if (!lc.train_attn && !lc.train_mlp && !lc.train_unembed) throw new HttpError(422, 'lora_config: at least one of train_attn, train_mlp, train_unembed must be true');
    const id = `${s.id}:train:${b.model_seq_id}`;
    const replay = modelSeqReplay(s, b.model_seq_id, 'create_model', req.body);
    if (replay) return future(replay, id);
    const requestId = futures.create();
    s.modelSeq.set(b.model_seq_id, { hash: hashOf('create_model', req.body), requestId });
    track(requestId, async () => {
      const seed = lc.seed ?? randomBytes(4).readUInt32LE(0);
      const lora: LoraConfig = { rank: lc.rank, seed, trainAttn: lc.train_attn, trainMlp: lc.train_mlp, trainUnembed: lc.train_unembed };
      await backend.createTrainingModel(id, b.base_model, lora);
      await registerModel(id, s, b.base_model, lora, b.user_metadata);
      return { kind: 'json', body: { model_id: id, type: 'create_model' } };
    });
    return future(requestId, id);
  });

  r.add('POST', api('get_info'), (req) => {
    const b = parseJson(req, W.ModelIdRequest);
    const m = model(b.model_id);
    const run = store.run(m.id);
    return {
      json: {
        type: 'get_info',
        model_id: m.id,
        model_data: { arch: 'gpt', model_name: m.baseModel, tokenizer_id: m.baseModel },
        is_lora: true,
        lora_rank: run?.lora_rank ?? null,
        model_name: m.baseModel,
      },
    };
  });

  r.add('POST', api('unload_model'), (req) => {
    const b = parseJson(req, W.ModelIdRequest);
    // a replayed unload (its answer was lost) gets the same future instead of "not loaded"
    const unloading = models.get(b.model_id);
    if (unloading?.unloadRequestId) return future(unloading.unloadRequestId, unloading.id);
    const m = model(b.model_id);
    const requestId = futures.create();
    m.unloadRequestId = requestId;
    track(requestId, async () => {
      m.released = true;
      await backend.releaseTrainingModel(m.id);
      sessions.get(m.sessionId)?.models.delete(m.id);
      return { kind: 'json', body: { model_id: m.id, type: 'unload_model' } };
    });
    return future(requestId, m.id);
  });

  r.add('POST', api('forward_backward'), (req) => {
    const ctype = String(req.headers['content-type'] ?? '');
    let fb: ForwardBackwardRequestData;
    let raw: Buffer;
    if (ctype.includes('application/x-protobuf')) {
      raw = decodedBody(req);
      try {
        fb = decodeForwardBackwardRequest(raw);
      } catch (err) {
        throw new HttpError(422, `forward_backward body: ${(err as Error).message}`);
      }
    } else {
      raw = req.body;
      const b = parseJson(req, W.ForwardBackwardJsonRequest);
      fb = { model_id: b.model_id, seq_id: b.seq_id, data: b.forward_backward_input.data as Datum[], loss_fn: b.forward_backward_input.loss_fn, loss_fn_config: b.forward_backward_input.loss_fn_config };
    }
    if (fb.seq_id < 1) throw new HttpError(422, 'seq_id must be ≥ 1');
    const m = model(fb.model_id);
    return submitTraining(m, fb.seq_id, fb.forward_only ? 'forward' : 'forward_backward', raw, forwardBackwardJob(m, fb));
  });

  r.add('POST', api('forward'), (req) => {
    const b = parseJson(req, W.ForwardJsonRequest);
    const m = model(b.model_id);
    const fb: ForwardBackwardRequestData = {
      model_id: b.model_id,
      seq_id: b.seq_id,
      data: b.forward_input.data as Datum[],
      loss_fn: b.forward_input.loss_fn,
      loss_fn_config: b.forward_input.loss_fn_config,
      forward_only: true,
    };
    return submitTraining(m, b.seq_id, 'forward', req.body, forwardBackwardJob(m, fb));
  });

  r.add('POST', api('optim_step'), (req) => {
    const b = parseJson(req, W.OptimStepRequest);
    const m = model(b.model_id);
    const a = b.adam_params;
    return submitTraining(m, b.seq_id, 'optim_step', req.body, async () => {
      const metrics = await backend.optimStep(m.id, {
        learningRate: a.learning_rate,
        beta1: a.beta1,
        beta2: a.beta2,
        eps: a.eps,
        weightDecay: a.weight_decay,
        gradClipNorm: a.grad_clip_norm,
      });
      touchRun(m.id);
      return { kind: 'json', body: { type: 'optim_step', metrics } };
    });
  });

  r.add('POST', api('save_weights'), (req) => {
    const b = parseJson(req, W.SaveWeightsRequest);
    const m = model(b.model_id);
    const run = runOf(m.id);
    return submitTraining(m, b.seq_id, 'save_weights', req.body, async () => {
      // reported through the future, not as HTTP 409, which clients retry as a transient conflict
      if (!b.overwrite && run.checkpoints.some((c) => c.checkpoint_id === `weights/${b.path}`)) {
        throw new FutureError(`checkpoint weights/${b.path} already exists for ${m.id}; save under another name or pass overwrite`);
      }
      const bytes = await backend.exportState(m.id, true);
      const c = await store.writeCheckpoint(run, 'weights', b.path, bytes, b.ttl_seconds);
      return { kind: 'json', body: { path: c.tinker_path, type: 'save_weights' } };
    });
  });

  r.add('POST', api('save_weights_for_sampler'), (req) => {
    const b = parseJson(req, W.SaveWeightsForSamplerRequest);
    const m = model(b.model_id);
    const run = runOf(m.id);
    if (b.path == null && b.sampling_session_seq_id == null) throw new HttpError(422, 'save_weights_for_sampler needs a path or a sampling_session_seq_id');
    return submitTraining(m, b.seq_id, 'save_weights_for_sampler', req.body, async () => {
      const bytes = await backend.exportState(m.id, false);
      if (b.path != null) {
        const c = await store.writeCheckpoint(run, 'sampler_weights', b.path, bytes, b.ttl_seconds);
        return { kind: 'json', body: { path: c.tinker_path, type: 'save_weights_for_sampler' } };
      }
      const samplerId = `${m.sessionId}:sample:${b.sampling_session_seq_id}`;
      if (samplers.has(samplerId)) throw new FutureError(`sampling_session_seq_id ${b.sampling_session_seq_id} was already used in session ${m.sessionId}`);
      await backend.createSampler(samplerId, { state: bytes });
      samplers.set(samplerId, { baseModel: m.baseModel, modelPath: null, sessionId: m.sessionId });
      sessions.get(m.sessionId)?.samplers.add(samplerId);
      return { kind: 'json', body: { path: null, sampling_session_id: samplerId, type: 'save_weights_for_sampler' } };
    });
  });

  r.add('POST', api('load_weights'), async (req) => {
    const b = parseJson(req, W.LoadWeightsRequest);
    if (b.model_id) {
      const m = model(b.model_id);
      // a replay of the load itself (its answer was lost) is deduplicated by submitTraining
      if (b.seq_id !== 1 || (!m.submitted.has(1) && (m.nextSeq !== 1 || m.submitted.size > 0))) {
        throw new HttpError(400, `LoadWeights is not permitted with seq_id ${b.seq_id ?? '(none)'}: it must be the model's first request`);
      }
      return submitTraining(m, 1, 'load_weights', req.body, async () => {
        const { bytes } = await loadCheckpointBytes(b.path, 'weights');
        const desc = backend.describeState(bytes);
        if (desc.baseModel !== m.baseModel) throw new FutureError(`checkpoint ${b.path} is for ${desc.baseModel}, not ${m.baseModel}`);
        if (b.optimizer && !desc.hasOptimizerState) throw new FutureError(`checkpoint ${b.path} has no optimizer state`);
        await backend.importState(m.id, bytes, b.optimizer);
        return { kind: 'json', body: { path: b.path, model_id: m.id, type: 'load_weights' } };
      });
    }
    // create-via-load: a new model from the checkpoint's own config (counts as seq 0)
    if (!b.session_id || b.model_seq_id == null) throw new HttpError(422, 'load_weights needs model_id + seq_id, or session_id + model_seq_id');
    const s = session(b.session_id);
    const id = `${s.id}:train:${b.model_seq_id}`;
    const replay = modelSeqReplay(s, b.model_seq_id, 'load_weights', req.body);
    if (replay) return future(replay, id);
    const requestId = futures.create();
    s.modelSeq.set(b.model_seq_id, { hash: hashOf('load_weights', req.body), requestId });
    track(requestId, async () => {
      const { bytes } = await loadCheckpointBytes(b.path, 'weights');
      const desc = backend.describeState(bytes);
      if (b.optimizer && !desc.hasOptimizerState) throw new FutureError(`checkpoint ${b.path} has no optimizer state`);
      await backend.createTrainingModel(id, desc.baseModel, desc.lora);
      await backend.importState(id, bytes, b.optimizer);
      await registerModel(id, s, desc.baseModel, desc.lora, b.user_metadata);
      const now = new Date().toISOString();
      await store.recordApplied({ model_id: id, seq_id: 0, type: 'load_weights', request_id: requestId, time: now });
      return { kind: 'json', body: { path: b.path, model_id: id, type: 'load_weights' } };
    });
    return future(requestId, id);
  });

  r.add('POST', api('weights_info'), async (req) => {
    const b = parseJson(req, W.WeightsInfoRequest);
    const { bytes } = await loadCheckpointBytes(b.tinker_path).catch((err: Error) => {
      throw new HttpError(404, err.message);
    });
    const d = backend.describeState(bytes);
    return {
      json: { base_model: d.baseModel, is_lora: true, lora_rank: d.lora.rank, train_unembed: d.lora.trainUnembed, train_mlp: d.lora.trainMlp, train_attn: d.lora.trainAttn },
    };
  });

  r.add('POST', api('create_sampling_session'), async (req) => {
    const b = parseJson(req, W.CreateSamplingSessionRequest);
    const s = session(b.session_id);
    if ((b.base_model == null) === (b.model_path == null)) throw new HttpError(400, 'give exactly one of base_model and model_path');
    const id = `${s.id}:sample:${b.sampling_session_seq_id}`;
    const hash = hashOf('create_sampling_session', req.body);
    const prior = s.samplingSeq.get(b.sampling_session_seq_id);
    if (prior && prior.hash !== hash) throw new HttpError(409, `sampling_session_seq_id ${b.sampling_session_seq_id} was already used in session ${s.id}`);
    if (!prior && samplers.has(id)) throw new HttpError(409, `sampling_session_seq_id ${b.sampling_session_seq_id} was already used in session ${s.id}`);
    // a replay (its answer was lost) waits for the same sampler instead of getting 409
    const ready = prior?.ready ?? background(createSampler(id, b.model_path ? { modelPath: b.model_path } : { baseModel: b.base_model! }, s.id));
    if (!prior) {
      s.samplingSeq.set(b.sampling_session_seq_id, { hash, ready });
      ready.catch(() => s.samplingSeq.delete(b.sampling_session_seq_id));
    }
    await ready;
    return { json: { type: 'create_sampling_session', sampling_session_id: id } };
  });

  r.add('GET', api('samplers/{id}'), (req) => {
    const sm = samplers.get(req.params.id!);
    if (!sm) throw new HttpError(404, `sampler ${req.params.id} not found`);
    return { json: { sampler_id: req.params.id, base_model: sm.baseModel, model_path: sm.modelPath } };
  });

  r.add('POST', api('asample'), async (req) => {
    const b = parseJson(req, W.SampleRequestSchema);
    if (b.num_samples > MAX_NUM_SAMPLES) throw new HttpError(422, `num_samples: at most ${MAX_NUM_SAMPLES} on the local engine`);
    let samplerId = b.sampling_session_id ?? undefined;
    if (!samplerId) {
      if ((b.base_model == null) === (b.model_path == null)) throw new HttpError(400, 'give a sampling_session_id, or exactly one of base_model and model_path');
      samplerId = `direct:${b.base_model ?? b.model_path}`;
      if (!samplers.has(samplerId)) {
        await createSampler(samplerId, b.model_path ? { modelPath: b.model_path } : { baseModel: b.base_model! }, null);
        directSamplers.set(samplerId, { lastUsed: Date.now(), active: 0 });
      }
    } else if (!samplers.has(samplerId)) {
      throw new HttpError(404, `sampling session ${samplerId} not found (expired, or the engine restarted)`);
    }
    const sm = samplers.get(samplerId)!;
    if (sm.sessionId) sessions.get(sm.sessionId)?.samplers.add(samplerId);
    const tokens: number[] = [];
    for (const c of b.prompt.chunks) {
      if (c.type !== 'encoded_text') throw new HttpError(400, `the local engine's models take text only, not ${c.type} chunks`);
      tokens.push(...c.tokens);
    }
    const params = samplingParams(b.sampling_params);
    const requestId = futures.create();
    const id = samplerId;
    const direct = directSamplers.get(id);
    if (direct) direct.active++;
    track(requestId, async () => {
      const res = await backend.sample(id, {
        prompt: Int32Array.from(tokens),
        numSamples: b.num_samples,
        params,
        promptLogprobs: b.prompt_logprobs || b.topk_prompt_logprobs > 0,
        topkPromptLogprobs: b.topk_prompt_logprobs,
      }).finally(() => {
        if (direct) {
          direct.active--;
          direct.lastUsed = Date.now();
        }
      });
      const response: SampleResponse = {
        type: 'sample',
        sequences: res.sequences.map((s) => ({ stop_reason: s.stopReason, tokens: Array.from(s.tokens), logprobs: Array.from(s.logprobs) })),
        prompt_logprobs: res.promptLogprobs ? Array.from(res.promptLogprobs, (v) => (Number.isNaN(v) ? null : v)) : null,
        topk_prompt_logprobs: b.topk_prompt_logprobs > 0 ? (res.topkPromptLogprobs ?? null) : null,
        prompt_cache_hit_tokens: 0,
      };
      return { kind: 'sample', response };
    });
    return future(requestId);
  });

  r.add('POST', api('retrieve_future'), async (req) => {
    const b = parseJson(req, W.RetrieveFutureRequest);
    const abort = new AbortController();
    const state = await futures.wait(b.request_id, longPollMs, abort.signal);
    if (state === 'unknown') throw new HttpError(404, `request ${b.request_id} not found`);
    if (state === 'expired') throw new HttpError(410, `the promise for request ${b.request_id} expired (the engine restarted or dropped it): resubmit the request`);
    if (state.state === 'pending') {
      if ((opts.longPollTimeoutStatus ?? 200) === 408) return { status: 408, json: { detail: 'Timeout waiting for result', queue_state: 'active' } };
      return { json: { type: 'try_again', request_id: b.request_id, queue_state: 'active' } };
    }
    if (state.state === 'failed') return { json: { error: state.error, category: state.category } };
    const result = state.result;
    const proto = wantsProtobuf(req);
    if (result.kind === 'forward_backward') {
      return proto ? { bytes: encodeForwardBackwardOutput(result.output), contentType: 'application/x-protobuf' } : { json: jsonOutput(result.output) };
    }
    if (result.kind === 'sample') {
      return proto ? { bytes: encodeSampleResponse(result.response), contentType: 'application/x-protobuf' } : { json: result.response };
    }
    return { json: result.body };
  });

  // REST: training runs and checkpoints
  r.add('GET', api('training_runs'), async (req) => {
    await store.expire();
    const { limit, offset } = page(req.query, 20);
    const all = store.allRuns();
    return { json: { training_runs: all.slice(offset, offset + limit).map(runJson), cursor: { offset, limit, total_count: all.length } } };
  });
  r.add('GET', api('training_runs/{run}'), async (req) => {
    await store.expire();
    return { json: runJson(runOf(req.params.run!)) };
  });
  r.add('GET', api('training_runs/{run}/checkpoints'), async (req) => {
    await store.expire();
    const run = runOf(req.params.run!);
    return { json: { checkpoints: [...run.checkpoints].sort((a, b) => b.time.localeCompare(a.time)).map(checkpointJson), cursor: null } };
  });
  r.add('GET', api('checkpoints'), async (req) => {
    await store.expire();
    const { limit, offset } = page(req.query, 100);
    const all = store
      .allRuns()
      .flatMap((run) => run.checkpoints)
      .sort((a, b) => b.time.localeCompare(a.time));
    return { json: { checkpoints: all.slice(offset, offset + limit).map(checkpointJson), cursor: { offset, limit, total_count: all.length } } };
  });
  r.add('POST', api('training_runs/{run}/checkpoints/{ckpt}*/publish'), async (req) => {
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    if (c.public) throw new HttpError(409, `checkpoint ${c.checkpoint_id} is already public`);
    c.public = true;
    await store.save();
    return { status: 204, empty: true };
  });
  r.add('DELETE', api('training_runs/{run}/checkpoints/{ckpt}*/publish'), async (req) => {
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    if (!c.public) throw new HttpError(409, `checkpoint ${c.checkpoint_id} is already private`);
    c.public = false;
    await store.save();
    return { status: 204, empty: true };
  });
  r.add('PUT', api('training_runs/{run}/checkpoints/{ckpt}*/ttl'), async (req) => {
    const b = parseJson(req, W.TtlRequest);
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    if (b.ttl_seconds !== null && b.ttl_seconds <= 0) throw new HttpError(400, 'ttl_seconds must be positive, or null to remove the expiry');
    c.expires_at = b.ttl_seconds === null ? null : new Date(Date.now() + b.ttl_seconds * 1000).toISOString();
    await store.save();
    return { status: 204, empty: true };
  });
  const archiveTokens = new Map<string, { run: string; ckpt: string; expires: number }>();
  const pruneArchiveTokens = (now = Date.now()) => {
    for (const [token, t] of archiveTokens) if (t.expires < now) archiveTokens.delete(token);
  };
  r.add('GET', api('training_runs/{run}/checkpoints/{ckpt}*/archive'), (req) => {
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    pruneArchiveTokens();
    const token = randomBytes(12).toString('hex');
    const expires = Date.now() + (opts.archiveLinkTtlMs ?? 15 * 60_000);
    archiveTokens.set(token, { run: req.params.run!, ckpt: c.checkpoint_id, expires });
    return { status: 302, empty: true, headers: { location: `${url}/api/v1/_engine/archives/${token}.tar`, expires: new Date(expires).toUTCString() } };
  });
  r.add('GET', api('_engine/archives/{token}'), async (req) => {
    const t = archiveTokens.get(req.params.token!.replace(/\.tar$/, ''));
    if (!t || t.expires < Date.now()) throw new HttpError(404, 'archive link expired or unknown');
    const { c } = checkpointOf(t.run, t.ckpt);
    const bytes = await store.readCheckpoint(c);
    const d = backend.describeState(bytes);
    return { bytes: buildArchive(bytes, d, c.tinker_path), contentType: 'application/x-tar' };
  });

  // after the routes with a suffix: the greedy {ckpt}* would swallow '/publish' and '/ttl'
  r.add('DELETE', api('training_runs/{run}/checkpoints/{ckpt}*'), async (req) => {
    let ckptId = req.params.ckpt!;
    const type = req.query.get('checkpoint_type');
    if (!ckptId.includes('/') && (type === 'training' || type === 'sampler')) ckptId = `${type === 'training' ? 'weights' : 'sampler_weights'}/${ckptId}`;
    const { run } = checkpointOf(req.params.run!, ckptId);
    await store.deleteCheckpoint(run, ckptId);
    return { status: 204, empty: true };
  });
  // Engine-specific: the append-only record of applied training steps (for tests and diagnostics).
  r.add('GET', api('_engine/applied_steps'), async (req) => {
    const modelId = req.query.get('model_id');
    const steps = await store.appliedSteps();
    return { json: { steps: modelId ? steps.filter((s) => s.model_id === modelId) : steps } };
  });

  // Engine-specific: how many requests were accepted and how many are still being worked on.
  r.add('GET', api('_engine/requests'), () => ({ json: { pending: futures.pendingCount(), issued: futures.issuedCount() } }));

  // ---------- server ----------

  const server = http.createServer((req, res) => void r.handle(req, res));
  server.keepAliveTimeout = 65_000;
  // the whole request (headers and body) must arrive within this; long polls answer well before
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  port = addr.port;
  url = `http://${opts.host ?? '127.0.0.1'}:${addr.port}`;

  const sweep = setInterval(() => {
    const cutoff = Date.now() - sessionTimeoutMs;
    for (const s of [...sessions.values()]) if (s.lastSeen < cutoff) void releaseSession(s);
    void releaseIdleDirectSamplers(cutoff);
    pruneArchiveTokens();
    void store.expire();
  }, Math.min(60_000, Math.max(50, sessionTimeoutMs / 4)));
  sweep.unref();

  return {
    url,
    port: addr.port,
    store,
    stats: () => ({ sessions: sessions.size, samplers: samplers.size, directSamplers: directSamplers.size, archiveLinks: archiveTokens.size, pendingRequests: futures.pendingCount(), issuedRequests: futures.issuedCount() }),
    close: async () => {
      closed = true;
      clearInterval(sweep);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      while (inFlight.size) await Promise.allSettled([...inFlight]);
      await store.save();
    },
  };
}

const BODY_TYPES = ['application/json', 'application/x-protobuf'];

/**
 * Only the owner's client gets in: the per-launch token as API key, a Host naming the loopback
 * address and our port (no DNS rebinding), no Origin (no web page), and a JSON or protobuf body (a
 * cross-site "simple" POST is text/plain or a form).
 */
function admit(req: http.IncomingMessage, o: { apiKey?: string; port: () => number; allowedHosts: string[] }): void {
  if (req.headers.origin !== undefined) throw new HttpError(403, 'requests from web pages (with an Origin header) are refused');
  const host = String(req.headers.host ?? '').toLowerCase();
  const port = o.port();
  if (![`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, ...o.allowedHosts].includes(host)) {
    throw new HttpError(421, `Host "${host}" is not this engine (127.0.0.1:${port})`);
  }
  // an archive link carries its own short-lived token, like a presigned URL
  const archiveLink = (req.url ?? '').startsWith('/api/v1/_engine/archives/');
  if (o.apiKey !== undefined && !archiveLink) {
    const given = Buffer.from(String(req.headers['x-api-key'] ?? ''));
    const want = Buffer.from(o.apiKey);
    if (given.length !== want.length || !timingSafeEqual(given, want)) {
      throw new HttpError(401, "missing or wrong API key: use the engine's token (printed when it starts)");
    }
  }
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) throw new HttpError(413, 'request body larger than 64 MiB', { connection: 'close' });
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
    const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const length = Number(req.headers['content-length'] ?? (req.headers['transfer-encoding'] ? NaN : 0));
    if (!BODY_TYPES.includes(type) && !(type === '' && length === 0)) {
      throw new HttpError(415, `Content-Type must be application/json or application/x-protobuf (got "${type || 'none'}")`);
    }
  }
}

function jsonOutput(out: ForwardBackwardOutput) {
  return {
    loss_fn_output_type: out.loss_fn_output_type,
    loss_fn_outputs: out.loss_fn_outputs.map((o) => Object.fromEntries(Object.entries(o).map(([k, t]) => [k, { dtype: t.dtype, data: Array.from(t.data), shape: t.shape }]))),
    metrics: out.metrics,
  };
}
