// Checkpoint management on a Tinker server through the project's client: the server's runs page by
// page, a run's checkpoints, publish/unpublish, TTL, delete (many at once, bounded, each outcome
// reported), weights info. Every failure comes back as a CheckpointError that says what happened.
import type { ServiceClient } from '../tinker/client';
import { splitTinkerPath } from '../tinker/client';
import type { Checkpoint, TrainingRun } from '../tinker/wire';
import { ItemOutcome, forEachBounded } from './bulk';
import { describeCheckpointError } from './errors';
import { CheckpointKind, kindOfServerCheckpoint, parseDate } from './format';

/** A checkpoint as the server reports it. */
export interface ServerCheckpoint {
  tinkerPath: string;
  runId: string;
  name: string;
  kind: CheckpointKind;
  /** the server's checkpoint_type as it sent it ("training", "sampler", "external", or newer) */
  type: string;
  /** whether the path has the form the management calls need (tinker://<run>/<weights|sampler_weights>/<name>) */
  manageable: boolean;
  time?: Date;
  public: boolean;
  expiresAt?: Date;
  sizeBytes?: number;
  /** the base model it was trained from, when the server says */
  baseModel?: string;
  /** the metadata given at save time, when the server reports it */
  userMetadata?: Record<string, string>;
}

export function toServerCheckpoint(c: Checkpoint): ServerCheckpoint {
  let runId: string;
  let name: string;
  let manageable = true;
  try {
    ({ runId, name } = splitTinkerPath(c.tinker_path));
  } catch {
    // a path of a form this client does not know (a newer checkpoint type): shown, not managed
    manageable = false;
    const parts = c.tinker_path.replace(/^tinker:\/\//, '').split('/');
    runId = parts[0] ?? '';
    name = parts[parts.length - 1] || c.checkpoint_id;
  }
  return {
    tinkerPath: c.tinker_path,
    runId,
    name,
    kind: kindOfServerCheckpoint(c),
    type: c.checkpoint_type,
    manageable,
    time: parseDate(c.time),
    public: c.public,
    expiresAt: parseDate(c.expires_at),
    sizeBytes: c.size_bytes ?? undefined,
    ...(c.base_model ? { baseModel: c.base_model } : {}),
    ...(c.user_metadata && Object.keys(c.user_metadata).length ? { userMetadata: c.user_metadata } : {}),
  };
}

export interface RunsPage {
  runs: TrainingRun[];
  offset: number;
  /** where the next page starts, or undefined on the last page */
  nextOffset?: number;
  total?: number;
}

/** One page of the server's training runs (so hundreds of runs never block the first rows). */
export async function listServerRuns(client: ServiceClient, o: { offset?: number; limit?: number; projectId?: string } = {}, signal?: AbortSignal): Promise<RunsPage> {
  const offset = o.offset ?? 0;
  const limit = o.limit ?? 20;
  // project_id is a query parameter a server without projects ignores: nothing breaks there
  const page = await client.listTrainingRuns({ offset, limit, ...(o.projectId ? { projectId: o.projectId } : {}) }, signal);
  const end = offset + page.training_runs.length;
  const total = page.cursor?.total_count;
  const more = page.training_runs.length > 0 && (total !== undefined ? end < total : page.training_runs.length === limit);
  return { runs: page.training_runs, offset, nextOffset: more ? end : undefined, total };
}

/** A run's checkpoints, newest first. */
export async function listRunCheckpoints(client: ServiceClient, runId: string, signal?: AbortSignal): Promise<ServerCheckpoint[]> {
  const r = await client.listCheckpoints(runId, signal);
  return r.checkpoints.map(toServerCheckpoint).sort((a, b) => (b.time?.getTime() ?? 0) - (a.time?.getTime() ?? 0));
}

/**
 * The server's view of the checkpoints of several runs, by tinker:// path: what a local run's
 * records are decorated with. A run the server cannot list is reported in `errors`, not thrown.
 */
export async function checkpointsByPath(client: ServiceClient, runIds: readonly string[], signal?: AbortSignal) {
  const byPath = new Map<string, ServerCheckpoint>();
  const errors = new Map<string, Error>();
  const outcomes = await forEachBounded([...new Set(runIds)], 4, (runId) => listRunCheckpoints(client, runId, signal));
  for (const o of outcomes) {
    if (o.ok) for (const c of o.value) byPath.set(c.tinkerPath, c);
    else errors.set(o.item, o.error);
  }
  return { byPath, errors };
}

export interface ActionContext {
  signal?: AbortSignal;
  /** the expiry last seen for the checkpoint: turns a 404 after it into "expired" */
  expiresAt?: Date;
}

async function mapped<T>(tinkerPath: string, action: string, ctx: ActionContext, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    throw describeCheckpointError(err, tinkerPath, { action, expiresAt: ctx.expiresAt });
  }
}

export function publishCheckpoint(client: ServiceClient, tinkerPath: string, ctx: ActionContext = {}): Promise<void> {
  return mapped(tinkerPath, 'publish', ctx, () => client.publishCheckpoint(tinkerPath, ctx.signal));
}

export function unpublishCheckpoint(client: ServiceClient, tinkerPath: string, ctx: ActionContext = {}): Promise<void> {
  return mapped(tinkerPath, 'unpublish', ctx, () => client.unpublishCheckpoint(tinkerPath, ctx.signal));
}

/** Expire the checkpoint `ttlSeconds` from now, or never with null. */
export function setCheckpointTtl(client: ServiceClient, tinkerPath: string, ttlSeconds: number | null, ctx: ActionContext = {}): Promise<void> {
  return mapped(tinkerPath, ttlSeconds === null ? 'clear the TTL of' : 'set the TTL of', ctx, () => client.setCheckpointTtl(tinkerPath, ttlSeconds, ctx.signal));
}

export function deleteCheckpoint(client: ServiceClient, tinkerPath: string, ctx: ActionContext = {}): Promise<void> {
  return mapped(tinkerPath, 'delete', ctx, () => client.deleteCheckpoint(tinkerPath, ctx.signal));
}

/** The default number of checkpoint operations in flight at once. */
export const BULK_CONCURRENCY = 4;

/**
 * Applies `action` to every path, at most `concurrency` at a time; one failure never stops the
 * others. Outcomes come back in the order of `paths`.
 */
export function forEachCheckpoint(
  paths: readonly string[],
  action: (tinkerPath: string) => Promise<void>,
  o: { concurrency?: number; onSettled?: (outcome: ItemOutcome<string, void>, done: number) => void } = {},
): Promise<Array<ItemOutcome<string, void>>> {
  return forEachBounded(paths, o.concurrency ?? BULK_CONCURRENCY, action, o.onSettled);
}

/** "3 of 4 deleted; 1 failed: <path>: <why>" */
export function bulkSummary(verb: string, outcomes: ReadonlyArray<ItemOutcome<string, unknown>>): string {
  const failed = outcomes.filter((o): o is Extract<typeof o, { ok: false }> => !o.ok);
  const ok = outcomes.length - failed.length;
  const head = `${ok} of ${outcomes.length} ${verb}`;
  if (!failed.length) return head;
  return `${head}; ${failed.length} failed: ${failed.map((f) => f.error.message).join('; ')}`;
}

export interface WeightsSummary {
  baseModel: string;
  isLora: boolean;
  loraRank?: number;
  /** the parts LoRA trains: attention, MLP, unembedding */
  trained: string[];
}

export async function checkpointWeightsInfo(client: ServiceClient, tinkerPath: string, ctx: ActionContext = {}): Promise<WeightsSummary> {
  const w = await mapped(tinkerPath, 'read the weights info of', ctx, () => client.weightsInfo(tinkerPath, ctx.signal));
  const trained = [w.train_attn !== false ? 'attention' : undefined, w.train_mlp !== false ? 'MLP' : undefined, w.train_unembed !== false ? 'unembedding' : undefined].filter(
    (x): x is string => x !== undefined,
  );
  return { baseModel: w.base_model, isLora: w.is_lora, loraRank: w.lora_rank ?? undefined, trained };
}

export function weightsInfoLines(w: WeightsSummary): string[] {
  return [`base model: ${w.baseModel}`, w.isLora ? `LoRA rank: ${w.loraRank ?? 'not reported'}` : 'full weights (not LoRA)', `trained parts: ${w.isLora ? w.trained.join(', ') || 'none reported' : 'all'}`];
}
