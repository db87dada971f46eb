// The checkpoints that local run directories record (checkpoints.jsonl), each with its tinker://
// paths and the time it was saved, for the tree and the CLI to list beside the server's view.
import type { CheckpointRecord, RunSummary } from '../runs/runDirectory';
import { splitTinkerPath } from '../tinker/tinkerPath';

/** A time the record carries (ISO string or Unix seconds/milliseconds), if any. */
export function recordTime(c: CheckpointRecord): Date | undefined {
  for (const key of ['time', 'created_at', 'timestamp', 'saved_at']) {
    const v: unknown = c[key];
    let d: Date | undefined;
    if (typeof v === 'string') d = new Date(v);
    else if (typeof v === 'number' && Number.isFinite(v)) d = new Date(v < 1e11 ? v * 1000 : v);
    if (d && !Number.isNaN(d.getTime())) return d;
  }
  return undefined;
}

/** The tinker:// paths of a record: state and/or sampler. */
export function recordPaths(c: CheckpointRecord): Array<{ kind: 'state' | 'sampler'; tinkerPath: string }> {
  const out: Array<{ kind: 'state' | 'sampler'; tinkerPath: string }> = [];
  if (c.state_path) out.push({ kind: 'state', tinkerPath: c.state_path });
  if (c.sampler_path) out.push({ kind: 'sampler', tinkerPath: c.sampler_path });
  return out;
}

/** The server run ids the local runs' checkpoints live in (paths that do not parse are skipped). */
export function serverRunIds(runs: readonly RunSummary[]): string[] {
  const ids = new Set<string>();
  for (const r of runs)
    for (const c of r.checkpoints)
      for (const p of recordPaths(c)) {
        try {
          ids.add(splitTinkerPath(p.tinkerPath).runId);
        } catch {
          /* not a tinker:// path: nothing on the server to look up */
        }
      }
  return [...ids];
}
