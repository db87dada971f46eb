// The training client of one model: strict seq_id ordering of its submissions, chunked protobuf
// (or JSON) forward_backward, optimizer steps, checkpoints.
import * as zlib from 'node:zlib';
import { TinkerError, TrainingSequenceError } from './errors';
import { APIFuture, CombinedFuture } from './futures';
import { forwardBackwardCustom, type CustomForwardBackwardOutput, type CustomLossFn } from './customLoss';
import { encodeForwardBackwardRequest } from './proto';
import { SamplingClient } from './samplingClient';
import type { ClientSession } from './clientSession';
import { AdamParams, DEFAULT_ADAM, Datum, ForwardBackwardOutput, LossFnType, TensorData, modelInputLength } from './types';
import * as W from './wire';
import type { z } from 'zod';
import { errorMessage } from '../errors';
import type { UsageMeter } from './usage';

type ZstdCompress = (b: Uint8Array) => Buffer;
const zstdCompress: ZstdCompress | undefined = (zlib as unknown as { zstdCompressSync?: ZstdCompress }).zstdCompressSync;

function estimateDatumBytes(d: Datum): number {
  let n = modelInputLength(d.model_input) * 4;
  for (const t of Object.values(d.loss_fn_inputs)) n += t.data.length * (t.dtype === 'int64' ? 8 : 4) + ((t.sparse_crow_indices?.length ?? 0) + (t.sparse_col_indices?.length ?? 0)) * 8;
  return n;
}

/** Splits datums into chunks of at most `maxLen` datums and about `maxBytes` bytes (an over-size datum is its own chunk). */
export function chunkDatums(data: Datum[], maxLen: number, maxBytes: number): Datum[][] {
  const chunks: Datum[][] = [];
  let cur: Datum[] = [];
  let bytes = 0;
  for (const d of data) {
    const b = estimateDatumBytes(d);
    if (cur.length && (cur.length >= maxLen || bytes + b > maxBytes)) {
      chunks.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(d);
    bytes += b;
  }
  if (cur.length) chunks.push(cur);
  return chunks;
}

/** Combines chunk metrics by their reduction suffix (§4.7); unknown reductions are dropped. */
export function combineMetrics(parts: Array<{ metrics: Record<string, number>; datums: number }>): Record<string, number> {
  if (parts.length === 1) return { ...parts[0]!.metrics };
  const out: Record<string, number> = {};
  const keys = new Set(parts.flatMap((p) => Object.keys(p.metrics)));
  const total = parts.reduce((a, p) => a + p.datums, 0);
  for (const key of keys) {
    if (!parts.every((p) => key in p.metrics)) continue;
    const vals = parts.map((p) => p.metrics[key]!);
    const red = key.split(':').pop();
    const mean = () => parts.reduce((a, p) => a + p.metrics[key]! * p.datums, 0) / (total || 1);
    if (red === 'sum') out[key] = vals.reduce((a, b) => a + b, 0);
    else if (red === 'mean') out[key] = mean();
    else if (red === 'min') out[key] = Math.min(...vals);
    else if (red === 'max') out[key] = Math.max(...vals);
    else if (red === 'slack') out[key] = Math.max(...vals) - mean();
    else if (red === 'unique') vals.forEach((v, i) => (out[i === 0 ? key : `${key}_${i + 1}`] = v));
  }
  return out;
}

/** The service client as a training client uses it: its session, and the sampling clients it creates. */
export interface TrainingSession extends ClientSession {
  createSamplingClient(source: { modelPath: string; baseModel?: string }, signal?: AbortSignal): Promise<SamplingClient>;
}

export class TrainingClient {
  private requestCounter = 0;
  /** submissions of this model happen one after another, in seq_id order */
  private submitChain: Promise<unknown> = Promise.resolve();
  /** set when a submission failed for good: its seq_id is missing on the server */
  private broken: TrainingSequenceError | undefined;

  /**
   * Metadata every checkpoint this client saves carries (user_metadata of the save request) unless a
   * save gives its own: a run sets its spec's checkpoint_metadata and its own keys here.
   */
  checkpointMetadata: Record<string, string> | undefined;

  /** where this client's training tokens are counted (under its base model); the service's meter by default, and its samplers' */
  usage: UsageMeter | undefined;

  constructor(
    readonly service: TrainingSession,
    readonly modelId: string,
    readonly baseModel: string,
  ) {
    this.usage = service.usage;
  }

  private nextSeqId(): number {
    return ++this.requestCounter;
  }

  /**
   * Runs `submit` after every earlier submission of this model has returned. Once a submission has
   * failed for good (retries exhausted, cancelled), its seq_id is a gap the server waits on forever,
   * so later submissions fail at once with a TrainingSequenceError instead of hanging.
   */
  private ordered<T>(submit: () => Promise<T>): Promise<T> {
    const guarded = async (): Promise<T> => {
      if (this.broken) throw this.broken;
      const firstSeq = this.requestCounter + 1;
      try {
        return await submit();
      } catch (err) {
        if (this.requestCounter >= firstSeq) this.broken = new TrainingSequenceError(this.modelId, firstSeq, errorMessage(err));
        throw err;
      }
    };
    const run = this.submitChain.then(guarded, guarded);
    this.submitChain = run.catch(() => undefined);
    return run;
  }

  private async submitJson(path: string, body: Record<string, unknown>, signal?: AbortSignal, httpRetry = true): Promise<{ id: string; seconds: number }> {
    const t0 = Date.now();
    const h = await this.service.submissionRetries(
      () => this.service.transport.json(W.FutureHandle, { method: 'POST', path, json: body, signal, retry: httpRetry }),
      signal,
    );
    return { id: h.request_id, seconds: (Date.now() - t0) / 1000 };
  }

  private async submitForwardBackwardChunk(chunk: Datum[], seqId: number, lossFn: LossFnType, config: Record<string, number> | undefined, forwardOnly: boolean, signal?: AbortSignal): Promise<APIFuture<ForwardBackwardOutput>> {
    const s = this.service;
    const t0 = Date.now();
    let handle: W.FutureHandle;
    if (s.opts.forwardBackwardFormat === 'json') {
      const input = { data: chunk.map(jsonDatum), loss_fn: lossFn, ...(config ? { loss_fn_config: config } : {}) };
      const path = forwardOnly ? '/api/v1/forward' : '/api/v1/forward_backward';
      const body = forwardOnly ? { forward_input: input, model_id: this.modelId, seq_id: seqId } : { forward_backward_input: input, model_id: this.modelId, seq_id: seqId };
      handle = await s.submissionRetries(() => s.transport.json(W.FutureHandle, { method: 'POST', path, json: body, signal }), signal);
    } else {
      let bytes: Uint8Array = encodeForwardBackwardRequest({ model_id: this.modelId, seq_id: seqId, data: chunk, loss_fn: lossFn, loss_fn_config: config ?? null, forward_only: forwardOnly });
      const headers: Record<string, string> = {};
      if (s.config.proto_compress_fwdbwd && zstdCompress) {
        bytes = zstdCompress(bytes);
        headers['content-encoding'] = 'zstd';
      }
      handle = await s.submissionRetries(
        () => s.transport.json(W.FutureHandle, { method: 'POST', path: '/api/v1/forward_backward', body: bytes, contentType: 'application/x-protobuf', headers, signal }),
        signal,
      );
    }
    return s.future(handle.request_id, forwardOnly ? 'Forward' : 'ForwardBackward', { kind: 'forward_backward', map: (o) => o }, (Date.now() - t0) / 1000);
  }

  private async forwardImpl(data: Datum[], lossFn: LossFnType, config: Record<string, number> | undefined, forwardOnly: boolean, signal?: AbortSignal) {
    if (data.length === 0) throw new TinkerError('forward_backward needs at least one datum');
    const cfg = this.service.config;
    const chunks = chunkDatums(data, cfg.fwdbwd_max_chunk_len, cfg.fwdbwd_max_chunk_bytes_count);
    const futures = await this.ordered(async () => {
      const seqIds = chunks.map(() => this.nextSeqId());
      const submit = (i: number) => this.submitForwardBackwardChunk(chunks[i]!, seqIds[i]!, lossFn, config, forwardOnly, signal);
      if (chunks.length === 1 || !cfg.parallel_fwdbwd_chunks) {
        const out: APIFuture<ForwardBackwardOutput>[] = [];
        for (let i = 0; i < chunks.length; i++) out.push(await submit(i));
        return out;
      }
      // later chunks concurrently, the first one last (the server waits for it: seq_id order)
      const rest = await Promise.all(chunks.slice(1).map((_, j) => submit(j + 1)));
      return [await submit(0), ...rest];
    });
    // billed as training tokens whether forward only or not (a custom loss's forward included)
    this.usage?.add(this.baseModel, { train: data.reduce((n, d) => n + modelInputLength(d.model_input), 0) });
    return new CombinedFuture<ForwardBackwardOutput>(futures, (results) => {
      const outs = results as ForwardBackwardOutput[];
      return {
        loss_fn_output_type: outs[0]?.loss_fn_output_type ?? 'ArrayRecord',
        loss_fn_outputs: outs.flatMap((o) => o.loss_fn_outputs),
        metrics: combineMetrics(outs.map((o, i) => ({ metrics: o.metrics, datums: chunks[i]!.length }))),
      };
    });
  }

  /** Submits forward+backward (gradients accumulate until optimStep); resolves once submitted. */
  forwardBackward(data: Datum[], lossFn: LossFnType, config?: Record<string, number>, signal?: AbortSignal) {
    return this.forwardImpl(data, lossFn, config, false, signal);
  }

  /** Submits a forward pass only (no gradients). */
  forward(data: Datum[], lossFn: LossFnType, config?: Record<string, number>, signal?: AbortSignal) {
    return this.forwardImpl(data, lossFn, config, true, signal);
  }

  /**
   * A loss computed in the client from the datums' per-token log-probs (customLoss.ts): forward, the
   * loss and its gradient, then a cross_entropy forward_backward with weights = −gradient. Resolves
   * once both passes are done (the gradients then wait for optimStep like any forward_backward's).
   */
  forwardBackwardCustom(data: Datum[], lossFn: CustomLossFn, signal?: AbortSignal): Promise<CustomForwardBackwardOutput> {
    return forwardBackwardCustom(this, data, lossFn, signal);
  }

  optimStep(adam: Partial<AdamParams> = {}, signal?: AbortSignal): Promise<APIFuture<z.output<typeof W.OptimStepResult>>> {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson('/api/v1/optim_step', { adam_params: { ...DEFAULT_ADAM, ...adam }, model_id: this.modelId, seq_id: seq, type: 'optim_step' }, signal);
      return this.service.future(h.id, 'OptimStep', { kind: 'json', schema: W.OptimStepResult }, h.seconds);
    });
  }

  /** Saves weights and optimizer state as tinker://<run>/weights/<name>. */
  saveState(name: string, o: { ttlSeconds?: number; overwrite?: boolean; userMetadata?: Record<string, string> } = {}, signal?: AbortSignal) {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson(
        '/api/v1/save_weights',
        { model_id: this.modelId, path: name, seq_id: seq, ...(o.ttlSeconds ? { ttl_seconds: o.ttlSeconds } : {}), overwrite: o.overwrite ?? false, ...this.metadataField(o.userMetadata), type: 'save_weights' },
        signal,
        false,
      );
      return this.service.future(h.id, 'SaveWeights', { kind: 'json', schema: W.SaveWeightsResult }, h.seconds);
    });
  }

  /** `user_metadata` of a save body (the SDK's save_state/save_weights_for_sampler parameter), left out when there is none. */
  private metadataField(given: Record<string, string> | undefined): { user_metadata?: Record<string, string> } {
    const m = given ?? this.checkpointMetadata;
    return m && Object.keys(m).length ? { user_metadata: m } : {};
  }

  /** Saves sampler weights as tinker://<run>/sampler_weights/<name>. */
  saveWeightsForSampler(name: string, o: { ttlSeconds?: number; userMetadata?: Record<string, string> } = {}, signal?: AbortSignal) {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson(
        '/api/v1/save_weights_for_sampler',
        { model_id: this.modelId, path: name, seq_id: seq, ...(o.ttlSeconds ? { ttl_seconds: o.ttlSeconds } : {}), ...this.metadataField(o.userMetadata), type: 'save_weights_for_sampler' },
        signal,
        false,
      );
      return this.service.future(h.id, 'SaveWeightsForSampler', { kind: 'json', schema: W.SaveWeightsForSamplerResult }, h.seconds);
    });
  }

  /** An ephemeral snapshot of the current weights, ready to sample from (not persisted). */
  async saveWeightsAndGetSamplingClient(signal?: AbortSignal): Promise<SamplingClient> {
    const fut = await this.ordered(async () => {
      const seq = this.nextSeqId();
      const samplingSeq = this.service.nextSamplingSeq();
      const h = await this.submitJson(
        '/api/v1/save_weights_for_sampler',
        { model_id: this.modelId, seq_id: seq, sampling_session_seq_id: samplingSeq, type: 'save_weights_for_sampler' },
        signal,
        false,
      );
      return this.service.future(h.id, 'SaveWeightsForSampler', { kind: 'json', schema: W.SaveWeightsForSamplerResult }, h.seconds);
    });
    const r = await fut.result(signal);
    const sampler = r.sampling_session_id
      ? new SamplingClient(this.service, r.sampling_session_id, undefined, this.baseModel)
      : r.path
        ? await this.service.createSamplingClient({ modelPath: r.path, baseModel: this.baseModel }, signal)
        : undefined;
    if (sampler) {
      sampler.usage = this.usage;
      return sampler;
    }
    throw new TinkerError('save_weights_for_sampler returned neither a sampler id nor a path');
  }

  /** Loads a training-state checkpoint; must be the model's first request. */
  loadState(path: string, withOptimizer: boolean, signal?: AbortSignal) {
    return this.ordered(async () => {
      const seq = this.nextSeqId();
      const h = await this.submitJson('/api/v1/load_weights', { model_id: this.modelId, seq_id: seq, path, optimizer: withOptimizer, type: 'load_weights' }, signal);
      return this.service.future(h.id, 'LoadWeights', { kind: 'json', schema: W.LoadWeightsResult }, h.seconds);
    });
  }

  async getInfo(signal?: AbortSignal): Promise<W.GetInfoResponse> {
    return this.service.submissionRetries(
      () => this.service.transport.json(W.GetInfoResponse, { method: 'POST', path: '/api/v1/get_info', json: { model_id: this.modelId, type: 'get_info' }, signal }),
      signal,
    );
  }

  async unload(signal?: AbortSignal): Promise<void> {
    const h = await this.service.transport.json(W.FutureHandle, { method: 'POST', path: '/api/v1/unload_model', json: { model_id: this.modelId, type: 'unload_model' }, signal });
    await this.service.future(h.request_id, 'UnloadModel', { kind: 'json', schema: W.UnloadModelResult }).result(signal);
  }
}

function jsonTensor(t: TensorData) {
  return { ...t, data: Array.from(t.data) };
}

function jsonDatum(d: Datum) {
  return {
    model_input: { chunks: d.model_input.chunks.map((c) => (c.type === 'encoded_text' ? { type: c.type, tokens: Array.from(c.tokens) } : c)) },
    loss_fn_inputs: Object.fromEntries(Object.entries(d.loss_fn_inputs).map(([k, t]) => [k, jsonTensor(t)])),
  };
}
