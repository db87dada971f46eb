// `tinker-studio checkpoints …`: list, publish/unpublish, TTL, delete and download on the same core
// as the Checkpoints view (src/core/checkpoints). Bulk actions report each path's outcome and exit 1
// when any failed; nothing stops at the first failure.
import * as path from 'node:path';
import { ItemOutcome } from '../core/checkpoints/bulk';
import { downloadCheckpoint } from '../core/checkpoints/download';
import { expiryText, parseTtl, sizeText } from '../core/checkpoints/format';
import { recordPaths, serverRunIds } from '../core/checkpoints/local';
import {
  ServerCheckpoint,
  checkpointsByPath,
  deleteCheckpoint,
  forEachCheckpoint,
  listRunCheckpoints,
  listServerRuns,
  publishCheckpoint,
  setCheckpointTtl,
  unpublishCheckpoint,
} from '../core/checkpoints/manage';
import { listRuns } from '../core/runs/runDirectory';
import type { ServiceClient } from '../core/tinker/client';
import type { CheckpointsArgs } from './checkpointsArgs';

export interface CheckpointsIo {
  out: (text: string) => void;
  err: (text: string) => void;
  signal?: AbortSignal;
}

function checkpointLine(c: ServerCheckpoint, now: Date): string {
  return [
    c.kind.padEnd(7),
    c.tinkerPath,
    c.time?.toISOString() ?? '',
    c.public ? 'public' : 'private',
    expiryText(c.expiresAt, now) ?? 'no expiry',
    c.sizeBytes !== undefined ? sizeText(c.sizeBytes) : '',
    c.baseModel ? `base ${c.baseModel}` : '',
    c.userMetadata ? Object.entries(c.userMetadata).map(([k, v]) => `${k}=${v}`).join(',') : '',
  ]
    .filter((part, i) => i < 5 || part)
    .join('  ')
    .trimEnd();
}

const asJson = (c: ServerCheckpoint) => ({ ...c, time: c.time?.toISOString(), expiresAt: c.expiresAt?.toISOString() });

export async function runCheckpoints(a: CheckpointsArgs, client: ServiceClient, io: CheckpointsIo): Promise<number> {
  const now = new Date();
  switch (a.action) {
    case 'list': {
      if (a.run) {
        const list = await listRunCheckpoints(client, a.run, io.signal);
        if (a.json) io.out(`${JSON.stringify(list.map(asJson), null, 2)}\n`);
        else io.out(list.length ? `${list.map((c) => checkpointLine(c, now)).join('\n')}\n` : `run ${a.run} has no checkpoints\n`);
        return 0;
      }
      if (a.local) {
        const runs = await listRuns(path.resolve(a.runsDir ?? process.env.TINKER_STUDIO_RUNS_DIR ?? 'runs'));
        const { byPath, errors } = await checkpointsByPath(client, serverRunIds(runs), io.signal);
        const rows = runs.flatMap((r) => r.checkpoints.flatMap((c) => recordPaths(c).map((p) => ({ run: r.name, checkpoint: c.name, ...p, server: byPath.get(p.tinkerPath) }))));
        if (a.json) io.out(`${JSON.stringify(rows.map((r) => ({ ...r, server: r.server ? asJson(r.server) : null })), null, 2)}\n`);
        else
          io.out(
            rows
              .map((r) => `${r.run}/${r.checkpoint}  ${r.server ? checkpointLine(r.server, now) : `${r.kind.padEnd(7)}  ${r.tinkerPath}  not on the server`}`)
              .join('\n') + (rows.length ? '\n' : 'no checkpoints in the runs folder\n'),
          );
        for (const [runId, e] of errors) io.err(`could not ask the server about run ${runId}: ${e.message}\n`);
        return 0;
      }
      const page = await listServerRuns(client, { offset: a.offset, limit: a.limit ?? 20 }, io.signal);
      if (a.json) io.out(`${JSON.stringify({ training_runs: page.runs, next_offset: page.nextOffset ?? null, total: page.total ?? null }, null, 2)}\n`);
      else {
        for (const r of page.runs) {
          io.out(`${r.training_run_id}  ${r.base_model}${r.lora_rank ? `  rank ${r.lora_rank}` : ''}${r.last_request_time ? `  last ${r.last_request_time}` : ''}\n`);
        }
        if (page.runs.length === 0) io.out('no training runs on this server\n');
        const shown = `runs ${page.offset + 1}–${page.offset + page.runs.length}${page.total !== undefined ? ` of ${page.total}` : ''}`;
        io.out(page.nextOffset !== undefined ? `${shown}; next page: --offset ${page.nextOffset}\n` : page.runs.length ? `${shown}\n` : '');
      }
      return 0;
    }
    case 'search': {
      const { searchCheckpoints } = await import('../core/checkpoints/search');
      const page = await searchCheckpoints(
        client,
        { ...(a.metadata ? { metadata: a.metadata } : {}), ...(a.type ? { type: a.type } : {}), ...(a.baseModel ? { baseModel: a.baseModel } : {}), ...(a.project ? { projectId: a.project } : {}) },
        { from: a.offset ?? 0, limit: a.limit ?? 20, signal: io.signal },
      );
      if (a.json) io.out(`${JSON.stringify({ checkpoints: page.matches.map(asJson), next_offset: page.next ?? null }, null, 2)}\n`);
      else {
        for (const c of page.matches) io.out(`${checkpointLine(c, now)}\n`);
        if (page.matches.length === 0) io.out('no checkpoint matches\n');
        if (page.next !== undefined) io.out(`more may match: --offset ${page.next}\n`);
      }
      return 0;
    }
    case 'download': {
      const target = a.paths[0]!;
      let lastPct = -1;
      const r = await downloadCheckpoint(client, target, path.resolve(a.output ?? '.'), {
        signal: io.signal,
        // the CLI's proxy is the environment's (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)
        network: { env: process.env },
        onProgress: ({ received, total }) => {
          const pct = total ? Math.floor((received / total) * 100) : undefined;
          if (pct !== undefined && pct >= lastPct + 10) {
            lastPct = pct;
            io.err(`downloading ${target}: ${pct}% of ${sizeText(total!)}\n`);
          }
        },
      });
      io.out(`downloaded ${target} into ${r.dir} (${r.files.join(', ')}; ${sizeText(r.bytes)})\n`);
      return 0;
    }
    default:
      return bulkAction(a, client, io);
  }
}

async function bulkAction(a: CheckpointsArgs, client: ServiceClient, io: CheckpointsIo): Promise<number> {
  let action: (p: string) => Promise<void>;
  let done: string;
  if (a.action === 'publish') [action, done] = [(p) => publishCheckpoint(client, p, { signal: io.signal }), 'published'];
  else if (a.action === 'unpublish') [action, done] = [(p) => unpublishCheckpoint(client, p, { signal: io.signal }), 'unpublished'];
  else if (a.action === 'ttl') {
    const seconds = a.clear ? null : parseTtl(a.ttl!);
    [action, done] = [(p) => setCheckpointTtl(client, p, seconds, { signal: io.signal }), seconds === null ? 'kept without expiry' : `set to expire in ${a.ttl}`];
  } else {
    if (!a.yes) {
      io.err(`this deletes ${a.paths.length} checkpoint${a.paths.length === 1 ? '' : 's'} for good:\n${a.paths.map((p) => `  ${p}`).join('\n')}\nrun again with --yes to delete them\n`);
      return 2;
    }
    [action, done] = [(p) => deleteCheckpoint(client, p, { signal: io.signal }), 'deleted'];
  }
  const outcomes: Array<ItemOutcome<string, void>> = await forEachCheckpoint(a.paths, action, {
    concurrency: a.concurrency,
    onSettled: (o) => (o.ok ? io.out(`${done}: ${o.item}\n`) : io.err(`failed: ${o.error.message}\n`)),
  });
  const failed = outcomes.filter((o) => !o.ok).length;
  io.out(`${outcomes.length - failed} of ${outcomes.length} ${done}${failed ? `; ${failed} failed` : ''}\n`);
  return failed ? 1 : 0;
}
