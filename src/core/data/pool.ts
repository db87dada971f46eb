// The prompt pool of a run: problems from the spec's dataset (JSONL or Hugging Face), split into train
// and holdout, both in an order fixed by the seed.
//   - holdout from a file: train = the dataset shuffled; holdout = the holdout file shuffled.
//   - holdout as a fraction: the dataset is shuffled once; the first round(fraction·n) problems (at
//     least one when fraction > 0) are the holdout, the rest, in that shuffled order, the train set.
// One mulberry32 stream seeded with `seed` drives every shuffle, in the order above.
import * as path from 'node:path';
import type { DatasetSpec } from '../spec/datasets';
import type { NetworkOptions } from '../tinker/proxy';
import { fetchHfRows } from './hf';
import { readJsonlProblems } from './jsonl';
import { mulberry32, shuffled } from './prng';
import { DatasetError, ProblemFields, RecordResult, recordToProblem } from './problem';
import type { Problem, PromptPool } from './types';

export interface PromptPoolOptions {
  /** folder of the spec file: relative dataset paths are resolved against it */
  specDir: string;
  seed: number;
  /** where Hugging Face rows are cached */
  cacheDir: string;
  signal?: AbortSignal;
  /** datasets-server base URL (default https://datasets-server.huggingface.co) */
  hubEndpoint?: string;
  /** Hugging Face token for gated datasets (sent as a header only) */
  hfToken?: string;
  /** how the datasets-server is reached (proxy …); default: the environment */
  network?: NetworkOptions;
  onProgress?: (rows: number, total: number) => void;
  /** prompt-only data: records need no ground truth (a distillation run without a reward) */
  groundTruthOptional?: boolean;
  /** an environment run: every record is a problem, kept whole (ProblemFields.environment) */
  environment?: boolean;
}

type Loaded = { problems: Problem[]; skipped: PromptPool['skipped'] };

export async function loadPromptPool(dataset: DatasetSpec, opts: PromptPoolOptions): Promise<PromptPool> {
  const fields: ProblemFields = {
    promptField: dataset.prompt_field,
    groundTruthField: dataset.ground_truth_field,
    ...(dataset.system_prompt !== undefined ? { systemPrompt: dataset.system_prompt } : {}),
    ...(opts.groundTruthOptional ? { groundTruthOptional: true } : {}),
    ...(opts.environment ? { environment: true } : {}),
  };
  const main = await loadSource(dataset, fields, opts);
  const rand = mulberry32(opts.seed);
  const holdoutSpec = dataset.holdout;
  let train: Problem[];
  let holdout: Problem[];
  const skipped = [...main.skipped];

  if (holdoutSpec?.path !== undefined) {
    const h = await loadJsonl(holdoutSpec.path, fields, dataset.on_invalid_line, opts.specDir);
    for (const x of h.skipped) skipped.push(x);
    if (h.problems.length === 0) throw new DatasetError(`dataset.holdout.path: ${labelOf(holdoutSpec.path, opts.specDir)} has no problems`);
    train = shuffled(main.problems, rand);
    holdout = shuffled(h.problems, rand);
  } else if (holdoutSpec?.fraction !== undefined) {
    const all = shuffled(main.problems, rand);
    const k = holdoutCount(all.length, holdoutSpec.fraction);
    holdout = all.slice(0, k);
    train = all.slice(k);
  } else {
    train = shuffled(main.problems, rand);
    holdout = [];
  }
  if (dataset.holdout_max !== undefined) holdout = holdout.slice(0, dataset.holdout_max);
  if (train.length === 0)
    throw new DatasetError(
      main.problems.length === 0
        ? `dataset: no problems in ${sourceName(dataset, opts.specDir)}${skipped.length > 0 ? ` (${skipped.length} skipped as invalid; first: ${skipped[0]!.where}: ${skipped[0]!.reason})` : ''}`
        : 'dataset: no training problems are left after the holdout',
    );
  return { train, holdout, skipped };
}

/** round(n·fraction), but at least one when fraction > 0, and never all of them. */
export function holdoutCount(n: number, fraction: number): number {
  if (fraction <= 0 || n < 2) return 0;
  return Math.min(n - 1, Math.max(1, Math.round(n * fraction)));
}

async function loadSource(dataset: DatasetSpec, fields: ProblemFields, opts: PromptPoolOptions): Promise<Loaded> {
  if (dataset.path !== undefined) return loadJsonl(dataset.path, fields, dataset.on_invalid_line, opts.specDir);
  if (dataset.hf === undefined) throw new DatasetError('dataset: give "path" (a JSONL file) or "hf" (a Hugging Face dataset)');
  const { rows, config } = await fetchHfRows(dataset.hf, {
    cacheDir: opts.cacheDir,
    ...(opts.hubEndpoint !== undefined ? { endpoint: opts.hubEndpoint } : {}),
    ...(opts.hfToken !== undefined ? { token: opts.hfToken } : {}),
    ...(opts.network !== undefined ? { network: opts.network } : {}),
    ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
    ...(opts.onProgress !== undefined ? { onProgress: opts.onProgress } : {}),
  });
  const problems: Problem[] = [];
  const skipped: Loaded['skipped'] = [];
  for (const { rowIdx, row, truncated } of rows) {
    const where = `${dataset.hf.dataset}/${config}/${dataset.hf.split}:${rowIdx}`;
    const cut = [fields.promptField, fields.groundTruthField].find((f) => truncated.includes(f));
    const result: RecordResult = cut
      ? { ok: false, reason: `field "${cut}" was shortened by the datasets-server (too long to serve whole)` }
      : recordToProblem(row, fields, where);
    if (result.ok) problems.push(result.problem);
    else if (dataset.on_invalid_line === 'stop')
      throw new DatasetError(`${where}: ${result.reason} (set dataset.on_invalid_line to "skip" to leave such rows out)`);
    else skipped.push({ where, reason: result.reason });
  }
  return { problems, skipped };
}

function loadJsonl(file: string, fields: ProblemFields, policy: 'skip' | 'stop', specDir: string): Promise<Loaded> {
  return readJsonlProblems(path.resolve(specDir, file), labelOf(file, specDir), fields, policy);
}

/**
 * A file as shown in problem ids and messages: relative to the spec's folder ("../data/x.jsonl" too),
 * so ids (which seed an eval's draws) do not depend on where the checkout lives; absolute only on
 * another drive.
 */
function labelOf(file: string, specDir: string): string {
  const rel = path.relative(specDir, path.resolve(specDir, file));
  return path.isAbsolute(rel) ? path.resolve(specDir, file) : rel.split(path.sep).join('/');
}

function sourceName(dataset: DatasetSpec, specDir: string): string {
  if (dataset.path !== undefined) return labelOf(dataset.path, specDir);
  return dataset.hf ? `${dataset.hf.dataset} (split ${dataset.hf.split})` : 'the dataset';
}
