// Training models: creation (fresh or from a checkpoint), forward/backward, optimizer steps and
// saves. A model's training requests run strictly in seq_id order (waiting for gaps), replays are
// deduplicated, and every applied step is recorded on disk.
import { randomBytes } from 'node:crypto';
import type { EngineDatum, InputTensor, LoraConfig, LossFn } from '../contract';
import { decodeForwardBackwardRequest } from '../../core/tinker/proto';
import type { Datum, ForwardBackwardOutput, ForwardBackwardRequestData, TensorData } from '../../core/tinker/types';
import { denseTensor } from '../../core/tinker/tensors';
import * as W from '../../core/tinker/wire';
import { checkTtl } from './checkpointRoutes';
import { FutureError, FutureResult } from './futures';
import { HttpError, Reply, Router, decodedBody, parseJson } from './http';
import { EngineState, ModelState, Session, api, future, hashOf } from './state';
import { errorMessage } from '../../core/errors';

const ENGINE_USER = 'local-engine';

export function addTrainingRoutes(r: Router, st: EngineState): void {
  const { store, futures, backend, models, samplers, sessions } = st;

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
    void st.background(pump(m));
    return { json: { request_id: requestId, model_id: m.id } };
  }

  async function pump(m: ModelState): Promise<void> {
    if (m.pumping) return;
    m.pumping = true;
    try {
      for (;;) {
        if (st.closed) break;
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

  /**
   * Starts the creation of model `<session>:train:<model_seq_id>` (create_model, or load_weights
   * creating from a checkpoint). A replay with the same body gets the same future; 409 if the
   * model_seq_id was used for a different request.
   */
  function createOnce(s: Session, modelSeqId: number, type: string, body: Buffer, work: (id: string, requestId: string) => Promise<FutureResult>): Reply {
    const id = `${s.id}:train:${modelSeqId}`;
    const hash = hashOf(type, body);
    const prior = s.modelSeq.get(modelSeqId);
    if (prior) {
      if (prior.hash === hash) return future(prior.requestId, id);
      throw new HttpError(409, `model_seq_id ${modelSeqId} was already used in session ${s.id}`);
    }
    const requestId = futures.create();
    s.modelSeq.set(modelSeqId, { hash, requestId });
    st.track(requestId, () => work(id, requestId));
    return future(requestId, id);
  }

  function touchRun(id: string): void {
    const run = store.run(id);
    if (run) run.last_request_time = new Date().toISOString();
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
      project_id: s.projectId ?? null,
      checkpoints: [],
    });
  }

  r.add('POST', api('create_model'), (req) => {
    const b = parseJson(req, W.CreateModelRequest);
    const s = st.session(b.session_id);
    st.requireBaseModel(b.base_model);
    const lc = b.lora_config;
    if (!lc.train_attn && !lc.train_mlp && !lc.train_unembed) throw new HttpError(422, 'lora_config: at least one of train_attn, train_mlp, train_unembed must be true');
    return createOnce(s, b.model_seq_id, 'create_model', req.body, async (id) => {
      const seed = lc.seed ?? randomBytes(4).readUInt32LE(0);
      const lora: LoraConfig = { rank: lc.rank, seed, trainAttn: lc.train_attn, trainMlp: lc.train_mlp, trainUnembed: lc.train_unembed };
      await backend.createTrainingModel(id, b.base_model, lora);
      await registerModel(id, s, b.base_model, lora, b.user_metadata);
      return { kind: 'json', body: { model_id: id, type: 'create_model' } };
    });
  });

  r.add('POST', api('get_info'), (req) => {
    const b = parseJson(req, W.ModelIdRequest);
    const m = st.model(b.model_id);
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
    const m = st.model(b.model_id);
    const requestId = futures.create();
    m.unloadRequestId = requestId;
    st.track(requestId, async () => {
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
        throw new HttpError(422, `forward_backward body: ${errorMessage(err)}`);
      }
    } else {
      raw = req.body;
      const b = parseJson(req, W.ForwardBackwardJsonRequest);
      fb = { model_id: b.model_id, seq_id: b.seq_id, data: b.forward_backward_input.data as Datum[], loss_fn: b.forward_backward_input.loss_fn, loss_fn_config: b.forward_backward_input.loss_fn_config };
    }
    if (fb.seq_id < 1) throw new HttpError(422, 'seq_id must be ≥ 1');
    const m = st.model(fb.model_id);
    return submitTraining(m, fb.seq_id, fb.forward_only ? 'forward' : 'forward_backward', raw, forwardBackwardJob(m, fb));
  });

  r.add('POST', api('forward'), (req) => {
    const b = parseJson(req, W.ForwardJsonRequest);
    const m = st.model(b.model_id);
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
    const m = st.model(b.model_id);
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
    checkTtl(b.ttl_seconds);
    const m = st.model(b.model_id);
    const run = st.runOf(m.id);
    return submitTraining(m, b.seq_id, 'save_weights', req.body, async () => {
      // reported through the future, not as HTTP 409, which clients retry as a transient conflict
      if (!b.overwrite && run.checkpoints.some((c) => c.checkpoint_id === `weights/${b.path}`)) {
        throw new FutureError(`checkpoint weights/${b.path} already exists for ${m.id}; save under another name or pass overwrite`);
      }
      const bytes = await backend.exportState(m.id, true);
      const c = await store.writeCheckpoint(run, 'weights', b.path, bytes, b.ttl_seconds, b.user_metadata);
      return { kind: 'json', body: { path: c.tinker_path, type: 'save_weights' } };
    });
  });

  r.add('POST', api('save_weights_for_sampler'), (req) => {
    const b = parseJson(req, W.SaveWeightsForSamplerRequest);
    checkTtl(b.ttl_seconds);
    const m = st.model(b.model_id);
    const run = st.runOf(m.id);
    if (b.path == null && b.sampling_session_seq_id == null) throw new HttpError(422, 'save_weights_for_sampler needs a path or a sampling_session_seq_id');
    return submitTraining(m, b.seq_id, 'save_weights_for_sampler', req.body, async () => {
      const bytes = await backend.exportState(m.id, false);
      if (b.path != null) {
        const c = await store.writeCheckpoint(run, 'sampler_weights', b.path, bytes, b.ttl_seconds, b.user_metadata);
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
      const m = st.model(b.model_id);
      // a replay of the load itself (its answer was lost) is deduplicated by submitTraining
      if (b.seq_id !== 1 || (!m.submitted.has(1) && (m.nextSeq !== 1 || m.submitted.size > 0))) {
        throw new HttpError(400, `LoadWeights is not permitted with seq_id ${b.seq_id ?? '(none)'}: it must be the model's first request`);
      }
      return submitTraining(m, 1, 'load_weights', req.body, async () => {
        const { bytes } = await st.loadCheckpointBytes(b.path, 'weights');
        const desc = backend.describeState(bytes);
        if (desc.baseModel !== m.baseModel) throw new FutureError(`checkpoint ${b.path} is for ${desc.baseModel}, not ${m.baseModel}`);
        if (b.optimizer && !desc.hasOptimizerState) throw new FutureError(`checkpoint ${b.path} has no optimizer state`);
        await backend.importState(m.id, bytes, b.optimizer);
        return { kind: 'json', body: { path: b.path, model_id: m.id, type: 'load_weights' } };
      });
    }
    // create-via-load: a new model from the checkpoint's own config (counts as seq 0)
    if (!b.session_id || b.model_seq_id == null) throw new HttpError(422, 'load_weights needs model_id + seq_id, or session_id + model_seq_id');
    const s = st.session(b.session_id);
    return createOnce(s, b.model_seq_id, 'load_weights', req.body, async (id, requestId) => {
      const { bytes } = await st.loadCheckpointBytes(b.path, 'weights');
      const desc = backend.describeState(bytes);
      if (b.optimizer && !desc.hasOptimizerState) throw new FutureError(`checkpoint ${b.path} has no optimizer state`);
      await backend.createTrainingModel(id, desc.baseModel, desc.lora);
      await backend.importState(id, bytes, b.optimizer);
      await registerModel(id, s, desc.baseModel, desc.lora, b.user_metadata);
      const now = new Date().toISOString();
      await store.recordApplied({ model_id: id, seq_id: 0, type: 'load_weights', request_id: requestId, time: now });
      return { kind: 'json', body: { path: b.path, model_id: id, type: 'load_weights' } };
    });
  });

  r.add('POST', api('weights_info'), async (req) => {
    const b = parseJson(req, W.WeightsInfoRequest);
    const { bytes } = await st.checkpointBytesOr404(b.tinker_path);
    const d = backend.describeState(bytes);
    return {
      json: { base_model: d.baseModel, is_lora: true, lora_rank: d.lora.rank, train_unembed: d.lora.trainUnembed, train_mlp: d.lora.trainMlp, train_attn: d.lora.trainAttn },
    };
  });

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

/** A loss input as dense row-major values: CSR-encoded 2-D tensors (as the SDK sends them) decoded. */
function toInputTensor(t: TensorData, i: number, name: string): InputTensor {
  try {
    return denseTensor(t, `datum ${i}: loss_fn_inputs.${name}`);
  } catch (err) {
    throw new FutureError(errorMessage(err));
  }
}

function normalizeStrings(metadata: Record<string, unknown> | null | undefined): Record<string, string> | null {
  if (!metadata) return null;
  return Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}
