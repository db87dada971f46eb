// Downloads a checkpoint's archive into a folder and unpacks it there. Nothing half-written is ever
// visible under the final name: the archive streams into a hidden temp file, is unpacked into a
// hidden temp folder, and only a complete unpack is renamed into place. Cancel or failure removes both.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServiceClient } from '../tinker/client';
import { fetch as undiciFetch } from 'undici';
import { splitTinkerPath } from '../tinker/client';
import { type NetworkOptions, viaProxy, withDispatcher } from '../tinker/proxy';
import { describeCheckpointError } from './errors';
import { extractTar } from './tar';
import { errorMessage } from '../errors';

export interface DownloadProgress {
  received: number;
  /** from Content-Length, when the server sends it */
  total?: number;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
  /** how the archive URL is reached (proxy, NO_PROXY, certificates); default: the environment */
  network?: NetworkOptions;
}

export interface DownloadResult {
  /** the folder the archive was unpacked into */
  dir: string;
  /** the files in it, relative to `dir` */
  files: string[];
  bytes: number;
}

/** The folder name for a checkpoint: run, kind and name, with anything unsafe in a file name replaced. */
export function downloadFolderName(tinkerPath: string): string {
  const { runId, kind, name } = splitTinkerPath(tinkerPath);
  return `${runId}-${kind === 'weights' ? 'state' : 'sampler'}-${name}`.replace(/[^A-Za-z0-9._-]+/g, '_');
}

async function exists(p: string): Promise<boolean> {
  return fs.promises.access(p).then(
    () => true,
    () => false,
  );
}

/** `dest/<name>`, or `<name>-2`, `-3`… when taken: a download never writes into an existing folder. */
async function freeFolder(dest: string, name: string): Promise<string> {
  for (let i = 1; ; i++) {
    const candidate = path.join(dest, i === 1 ? name : `${name}-${i}`);
    if (!(await exists(candidate))) return candidate;
  }
}

export async function downloadCheckpoint(client: ServiceClient, tinkerPath: string, destDir: string, o: DownloadOptions = {}): Promise<DownloadResult> {
  let url: string;
  try {
    url = (await client.checkpointArchiveUrl(tinkerPath, o.signal)).url;
  } catch (err) {
    if (o.signal?.aborted) throw err;
    throw describeCheckpointError(err, tinkerPath, { action: 'download' });
  }
  await fs.promises.mkdir(destDir, { recursive: true });
  const name = downloadFolderName(tinkerPath);
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmpTar = path.join(destDir, `.${name}.${tag}.tar.part`);
  const tmpDir = path.join(destDir, `.${name}.${tag}.partial`);
  try {
    // the signed link gets no credentials; it goes the way the client would go to that host
    return await withDispatcher(url, o.network ?? {}, async (dispatcher, route) => {
      let res: Awaited<ReturnType<typeof undiciFetch>>;
      try {
        res = await undiciFetch(url, { signal: o.signal, redirect: 'follow', dispatcher });
      } catch (err) {
        if (o.signal?.aborted) throw err;
        const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : errorMessage(err);
        throw new Error(`the archive download could not connect (${cause}${viaProxy(route)})`);
      }
      return receive(res, o, destDir, name, tmpTar, tmpDir);
    });
  } finally {
    await fs.promises.rm(tmpTar, { force: true });
    await fs.promises.rm(tmpDir, { recursive: true, force: true });
  }
}

async function receive(res: Awaited<ReturnType<typeof undiciFetch>>, o: DownloadOptions, destDir: string, name: string, tmpTar: string, tmpDir: string): Promise<DownloadResult> {
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new Error(`the archive download answered HTTP ${res.status}${res.status === 403 || res.status === 404 ? ' (the signed link expired or is wrong; try again)' : ''}`);
  }
  const lengthHeader = Number(res.headers.get('content-length') ?? NaN);
  const total = Number.isFinite(lengthHeader) ? lengthHeader : undefined;
  let received = 0;
  const out = await fs.promises.open(tmpTar, 'w');
  try {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await out.write(value);
      received += value.byteLength;
      o.onProgress?.({ received, total });
      o.signal?.throwIfAborted();
    }
    await out.sync();
  } finally {
    await out.close();
  }
  if (total !== undefined && received !== total) throw new Error(`the archive download stopped at ${received} of ${total} bytes`);
  const files = await extractTar(tmpTar, tmpDir, o.signal);
  o.signal?.throwIfAborted();
  const final = await freeFolder(destDir, name);
  await fs.promises.rename(tmpDir, final);
  return { dir: final, files, bytes: received };
}
