// Searching the caller's checkpoints on a Tinker server by metadata, type, base model and project.
// The filters run over the documented listing (GET /api/v1/checkpoints, newest first, a page at a
// time), so they work on every backend: the service's own search_checkpoints call is not used, as
// its HTTP request is not in the docs this client was checked against. Results come a page at a
// time: `next` is where the following page continues in the listing.
import type { ServiceClient } from '../tinker/client';
import { ServerCheckpoint, toServerCheckpoint } from './manage';

export interface CheckpointSearch {
  /** every key must have exactly this value in the checkpoint's user_metadata */
  metadata?: Record<string, string>;
  /** the server's checkpoint_type ("training", "sampler", "external", …); "state" is read as "training" */
  type?: string;
  /** the base model (the checkpoint's, else its training run's) */
  baseModel?: string;
  /** only checkpoints of training runs in this project */
  projectId?: string;
}

export interface SearchPage {
  matches: ServerCheckpoint[];
  /** the listing offset the next page starts at; undefined when the listing is exhausted */
  next?: number;
  /** how many checkpoints of the listing this page looked at */
  scanned: number;
}

const LISTING_PAGE = 100;

/** "k=v" → [k, v], with an error that says what to type. */
export function parseMetadataFilter(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new Error(`"${text}" is not a metadata filter: write key=value (e.g. run_name=demo)`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/**
 * A search typed on one line: `key=value` metadata filters, `type:<type>`, `base:<model>`,
 * `project:<id>`, separated by spaces (a value in double quotes may hold spaces).
 */
export function parseSearchQuery(text: string): CheckpointSearch {
  const q: CheckpointSearch = {};
  for (const m of text.matchAll(/(\S+?)(=|:)("([^"]*)"|\S*)/g)) {
    const [, key, sep, , quoted] = m;
    const value = quoted ?? m[3]!;
    if (!value) throw new Error(`"${m[0]}" has no value: write ${sep === '=' ? 'key=value' : `${key}:<value>`}`);
    if (sep === '=') (q.metadata ??= {})[key!] = value;
    else if (key === 'type') q.type = value;
    else if (key === 'base') q.baseModel = value;
    else if (key === 'project') q.projectId = value;
    else throw new Error(`unknown filter "${key}:": use type:, base:, project: or key=value for metadata`);
  }
  const rest = text.replace(/(\S+?)(=|:)("([^"]*)"|\S*)/g, '').trim();
  if (rest) throw new Error(`"${rest}" is not a filter: use key=value, type:<type>, base:<model> or project:<id>`);
  return q;
}

/** Matches of `q`, up to `limit`, from listing offset `from` on. */
export async function searchCheckpoints(client: ServiceClient, q: CheckpointSearch, o: { from?: number; limit?: number; signal?: AbortSignal } = {}): Promise<SearchPage> {
  const limit = o.limit ?? 20;
  const type = q.type === 'state' ? 'training' : q.type;
  let inProject: Set<string> | undefined;
  if (q.projectId) {
    inProject = new Set();
    for (let offset = 0; ; ) {
      const page = await client.listTrainingRuns({ offset, limit: 100, projectId: q.projectId }, o.signal);
      for (const r of page.training_runs) inProject.add(r.training_run_id);
      offset += page.training_runs.length;
      if (!page.cursor || page.training_runs.length === 0 || offset >= page.cursor.total_count) break;
    }
  }
  // base models of runs, for checkpoints the server lists without one (servers before base_model)
  const runBase = new Map<string, Promise<string | undefined>>();
  const baseOf = (c: ServerCheckpoint) => {
    if (c.baseModel) return Promise.resolve(c.baseModel);
    let p = runBase.get(c.runId);
    if (!p) {
      p = client.getTrainingRun(c.runId, o.signal).then((r) => r.base_model, () => undefined);
      runBase.set(c.runId, p);
    }
    return p;
  };
  const matches: ServerCheckpoint[] = [];
  let offset = o.from ?? 0;
  let scanned = 0;
  for (;;) {
    const page = await client.listUserCheckpoints({ offset, limit: LISTING_PAGE }, o.signal);
    const total = page.cursor?.total_count;
    for (let i = 0; i < page.checkpoints.length; i++) {
      const c = toServerCheckpoint(page.checkpoints[i]!);
      scanned++;
      if (await matchesSearch(c, q, type, inProject, baseOf)) matches.push(c);
      if (matches.length === limit) {
        const next = offset + i + 1;
        return { matches, scanned, ...(total === undefined || next < total ? { next } : {}) };
      }
    }
    offset += page.checkpoints.length;
    const done = page.checkpoints.length === 0 || (total !== undefined ? offset >= total : page.checkpoints.length < LISTING_PAGE);
    if (done) return { matches, scanned };
  }
}

async function matchesSearch(
  c: ServerCheckpoint,
  q: CheckpointSearch,
  type: string | undefined,
  inProject: Set<string> | undefined,
  baseOf: (c: ServerCheckpoint) => Promise<string | undefined>,
): Promise<boolean> {
  if (type && c.type !== type) return false;
  if (inProject && !inProject.has(c.runId)) return false;
  for (const [k, v] of Object.entries(q.metadata ?? {})) if (c.userMetadata?.[k] !== v) return false;
  if (q.baseModel && (await baseOf(c)) !== q.baseModel) return false;
  return true;
}
