// Rows of a Hugging Face dataset through the datasets-server API (`/splits` to find the config,
// `/rows` 100 at a time), every answer checked with zod, and the whole split cached on disk so a
// second load reads the cache and makes no request. Delete the cache folder to fetch again.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type Dispatcher, request } from 'undici';
import * as z from 'zod';
import { writeFileAtomicSync } from '../fs/atomic';
import { formatIssue } from '../spec/issues';
import { type NetworkOptions, type Route, viaProxy, withDispatcher } from '../tinker/proxy';
import { DatasetError } from './problem';
import { errorMessage } from '../errors';

export const DATASETS_SERVER = 'https://datasets-server.huggingface.co';
const PAGE = 100; // the rows API's largest page
const PARALLEL_PAGES = 4;
const ATTEMPTS = 4;

export interface HfDatasetRef {
  dataset: string;
  /** absent: the split's only config, or "default" */
  config?: string;
  split: string;
}

export interface HfFetchOptions {
  /** folder holding the cache (created when missing) */
  cacheDir: string;
  /** datasets-server base URL (default https://datasets-server.huggingface.co) */
  endpoint?: string;
  /** a Hugging Face token for gated/private datasets; sent only as a header, never in messages */
  token?: string;
  /** how the datasets-server is reached (proxy …); default: the environment's HTTPS_PROXY … */
  network?: NetworkOptions;
  signal?: AbortSignal;
  onProgress?: (rows: number, total: number) => void;
}

export interface HfRow {
  rowIdx: number;
  row: Record<string, unknown>;
  /** cells the server shortened (too long to serve whole) */
  truncated: string[];
}

export interface HfRows {
  config: string;
  rows: HfRow[];
}

const SplitsAnswer = z.object({
  splits: z.array(z.object({ dataset: z.string(), config: z.string(), split: z.string() })),
});

const RowsAnswer = z.object({
  rows: z.array(
    z.object({
      row_idx: z.number().int().min(0),
      row: z.record(z.string(), z.unknown()),
      truncated_cells: z.array(z.string()).default([]),
    }),
  ),
  num_rows_total: z.number().int().min(0),
});

const ErrorAnswer = z.object({ error: z.string() });

const CacheFile = z.object({
  version: z.literal(1),
  dataset: z.string(),
  config: z.string(),
  split: z.string(),
  rows: z.array(z.object({ rowIdx: z.number().int(), row: z.record(z.string(), z.unknown()), truncated: z.array(z.string()) })),
});

/** Every row of the split, from the cache when it has them. */
export async function fetchHfRows(ref: HfDatasetRef, opts: HfFetchOptions): Promise<HfRows> {
  const cacheFile = path.join(opts.cacheDir, 'hf-datasets', ...[ref.dataset, ref.config ?? '(auto)', `${ref.split}.json`].map(safeName));
  const cached = await readCache(cacheFile, ref);
  if (cached) return cached;

  const endpoint = (opts.endpoint ?? DATASETS_SERVER).replace(/\/+$/, '');
  return withDispatcher(endpoint, opts.network ?? {}, (dispatcher, route) => fetchAndCache(ref, { ...opts, dispatcher, route }, endpoint, cacheFile));
}

interface Connected extends HfFetchOptions {
  dispatcher: Dispatcher;
  route: Route;
}

async function fetchAndCache(ref: HfDatasetRef, opts: Connected, endpoint: string, cacheFile: string): Promise<HfRows> {
  const config = ref.config ?? (await findConfig(endpoint, ref, opts));
  const params = (offset: number) =>
    new URLSearchParams({ dataset: ref.dataset, config, split: ref.split, offset: String(offset), length: String(PAGE) });
  const page = (offset: number) => getJson(`${endpoint}/rows?${params(offset)}`, RowsAnswer, describeRef({ ...ref, config }), opts);

  const first = await page(0);
  const total = first.num_rows_total;
  const pages = new Map<number, z.output<typeof RowsAnswer>>([[0, first]]);
  let done = first.rows.length;
  opts.onProgress?.(done, total);
  const offsets: number[] = [];
  for (let off = PAGE; off < total; off += PAGE) offsets.push(off);
  // a few pages at a time: quick, without hammering the public server
  for (let i = 0; i < offsets.length; i += PARALLEL_PAGES) {
    const batch = offsets.slice(i, i + PARALLEL_PAGES);
    const got = await Promise.all(batch.map((off) => page(off)));
    batch.forEach((off, k) => {
      const p = got[k]!;
      if (p.rows.length === 0)
        throw new DatasetError(`dataset.hf: ${describeRef({ ...ref, config })}: the datasets-server gave no rows at offset ${off} of ${total}`);
      pages.set(off, p);
      done += p.rows.length;
    });
    opts.onProgress?.(Math.min(done, total), total);
  }
  const rows = [...pages.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, p]) => p.rows.map((r) => ({ rowIdx: r.row_idx, row: r.row, truncated: r.truncated_cells })));
  await fs.mkdir(path.dirname(cacheFile), { recursive: true });
  writeFileAtomicSync(cacheFile, JSON.stringify({ version: 1, dataset: ref.dataset, config, split: ref.split, rows }));
  return { config, rows };
}

/** The config holding the split: the only one, else "default"; otherwise the user must name it. */
async function findConfig(endpoint: string, ref: HfDatasetRef, opts: Connected): Promise<string> {
  const url = `${endpoint}/splits?${new URLSearchParams({ dataset: ref.dataset })}`;
  const answer = await getJson(url, SplitsAnswer, ref.dataset, opts);
  const configs = [...new Set(answer.splits.filter((s) => s.split === ref.split).map((s) => s.config))];
  if (configs.length === 1) return configs[0]!;
  if (configs.includes('default')) return 'default';
  if (configs.length === 0) {
    const splits = [...new Set(answer.splits.map((s) => s.split))];
    throw new DatasetError(
      `dataset.hf.split: ${ref.dataset} has no split "${ref.split}"${splits.length > 0 ? ` (its splits: ${splits.join(', ')})` : ''}`,
    );
  }
  throw new DatasetError(`dataset.hf.config: ${ref.dataset} has several configs with a "${ref.split}" split (${configs.join(', ')}); name one`);
}

/** GET a JSON answer and check it; 429/5xx and dropped connections are retried with a growing pause. */
async function getJson<T extends z.ZodType>(url: string, schema: T, what: string, opts: Connected): Promise<z.output<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  for (let attempt = 1; ; attempt++) {
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const res = await request(url, { method: 'GET', headers, dispatcher: opts.dispatcher, signal: opts.signal, headersTimeout: 60_000, bodyTimeout: 60_000 });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await res.body.text();
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
      // a refused connection or an unknown host will not change in a second; a dropped one may
      if (attempt < ATTEMPTS && code !== 'ECONNREFUSED' && code !== 'ENOTFOUND') {
        await pause(backoffMs(attempt, undefined), opts.signal);
        continue;
      }
      throw new DatasetError(`dataset.hf: cannot reach the Hugging Face datasets-server at ${originOf(url)} (${code}${viaProxy(opts.route)})`);
    }
    if ((status === 429 || status >= 500) && attempt < ATTEMPTS) {
      await pause(backoffMs(attempt, retryAfter), opts.signal);
      continue;
    }
    if (status !== 200) {
      const detail = parseErrorText(text);
      const hint =
        status === 401 || status === 403
          ? ' (the dataset may be gated or private: it needs a Hugging Face token)'
          : status === 404
            ? ' (check the dataset id, config and split)'
            : '';
      throw new DatasetError(`dataset.hf: the datasets-server answered ${status} for ${what}${detail ? `: ${detail}` : ''}${hint}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new DatasetError(`dataset.hf: the datasets-server's answer for ${what} is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
    }
    const parsed = schema.safeParse(json, { reportInput: true });
    if (!parsed.success)
      throw new DatasetError(`dataset.hf: unexpected answer from the datasets-server for ${what}: ${formatIssue(parsed.error.issues[0]!)}`);
    return parsed.data;
  }
}

function parseErrorText(text: string): string {
  try {
    const e = ErrorAnswer.safeParse(JSON.parse(text));
    if (e.success) return e.data.error;
  } catch {
    // not JSON: show the start of the text
  }
  return text.trim().slice(0, 200);
}

function backoffMs(attempt: number, retryAfter: string | string[] | undefined): number {
  const seconds = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 30) * 1000;
  return 500 * 2 ** (attempt - 1);
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describeRef(ref: HfDatasetRef): string {
  return `${ref.dataset}${ref.config ? ` (config ${ref.config}, split ${ref.split})` : ` (split ${ref.split})`}`;
}

function originOf(url: string): string {
  return new URL(url).origin;
}

/** A path segment from a dataset id, config or split ("openai/gsm8k" → "openai%2Fgsm8k"). */
function safeName(s: string): string {
  return encodeURIComponent(s).replace(/^\.+/, (dots) => '%2E'.repeat(dots.length));
}

async function readCache(file: string, ref: HfDatasetRef): Promise<HfRows | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const c = CacheFile.parse(JSON.parse(text));
    if (c.dataset !== ref.dataset || c.split !== ref.split || (ref.config !== undefined && c.config !== ref.config)) return undefined;
    return { config: c.config, rows: c.rows };
  } catch {
    return undefined; // a damaged cache is fetched again and overwritten
  }
}

