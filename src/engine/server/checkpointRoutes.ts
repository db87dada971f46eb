// REST on training runs and checkpoints: listing, publishing, expiry, deletion and archive
// downloads, plus the engine's own record of applied training steps.
import { randomBytes } from 'node:crypto';
import * as W from '../../core/tinker/wire';
import { buildArchive } from './archive';
import { HttpError, Router, parseJson } from './http';
import { EngineState, api } from './state';
import type { RunRecord } from './store';

/** The longest expiry a checkpoint may be given: 100 years (a Date past ±8.64e15 ms cannot be written). */
export const MAX_TTL_SECONDS = 100 * 365 * 24 * 3600;

/** Refuses a ttl_seconds past MAX_TTL_SECONDS (400, naming the limit). */
export function checkTtl(ttlSeconds: number | null | undefined): void {
  if (ttlSeconds != null && ttlSeconds > MAX_TTL_SECONDS) {
    throw new HttpError(400, `ttl_seconds: at most ${MAX_TTL_SECONDS} (100 years) on the local engine (got ${ttlSeconds}); null removes the expiry`);
  }
}

/** The short-lived archive download links, which the server's sweep prunes and its stats count. */
export interface ArchiveLinks {
  count(): number;
  prune(): void;
}

export function addCheckpointRoutes(r: Router, st: EngineState): ArchiveLinks {
  const { store, backend, opts } = st;

  function checkpointOf(runId: string, ckptId: string) {
    const run = st.runOf(runId);
    if (!/^(weights|sampler_weights)\/[A-Za-z0-9_.-]+$/.test(ckptId)) {
      throw new HttpError(400, `invalid checkpoint id "${ckptId}": expected weights/<name> or sampler_weights/<name>`);
    }
    const c = run.checkpoints.find((x) => x.checkpoint_id === ckptId);
    if (!c) throw new HttpError(404, `checkpoint ${ckptId} of ${runId} not found`);
    return { run, c };
  }

  r.add('GET', api('training_runs'), async (req) => {
    await store.expire();
    const { limit, offset } = page(req.query, 20);
    // project_id: the runs created in that project (a session's project); without it, every run
    const project = req.query.get('project_id');
    const all = store.allRuns().filter((run) => !project || run.project_id === project);
    return { json: { training_runs: all.slice(offset, offset + limit).map(runJson), cursor: { offset, limit, total_count: all.length } } };
  });
  r.add('GET', api('training_runs/{run}'), async (req) => {
    await store.expire();
    return { json: runJson(st.runOf(req.params.run!)) };
  });
  r.add('GET', api('training_runs/{run}/checkpoints'), async (req) => {
    await store.expire();
    const run = st.runOf(req.params.run!);
    return { json: { checkpoints: [...run.checkpoints].sort((a, b) => b.time.localeCompare(a.time)).map((c) => checkpointJson(c, run)), cursor: null } };
  });
  r.add('GET', api('checkpoints'), async (req) => {
    await store.expire();
    const { limit, offset } = page(req.query, 100);
    const all = store
      .allRuns()
      .flatMap((run) => run.checkpoints.map((c) => ({ c, run })))
      .sort((a, b) => b.c.time.localeCompare(a.c.time));
    return { json: { checkpoints: all.slice(offset, offset + limit).map(({ c, run }) => checkpointJson(c, run)), cursor: { offset, limit, total_count: all.length } } };
  });
  r.add('POST', api('training_runs/{run}/checkpoints/{ckpt}*/publish'), async (req) => {
    await store.refresh();
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    if (c.public) throw new HttpError(409, `checkpoint ${c.checkpoint_id} is already public`);
    c.public = true;
    await store.save();
    return { status: 204, empty: true };
  });
  r.add('DELETE', api('training_runs/{run}/checkpoints/{ckpt}*/publish'), async (req) => {
    await store.refresh();
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    if (!c.public) throw new HttpError(409, `checkpoint ${c.checkpoint_id} is already private`);
    c.public = false;
    await store.save();
    return { status: 204, empty: true };
  });
  r.add('PUT', api('training_runs/{run}/checkpoints/{ckpt}*/ttl'), async (req) => {
    const b = parseJson(req, W.TtlRequest);
    checkTtl(b.ttl_seconds);
    await store.refresh();
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
  r.add('GET', api('training_runs/{run}/checkpoints/{ckpt}*/archive'), async (req) => {
    await store.refresh();
    const { c } = checkpointOf(req.params.run!, req.params.ckpt!);
    pruneArchiveTokens();
    const token = randomBytes(12).toString('hex');
    const expires = Date.now() + (opts.archiveLinkTtlMs ?? 15 * 60_000);
    archiveTokens.set(token, { run: req.params.run!, ckpt: c.checkpoint_id, expires });
    return { status: 302, empty: true, headers: { location: `${st.url}/api/v1/_engine/archives/${token}.tar`, expires: new Date(expires).toUTCString() } };
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
    await store.refresh();
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

  return { count: () => archiveTokens.size, prune: () => pruneArchiveTokens() };
}

function checkpointJson(c: RunRecord['checkpoints'][number], run: RunRecord) {
  const { file: _file, user_metadata, ...rest } = c;
  return { ...rest, base_model: run.base_model, user_metadata: user_metadata ?? null };
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
    last_checkpoint: lt ? checkpointJson(lt, r) : null,
    last_sampler_checkpoint: ls ? checkpointJson(ls, r) : null,
    user_metadata: r.user_metadata,
    ...(r.project_id ? { project_id: r.project_id } : {}),
  };
}

function page(query: URLSearchParams, defaultLimit: number): { limit: number; offset: number } {
  const limit = Number(query.get('limit') ?? defaultLimit);
  const offset = Number(query.get('offset') ?? 0);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new HttpError(400, 'limit must be an integer from 1 to 10000');
  if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, 'offset must be a non-negative integer');
  return { limit, offset };
}
