// Tokenizer files from the Hugging Face hub, fetched at run time into a cache directory and read
// from there afterwards (no request once both files are cached). Files are validated before they
// are written, and written atomically, so the cache never holds a partial or foreign file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fetch, type Dispatcher } from 'undici';
import { writeFileAtomicSync } from '../fs/atomic';
import { type NetworkOptions, type Route, viaProxy, withDispatcher } from '../tinker/proxy';
import { TokenizerFilesError } from './errors';
import { TokenizerConfigJson, TokenizerJson } from './hfTokenizer';
import { errorMessage } from '../errors';

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json'] as const;

export interface HubOptions {
  /** a hub repo id, e.g. "Qwen/Qwen3-8B" */
  repo: string;
  /** the cache root; files land in <cacheDir>/<org>/<name>/ */
  cacheDir: string;
  /** default: $HF_ENDPOINT, else https://huggingface.co */
  endpoint?: string;
  /** sent as a bearer token (gated repos); never written anywhere */
  hfToken?: string;
  /** the model the files are for, named in errors (defaults to the repo) */
  model?: string;
  /** how to reach the hub (proxy, NO_PROXY, certificates); default: the environment's HTTPS_PROXY … */
  network?: NetworkOptions;
  /** a dispatcher to use instead of one built from `network` */
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}

export interface HubFiles {
  /** the folder holding tokenizer.json and tokenizer_config.json */
  dir: string;
  /** the files downloaded by this call (empty on a cache hit) */
  fetched: string[];
}

const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function hubEndpoint(explicit?: string): string {
  return (explicit || process.env.HF_ENDPOINT || DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
}

export function tokenizerCacheDir(cacheDir: string, repo: string): string {
  if (!REPO_ID.test(repo) || repo.includes('..')) {
    throw new TokenizerFilesError(`"${repo}" is not a Hugging Face repo id of the form org/name`);
  }
  const [org, name] = repo.split('/') as [string, string];
  return path.join(cacheDir, org, name);
}

const inFlight = new Map<string, Promise<HubFiles>>();

/** Ensures both tokenizer files of `repo` are in the cache, downloading the missing ones. */
export async function ensureTokenizerFiles(opts: HubOptions): Promise<HubFiles> {
  const dir = tokenizerCacheDir(opts.cacheDir, opts.repo);
  const missing = TOKENIZER_FILES.filter((f) => !fs.existsSync(path.join(dir, f)));
  if (missing.length === 0) return { dir, fetched: [] };
  // one download per folder at a time, however many runs ask for it
  const running = inFlight.get(dir);
  if (running) return running;
  const p = download(opts, dir, missing).finally(() => inFlight.delete(dir));
  inFlight.set(dir, p);
  return p;
}

async function download(opts: HubOptions, dir: string, missing: readonly string[]): Promise<HubFiles> {
  const endpoint = hubEndpoint(opts.endpoint);
  const model = opts.model ?? opts.repo;
  fs.mkdirSync(dir, { recursive: true });
  if (opts.dispatcher) return downloadWith(opts.dispatcher, undefined, opts, endpoint, model, dir, missing);
  return withDispatcher(endpoint, opts.network ?? {}, (d, route) => downloadWith(d, route, opts, endpoint, model, dir, missing));
}

async function downloadWith(
  dispatcher: Dispatcher,
  route: Route | undefined,
  opts: HubOptions,
  endpoint: string,
  model: string,
  dir: string,
  missing: readonly string[],
): Promise<HubFiles> {
  for (const file of missing) {
    const url = `${endpoint}/${opts.repo}/resolve/main/${file}`;
    const text = await get(url, file, model, opts, dispatcher, route);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new TokenizerFilesError(`${url} did not return JSON (the tokenizer of ${model}); is ${endpoint} a Hugging Face hub?`);
    }
    const schema = file === 'tokenizer.json' ? TokenizerJson : TokenizerConfigJson;
    const r = schema.safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new TokenizerFilesError(`${url} is not a valid ${file} (${issue ? `${issue.path.join('.') || 'top level'}: ${issue.message}` : 'invalid'}); the tokenizer of ${model} cannot be used`);
    }
    writeAtomically(path.join(dir, file), text);
  }
  return { dir, fetched: [...missing] };
}

async function get(url: string, file: string, model: string, opts: HubOptions, dispatcher: Dispatcher, route: Route | undefined): Promise<string> {
  const headers: Record<string, string> = { 'user-agent': 'tinker-studio' };
  if (opts.hfToken) headers.authorization = `Bearer ${opts.hfToken}`;
  let res: Awaited<ReturnType<typeof fetch>>;
  try {
    res = await fetch(url, {
      headers,
      redirect: 'follow',
      dispatcher,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : errorMessage(e);
    throw new TokenizerFilesError(
      `could not download the tokenizer of ${model} from ${url} (${cause}${route ? viaProxy(route) : ''}). Tokenizers are cached after the first download; connect once, or set HF_ENDPOINT to a reachable mirror.`,
    );
  }
  if (res.ok) return res.text();
  const code = res.headers.get('x-error-code') ?? '';
  await res.body?.cancel();
  if (res.status === 404 || code === 'RepoNotFound' || code === 'EntryNotFound') {
    throw new TokenizerFilesError(
      `the tokenizer of ${model} was not found on the Hugging Face hub: GET ${url} answered ${res.status}${code ? ` (${code})` : ''}. Check the model id (a hub repo such as Qwen/Qwen3-8B${code === 'RepoNotFound' && !opts.hfToken ? '; a private repo needs a Hugging Face token' : ''}).`,
    );
  }
  if (res.status === 401 || res.status === 403) {
    throw new TokenizerFilesError(
      opts.hfToken
        ? `the Hugging Face token given was refused for ${model} (GET ${url} answered ${res.status}): the model is gated; accept its licence on the model's hub page with that account, or use another token.`
        : `${model} is gated on the Hugging Face hub (GET ${url} answered ${res.status}): accept its licence on the model's hub page and give a Hugging Face token (hfToken) to download its ${file}.`,
    );
  }
  throw new TokenizerFilesError(`downloading the tokenizer of ${model} failed: GET ${url} answered ${res.status} ${res.statusText}; try again later.`);
}

function writeAtomically(file: string, text: string): void {
  try {
    writeFileAtomicSync(file, text);
  } catch (e) {
    throw new TokenizerFilesError(`cannot write ${file}: ${errorMessage(e)}`);
  }
}
