// A benchmark's problems: its rows from the Hugging Face datasets-server through the project's hub
// loader (data/hf.ts: paged, retried, cached whole under the user's cache folder, so a second run
// makes no request), each row made a problem by the benchmark's definition, then the eval's seeded
// subset. Offline with nothing cached, the error names the cache file to put the rows in by hand.
import * as path from 'node:path';
import { fetchHfRows, type HfRows } from '../../data/hf';
import { DatasetError } from '../../data/problem';
import { mulberry32, shuffled } from '../../data/prng';
import type { Problem } from '../../data/types';
import type { NetworkOptions } from '../../tinker/proxy';
import type { BenchmarkDefinition, BenchmarkProblem } from './contract';

export interface BenchmarkLoadOptions {
  cacheDir: string;
  /** the datasets-server's base URL; default $TINKER_DATASETS_SERVER, else the public one */
  endpoint?: string;
  /** a Hugging Face token for gated datasets (sent as a header only) */
  token?: string;
  network?: NetworkOptions;
  signal?: AbortSignal;
  /** rows fetched so far of the rows to fetch (across a benchmark's configs) */
  onProgress?: (rows: number, total: number, config?: string) => void;
  /** at most this many problems: the first of the rows shuffled with seed 0 */
  maxProblems?: number;
  /** the system message before every problem ("" or undefined: none) */
  systemPrompt?: string;
}

export interface BenchmarkProblems {
  /** in the eval's order (seeded, capped) */
  problems: Problem[];
  /** what the grader reads, by problem id */
  byId: Map<string, BenchmarkProblem>;
  /** problems the benchmark has in all (before max_problems) */
  available: number;
}

/** Where the rows of one config are cached (the hub loader's cache file). */
export function benchmarkCacheFile(cacheDir: string, def: BenchmarkDefinition, config: string | undefined): string {
  const safe = (s: string) => encodeURIComponent(s).replace(/^\.+/, (dots) => '%2E'.repeat(dots.length));
  return path.join(cacheDir, 'hf-datasets', safe(def.source.repo), safe(config ?? '(auto)'), `${safe(def.source.split)}.json`);
}

export async function loadBenchmarkProblems(def: BenchmarkDefinition, o: BenchmarkLoadOptions): Promise<BenchmarkProblems> {
  const configs: Array<string | undefined> = def.source.configs ? [...def.source.configs] : [def.source.config];
  const endpoint = o.endpoint ?? process.env.TINKER_DATASETS_SERVER;
  const all: BenchmarkProblem[] = [];
  for (const [k, config] of configs.entries()) {
    let got: HfRows;
    try {
      got = await fetchHfRows(
        { dataset: def.source.repo, ...(config !== undefined ? { config } : {}), split: def.source.split },
        {
          cacheDir: o.cacheDir,
          ...(endpoint ? { endpoint } : {}),
          ...(o.token ? { token: o.token } : {}),
          ...(o.network ? { network: o.network } : {}),
          ...(o.signal ? { signal: o.signal } : {}),
          onProgress: (rows, total) => o.onProgress?.(rows, total, configs.length > 1 ? `${config} (${k + 1}/${configs.length})` : config),
        },
      );
    } catch (err) {
      if (o.signal?.aborted) throw err;
      if (err instanceof DatasetError && /cannot reach/.test(err.message))
        throw new DatasetError(
          `benchmark: ${def.title}: ${err.message}. Offline, put the rows by hand at ${benchmarkCacheFile(o.cacheDir, def, config)} ` +
            `(JSON: {"version": 1, "dataset": "${def.source.repo}", "config": "${config ?? '<its config>'}", "split": "${def.source.split}", "rows": [{"rowIdx": 0, "row": {…}, "truncated": []}, …]}, ` +
            'as this cache holds them after a download on a connected machine), or set TINKER_DATASETS_SERVER to a reachable mirror of the datasets-server',
        );
      throw err;
    }
    for (const { rowIdx, row, truncated } of got.rows) {
      if (truncated.length) throw new DatasetError(`benchmark: ${def.source.repo}${config ? `/${config}` : ''}:${rowIdx}: the datasets-server shortened field(s) ${truncated.join(', ')}`);
      if (def.keep && !def.keep(row)) continue;
      all.push(def.toProblem(row, rowIdx, config));
    }
  }
  if (all.length === 0) throw new DatasetError(`benchmark: ${def.title}: no problems in ${def.source.repo}`);
  const order = shuffled(all, mulberry32(0));
  const chosen = o.maxProblems !== undefined ? order.slice(0, o.maxProblems) : order;
  const byId = new Map<string, BenchmarkProblem>();
  const problems = chosen.map((b): Problem => {
    byId.set(b.id, b);
    return {
      id: b.id,
      messages: [...(o.systemPrompt ? [{ role: 'system' as const, content: o.systemPrompt }] : []), { role: 'user' as const, content: b.prompt }],
      groundTruth: typeof b.answer === 'string' ? b.answer : JSON.stringify(b.answer),
    };
  });
  return { problems, byId, available: all.length };
}
