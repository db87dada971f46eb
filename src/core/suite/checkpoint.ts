// What "a checkpoint" means to a suite run: a base model name, a tinker:// sampler path, or a run
// (its directory, or `latest` / `latest:<runs dir>`: the newest run with sampler checkpoints), which
// stands for its final sampler checkpoint. A run resolves to its tinker:// path, so a result is kept
// under the path whichever way the checkpoint was named.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listRuns, type RunSummary } from '../runs/runDirectory';

export interface SuiteCheckpoint {
  /** what the user reads: the model name, the path, or `<run>/<checkpoint>` */
  label: string;
  /** a base model name or a tinker:// sampler path: the key of the result */
  path: string;
  /** the base model it runs on, when known without asking the server */
  model?: string;
}

export class SuiteCheckpointError extends Error {}

/** A run's final sampler checkpoint (the one named "final", else the last one saved with a sampler). */
function finalOf(run: RunSummary): SuiteCheckpoint {
  const withSampler = run.checkpoints.filter((c) => c.sampler_path);
  const c = withSampler.find((x) => x.name === 'final') ?? withSampler[withSampler.length - 1];
  if (!c) throw new SuiteCheckpointError(`${run.dir} has no sampler checkpoint (a finished run saves one named "final")`);
  return { label: `${run.name}/${c.name}`, path: c.sampler_path!, ...(run.model ? { model: run.model } : {}) };
}

async function latestIn(dirs: readonly string[]): Promise<SuiteCheckpoint> {
  const runs: RunSummary[] = [];
  for (const d of [...new Set(dirs)]) if (fs.existsSync(d)) runs.push(...(await listRuns(d)).filter((r) => r.checkpoints.some((c) => c.sampler_path)));
  if (runs.length === 0) throw new SuiteCheckpointError(`latest: no run with sampler checkpoints in ${dirs.join(', ') || '(no runs folder)'}`);
  runs.sort((a, b) => b.modifiedMs - a.modifiedMs);
  return finalOf(runs[0]!);
}

/**
 * Resolves the checkpoint a suite runs on. `runsDirs` is where `latest` looks (the CLI's --runs-dir,
 * the extension's runs folder); relative run directories are against `cwd`.
 */
export async function resolveSuiteCheckpoint(given: string, o: { runsDirs?: readonly string[]; cwd?: string } = {}): Promise<SuiteCheckpoint> {
  const arg = given.trim();
  if (!arg) throw new SuiteCheckpointError('give a checkpoint: a base model name, a tinker:// sampler path, a run directory or "latest"');
  if (arg.startsWith('tinker://')) return { label: arg, path: arg };
  const cwd = o.cwd ?? process.cwd();
  if (arg === 'latest') return latestIn(o.runsDirs ?? []);
  if (arg.startsWith('latest:')) return latestIn([path.resolve(cwd, arg.slice('latest:'.length))]);
  const dir = path.resolve(cwd, arg);
  if (fs.existsSync(dir) && fs.statSync(dir).isDirectory()) {
    const run = (await listRuns(path.dirname(dir))).find((r) => r.dir === dir);
    if (!run) throw new SuiteCheckpointError(`${dir} is a folder but not a run directory (no checkpoints.jsonl, metrics.jsonl or config.json)`);
    return finalOf(run);
  }
  return { label: arg, path: arg, model: arg };
}
