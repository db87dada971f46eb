// When a version's checkpoint expires (a TTL set at save time or later), as the server says: the
// registry records it, and a production version that will expire is flagged with "Clear TTL".
import { listRunCheckpoints } from '../checkpoints/manage';
import { parseTinkerPath } from '../tinker/tinkerPath';
import type { ServiceClient } from '../tinker/client';
import { requireVersion, setExpiry } from './lifecycle';
import type { ModelVersion } from './registry';
import { readRegistry } from './store';

/** The earliest expiry of the version's checkpoints on the server (undefined: none expires); throws when a path is not there. */
export async function serverExpiry(client: ServiceClient, v: Pick<ModelVersion, 'id' | 'sampler_path' | 'state_path'>, signal?: AbortSignal): Promise<Date | undefined> {
  const paths = [v.sampler_path, v.state_path].filter((p): p is string => !!p);
  let earliest: Date | undefined;
  const byRun = new Map<string, Awaited<ReturnType<typeof listRunCheckpoints>>>();
  for (const p of paths) {
    const runId = parseTinkerPath(p).runId;
    if (!byRun.has(runId)) byRun.set(runId, await listRunCheckpoints(client, runId, signal));
    const c = byRun.get(runId)!.find((x) => x.tinkerPath === p);
    if (!c) throw new Error(`${v.id}: the server has no checkpoint ${p} (deleted, expired, or on another server)`);
    if (c.expiresAt && (!earliest || c.expiresAt < earliest)) earliest = c.expiresAt;
  }
  return earliest;
}

/** Asks the server when the version's checkpoints expire and records it in the registry. */
export async function refreshExpiry(file: string, id: string, client: ServiceClient, signal?: AbortSignal): Promise<ModelVersion> {
  const v = requireVersion(await readRegistry(file), id);
  const at = await serverExpiry(client, v, signal);
  return setExpiry(file, v.id, at?.toISOString());
}
