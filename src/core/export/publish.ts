// Publish an exported folder (a PEFT adapter or a merged model) to a Hugging Face Hub model repo
// through the maintained client, @huggingface/hub: the repo is created private unless asked, a repo
// that exists is reused unless its card names another Tinker checkpoint (as the SDK CLI's push-hf
// refuses), small files go inline in the commit and large ones through the Hub's LFS upload.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { commitIter, createRepo, downloadFile, HubApiError, type CommitOperation } from '@huggingface/hub';
import { z } from 'zod';
import { errorMessage } from '../errors';
import { ExportRefusal } from './families';
import { modelCard } from './modelCard';

export const HUB_URL_DEFAULT = 'https://huggingface.co';

/** Files of an export folder that are not published (push-hf skips the checkpoint marker too). */
const SKIPPED = new Set(['checkpoint_complete']);

export interface PublishProgress {
  phase: 'hashing' | 'creating' | 'uploading' | 'committing' | 'retrying' | 'done';
  /** bytes sent or hashed so far, of total */
  done: number;
  total: number;
  file?: string;
  /** the retry's number, when phase is 'retrying' */
  attempt?: number;
}

export interface PublishRequest {
  folder: string;
  /** owner/name */
  repo: string;
  /** default private, as push-hf */
  public?: boolean;
  token: string;
  hubUrl?: string;
  tinkerPath?: string;
  commitMessage?: string;
  /** whole-commit attempts when the Hub or the network fails on the way (files already stored are not sent again) */
  attempts?: number;
  signal?: AbortSignal;
  onProgress?: (p: PublishProgress) => void;
}

export interface PublishedFile {
  path: string;
  size: number;
  sha256: string;
}

export interface PublishResult {
  repo: string;
  url: string;
  created: boolean;
  commit?: string;
  files: PublishedFile[];
  /** sha256 of the sorted `<sha256>  <path>` lines of the files (a sha256sum listing), one digest for the folder */
  sha256: string;
  private: boolean;
  /** the checkpoint the folder came from: as given, else the tinker_path its card names */
  tinkerPath?: string;
}

/** An error of publishing whose text never holds the token. */
export class PublishError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

const REPO_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$/;

/** Why a repo id is not one the Hub takes, or undefined when it is. */
export function repoIdProblem(repo: string): string | undefined {
  if (!REPO_RE.test(repo)) return `"${repo}" is not a Hub repo id: give owner/name (letters, digits, - _ .), e.g. alice/qwen3-8b-math-lora`;
  if (/--|\.\./.test(repo) || /[.-]$/.test(repo)) return `"${repo}": a Hub repo name has no "--" or ".." and does not end in "-" or "."`;
  return undefined;
}

/** The token in words never: every occurrence (and its Bearer header form) becomes "***". */
export function redactToken(text: string, token: string): string {
  if (!token) return text;
  return text.split(token).join('***');
}

async function sha256OfFile(file: string, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, signal ? { signal } : {})) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The folder's digest: sha256 of its `<sha256>  <path>` lines, sorted by path. */
export function folderDigest(files: readonly PublishedFile[]): string {
  const lines = [...files].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => `${f.sha256}  ${f.path}\n`);
  return createHash('sha256').update(lines.join('')).digest('hex');
}

const AdapterConfigFacts = z.object({
  r: z.number().optional(),
  lora_alpha: z.number().optional(),
  base_model_name_or_path: z.string().optional(),
  tinker_path: z.string().optional(),
}).passthrough();

/** The files to publish, relative paths with '/', and a card when the folder has no README.md. */
async function listFolder(folder: string, tinkerPath: string | undefined): Promise<{ files: string[]; card?: string }> {
  const out: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const e of await fs.promises.readdir(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path.join(dir, e.name), r);
      else if (e.isFile() && !SKIPPED.has(r)) out.push(r);
    }
  };
  await walk(folder, '');
  out.sort();
  const isAdapter = out.includes('adapter_config.json');
  if (!isAdapter && !out.includes('config.json')) throw new ExportRefusal(`${folder} holds neither adapter_config.json (a PEFT adapter) nor config.json (a model): export the checkpoint first (Export as PEFT Adapter… or tinker-studio export adapter)`);
  if (out.includes('README.md') || !isAdapter) return { files: out };
  // An adapter folder without a card gets the card push-hf writes (its front matter: base model, tags, tinker_path).
  const cfgFile = path.join(folder, 'adapter_config.json');
  let facts: z.infer<typeof AdapterConfigFacts>;
  try {
    facts = AdapterConfigFacts.parse(JSON.parse(await fs.promises.readFile(cfgFile, 'utf8')));
  } catch (err) {
    throw new ExportRefusal(`${cfgFile}: ${errorMessage(err)}`);
  }
  const base = facts.base_model_name_or_path;
  if (!base || !facts.r) return { files: out };
  const tp = tinkerPath ?? facts.tinker_path;
  return { files: out, card: modelCard({ kind: 'adapter', baseModel: base, r: facts.r, alpha: facts.lora_alpha ?? facts.r, ...(tp ? { tinkerPath: tp } : {}) }) };
}

function isRetryable(err: unknown): boolean {
  if (err instanceof HubApiError) return err.statusCode >= 500 || err.statusCode === 429 || err.statusCode === 408;
  // fetch's network failures are TypeErrors ("fetch failed"); the rest (refusals, bad answers) are not retried
  return err instanceof TypeError;
}

function statusOf(err: unknown): number | undefined {
  return err instanceof HubApiError ? err.statusCode : undefined;
}

function hubMessage(err: unknown, repo: string, hubUrl: string): string {
  const s = statusOf(err);
  if (s === 401) return `the Hub (${hubUrl}) refused the token (401): set a Hugging Face token with write access ("Tinker: Set Hugging Face Token" or HF_TOKEN)`;
  if (s === 403) return `the token may not write to ${repo} (403): give a token with write access to that owner, or choose a repo under your own name`;
  return `publishing to ${repo} failed: ${errorMessage(err)}`;
}

const TINKER_PATH_RE = /tinker:\/\/[^\s`"']+/;

/** The tinker path a repo's existing README names, if any. */
async function existingTinkerPath(repo: string, hubUrl: string, token: string): Promise<string | undefined> {
  const blob = await downloadFile({ repo: { type: 'model', name: repo }, path: 'README.md', hubUrl, accessToken: token });
  if (!blob) return undefined;
  return TINKER_PATH_RE.exec(await blob.text())?.[0];
}

export async function publishToHub(req: PublishRequest): Promise<PublishResult> {
  const hubUrl = (req.hubUrl ?? HUB_URL_DEFAULT).replace(/\/+$/, '');
  const token = req.token;
  const fail = (message: string, status?: number): PublishError => new PublishError(redactToken(message, token), status);
  const problem = repoIdProblem(req.repo);
  if (problem) throw fail(problem);
  if (!token) throw fail('no Hugging Face token: run "Tinker: Set Hugging Face Token" or set HF_TOKEN (a token with write access)');
  const folder = path.resolve(req.folder);
  try {
    if (!(await fs.promises.stat(folder)).isDirectory()) throw new Error('not a folder');
  } catch (err) {
    throw fail(`${folder}: ${errorMessage(err)} (give an exported adapter or model folder)`);
  }
  const signal = req.signal;
  const report = req.onProgress ?? (() => undefined);
  const { files: names, card } = await listFolder(folder, req.tinkerPath);
  const sizes = await Promise.all(names.map(async (n) => (await fs.promises.stat(path.join(folder, n))).size));
  const cardBytes = card ? Buffer.from(card, 'utf8') : undefined;
  const total = sizes.reduce((a, b) => a + b, 0) + (cardBytes?.length ?? 0);
  const files: PublishedFile[] = [];
  let hashed = 0;
  for (const [i, n] of names.entries()) {
    report({ phase: 'hashing', done: hashed, total, file: n });
    files.push({ path: n, size: sizes[i]!, sha256: await sha256OfFile(path.join(folder, n), signal) });
    hashed += sizes[i]!;
  }
  if (cardBytes) files.push({ path: 'README.md', size: cardBytes.length, sha256: createHash('sha256').update(cardBytes).digest('hex') });
  const ourTinkerPath = req.tinkerPath ?? (cardBytes ? TINKER_PATH_RE.exec(card!)?.[0] : TINKER_PATH_RE.exec(await readIfExists(path.join(folder, 'README.md')))?.[0]);

  const isPrivate = !req.public;
  const repoDesignation = { type: 'model' as const, name: req.repo };
  let created = true;
  try {
    report({ phase: 'creating', done: 0, total });
    await createRepo({ repo: repoDesignation, private: isPrivate, hubUrl, accessToken: token });
  } catch (err) {
    if (statusOf(err) !== 409) throw fail(hubMessage(err, req.repo, hubUrl), statusOf(err));
    created = false;
  }
  if (!created && ourTinkerPath) {
    let theirs: string | undefined;
    try {
      theirs = await existingTinkerPath(req.repo, hubUrl, token);
    } catch (err) {
      throw fail(hubMessage(err, req.repo, hubUrl), statusOf(err));
    }
    if (theirs && theirs !== ourTinkerPath) throw fail(`${req.repo} already holds another Tinker checkpoint (its README names ${theirs}, this is ${ourTinkerPath}): choose another repo name`);
  }

  const operations: CommitOperation[] = names.map((n) => ({ operation: 'addOrUpdate', path: n, content: pathToFileURL(path.join(folder, n)) }));
  if (cardBytes) operations.push({ operation: 'addOrUpdate', path: 'README.md', content: new Blob([cardBytes]) });
  const attempts = Math.max(1, req.attempts ?? 3);
  let commit: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const sent = new Map<string, number>();
    try {
      const it = commitIter({
        repo: repoDesignation,
        operations,
        title: req.commitMessage ?? (created ? 'Upload from Tinker Studio' : 'Update from Tinker Studio'),
        hubUrl,
        accessToken: token,
        // the Hub's LFS transfer (basic / multipart): no WebAssembly chunker in the bundled extension
        useXet: false,
        ...(signal ? { abortSignal: signal } : {}),
      });
      for (;;) {
        const r = await it.next();
        if (r.done) {
          commit = r.value?.commit.oid;
          break;
        }
        const ev = r.value;
        if (ev.event === 'phase' && ev.phase === 'committing') report({ phase: 'committing', done: total, total });
        if (ev.event === 'fileProgress' && ev.state === 'uploading') {
          const i = names.indexOf(ev.path);
          const size = i >= 0 ? sizes[i]! : (cardBytes?.length ?? 0);
          sent.set(ev.path, Math.round(ev.progress * size));
          report({ phase: 'uploading', done: [...sent.values()].reduce((a, b) => a + b, 0), total, file: ev.path });
        }
      }
      break;
    } catch (err) {
      if (signal?.aborted) throw fail(`publishing to ${req.repo} was cancelled; nothing was committed (uploaded large files are kept by the Hub and not sent again next time)`);
      if (attempt >= attempts || !isRetryable(err)) throw fail(hubMessage(err, req.repo, hubUrl) + (attempt > 1 ? ` (after ${attempt} attempts)` : ''), statusOf(err));
      report({ phase: 'retrying', done: 0, total, attempt: attempt + 1 });
    }
  }
  report({ phase: 'done', done: total, total });
  return { repo: req.repo, url: `${hubUrl}/${req.repo}`, created, ...(commit ? { commit } : {}), files, sha256: folderDigest(files), private: isPrivate, ...(ourTinkerPath ? { tinkerPath: ourTinkerPath } : {}) };
}

async function readIfExists(file: string): Promise<string> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch {
    return '';
  }
}

/** The token to publish with: the one stored in SecretStorage first, then HF_TOKEN. Never the Tinker key. */
export function hubTokenFrom(stored: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const t = stored?.trim() || env.HF_TOKEN?.trim();
  return t || undefined;
}
