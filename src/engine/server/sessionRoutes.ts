// Sessions and futures: the client's handshake (config, capabilities), session creation, heartbeats
// and expiry, and retrieve_future, through which every asynchronous request is answered.
import { randomBytes } from 'node:crypto';
import { encodeForwardBackwardOutput, encodeSampleResponse } from '../../core/tinker/proto';
import type { ForwardBackwardOutput } from '../../core/tinker/types';
import * as W from '../../core/tinker/wire';
import { HttpError, Router, parseJson, wantsProtobuf, zstdDecompress } from './http';
import { EngineState, Session, api } from './state';

export function addSessionRoutes(r: Router, st: EngineState): void {
  const { opts, futures } = st;
  const compress = Boolean(opts.compressForwardBackward && zstdDecompress);

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
    json: { supported_models: [...st.baseModels.values()].map((m) => ({ model_name: m.name, max_context_length: m.maxContextLength })) },
  }));

  r.add('POST', api('create_session'), (req) => {
    const b = parseJson(req, W.CreateSessionRequest);
    const id = `sess-${randomBytes(6).toString('hex')}`;
    st.sessions.set(id, { id, lastSeen: Date.now(), modelSeq: new Map(), samplingSeq: new Map(), models: new Set(), samplers: new Set(), ...(b.project_id ? { projectId: b.project_id } : {}) });
    return { json: { type: 'create_session', session_id: id, info_message: null, warning_message: null, error_message: null } };
  });
  r.add('POST', api('session_heartbeat'), (req) => {
    const b = parseJson(req, W.HeartbeatRequest);
    st.session(b.session_id);
    return { json: { type: 'session_heartbeat' } };
  });

  // The SDK's list_sessions / get_session: the sessions alive on this engine (newest first), and what
  // one of them created.
  r.add('GET', api('sessions'), (req) => {
    const limit = Math.max(1, Math.min(1000, Number(req.query.get('limit') ?? 20) || 20));
    const offset = Math.max(0, Number(req.query.get('offset') ?? 0) || 0);
    const all = [...st.sessions.values()].reverse().map((s) => s.id);
    return { json: { sessions: all.slice(offset, offset + limit) } };
  });
  r.add('GET', api('sessions/{id}'), (req) => {
    const s = st.sessions.get(req.params.id!);
    if (!s) throw new HttpError(404, `session ${req.params.id} not found (ended, or never created on this engine)`);
    return { json: { training_run_ids: [...s.models], sampler_ids: [...s.samplers] } };
  });

  const notYet = (requestId: string, q: { queue_state: string; queue_state_reason?: string }) =>
    (opts.longPollTimeoutStatus ?? 200) === 408 ? { status: 408, json: { detail: 'Timeout waiting for result', ...q } } : { json: { type: 'try_again', request_id: requestId, ...q } };
  r.add('POST', api('retrieve_future'), async (req) => {
    const b = parseJson(req, W.RetrieveFutureRequest);
    if (st.simulator && typeof futures.lookup(b.request_id) === 'object') {
      const paused = await st.simulator.poll(b.request_id, typeof req.headers['x-tinker-request-type'] === 'string' ? req.headers['x-tinker-request-type'] : undefined);
      if (paused) return notYet(b.request_id, paused);
    }
    const abort = new AbortController();
    const state = await futures.wait(b.request_id, st.longPollMs, abort.signal);
    if (state === 'unknown') throw new HttpError(404, `request ${b.request_id} not found`);
    if (state === 'expired') throw new HttpError(410, `the promise for request ${b.request_id} expired (the engine restarted or dropped it): resubmit the request`);
    if (state.state === 'pending') return notYet(b.request_id, { queue_state: 'active' });
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

  // Engine-specific: how many requests were accepted and how many are still being worked on.
  r.add('GET', api('_engine/requests'), () => ({ json: { pending: futures.pendingCount(), issued: futures.issuedCount() } }));
}

/** Ends a session that stopped sending heartbeats: its training models and samplers are released. */
export async function releaseSession(st: EngineState, s: Session): Promise<void> {
  st.sessions.delete(s.id);
  for (const id of s.models) {
    const m = st.models.get(id);
    if (m && !m.released) {
      m.released = true;
      await st.backend.releaseTrainingModel(id).catch(() => undefined);
    }
  }
  for (const id of s.samplers) {
    st.samplers.delete(id);
    await st.backend.releaseSampler(id).catch(() => undefined);
  }
  st.log(`session ${s.id} expired: released ${s.models.size} models and ${s.samplers.size} samplers`);
}

function jsonOutput(out: ForwardBackwardOutput) {
  return {
    loss_fn_output_type: out.loss_fn_output_type,
    loss_fn_outputs: out.loss_fn_outputs.map((o) => Object.fromEntries(Object.entries(o).map(([k, t]) => [k, { dtype: t.dtype, data: Array.from(t.data), shape: t.shape }]))),
    metrics: out.metrics,
  };
}
