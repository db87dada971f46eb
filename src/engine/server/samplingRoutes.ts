// Sampling: sampling sessions (from a base model, a saved checkpoint or a training model's weights)
// and asample, including `direct:` samplers that a request names by base model or path alone.
import type { SamplingParams as EngineSamplingParams } from '../contract';
import type { SampleResponse } from '../../core/tinker/types';
import * as W from '../../core/tinker/wire';
import { HttpError, Router, parseJson } from './http';
import { EngineState, api, future, hashOf } from './state';

/** Limits on one sampling request: the engine is a local trainer, not a service for anyone. */
export const MAX_NUM_SAMPLES = 256;
export const MAX_SAMPLING_TOKENS = 16_384;

export function addSamplingRoutes(r: Router, st: EngineState): void {
  const { futures, backend, samplers, directSamplers, sessions } = st;

  const createSampler = (id: string, source: { baseModel: string } | { modelPath: string }, sessionId: string | null) => createSamplerIn(st, id, source, sessionId);

  r.add('POST', api('create_sampling_session'), async (req) => {
    const b = parseJson(req, W.CreateSamplingSessionRequest);
    const s = st.session(b.session_id);
    if ((b.base_model == null) === (b.model_path == null)) throw new HttpError(400, 'give exactly one of base_model and model_path');
    const id = `${s.id}:sample:${b.sampling_session_seq_id}`;
    const hash = hashOf('create_sampling_session', req.body);
    const prior = s.samplingSeq.get(b.sampling_session_seq_id);
    if (prior ? prior.hash !== hash : samplers.has(id)) throw new HttpError(409, `sampling_session_seq_id ${b.sampling_session_seq_id} was already used in session ${s.id}`);
    // a replay (its answer was lost) waits for the same sampler instead of getting 409
    const ready = prior?.ready ?? st.background(createSampler(id, b.model_path ? { modelPath: b.model_path } : { baseModel: b.base_model! }, s.id));
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
      for (const x of c.tokens) tokens.push(x);
    }
    const params = samplingParams(b.sampling_params);
    const requestId = futures.create();
    const id = samplerId;
    const direct = directSamplers.get(id);
    if (direct) direct.active++;
    st.track(requestId, async () => {
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
}

async function createSamplerIn(st: EngineState, id: string, source: { baseModel: string } | { modelPath: string }, sessionId: string | null): Promise<void> {
  if ('baseModel' in source) {
    st.requireBaseModel(source.baseModel);
    await st.backend.createSampler(id, { baseModel: source.baseModel });
    st.samplers.set(id, { baseModel: source.baseModel, modelPath: null, sessionId });
  } else {
    const { bytes } = await st.checkpointBytesOr404(source.modelPath);
    const desc = st.backend.describeState(bytes);
    await st.backend.createSampler(id, { state: bytes });
    st.samplers.set(id, { baseModel: desc.baseModel, modelPath: source.modelPath, sessionId });
  }
  if (sessionId) st.sessions.get(sessionId)?.samplers.add(id);
}

/**
 * The session-less sampler of a base model or a sampler checkpoint (created on first use, shared,
 * released once idle), marked in use until `release()`: what `asample` without a session and the
 * OpenAI-compatible routes sample with.
 */
export async function useDirectSampler(st: EngineState, source: { baseModel: string } | { modelPath: string }): Promise<{ id: string; baseModel: string; release(): void }> {
  const id = `direct:${'baseModel' in source ? source.baseModel : source.modelPath}`;
  if (!st.samplers.has(id)) {
    await createSamplerIn(st, id, source, null);
    if (!st.directSamplers.has(id)) st.directSamplers.set(id, { lastUsed: Date.now(), active: 0 });
  }
  const d = st.directSamplers.get(id);
  if (d) d.active++;
  let released = false;
  return {
    id,
    baseModel: st.samplers.get(id)!.baseModel,
    release: () => {
      if (released || !d) return;
      released = true;
      d.active--;
      d.lastUsed = Date.now();
    },
  };
}

/** Releases the direct samplers idle since before `cutoff`. */
export async function releaseIdleDirectSamplers(st: EngineState, cutoff: number): Promise<void> {
  for (const [id, d] of [...st.directSamplers]) {
    if (d.active > 0 || d.lastUsed >= cutoff) continue;
    st.directSamplers.delete(id);
    st.samplers.delete(id);
    await st.backend.releaseSampler(id).catch(() => undefined);
    st.log(`released sampler ${id} (idle)`);
  }
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
