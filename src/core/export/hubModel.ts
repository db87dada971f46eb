// A base model's Hugging Face folder fetched from the hub for a merge: the repo's file list (its
// model API), then config, tokenizer and safetensors files one after another, streamed to disk with
// progress and cancel, into a temporary folder renamed when complete.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fetch } from 'undici';
import { z } from 'zod';
import { hubEndpoint } from '../render/hub';
import { type NetworkOptions, withDispatcher } from '../tinker/proxy';

const ModelInfoSchema = z.object({ siblings: z.array(z.object({ rfilename: z.string() })) }).passthrough();

/** What a merge needs of a base folder: weights (safetensors only), config, tokenizer, generation config. */
export function isBaseModelFile(name: string): boolean {
  if (name.includes('/')) return false;
  return /\.safetensors$/.test(name) || name === 'model.safetensors.index.json' || /^(config|generation_config|tokenizer|tokenizer_config|special_tokens_map|chat_template)\.(json|jinja)$/.test(name) || /^(vocab\.json|merges\.txt|tokenizer\.model)$/.test(name);
}

export interface HubModelOptions {
  repo: string;
  /** the folder is created as <destDir>/<org>--<name> */
  destDir: string;
  endpoint?: string;
  /** sent as a bearer token (gated repos); never written anywhere */
  hfToken?: string;
  network?: NetworkOptions;
  signal?: AbortSignal;
  onProgress?: (p: { file: string; received: number; files: number; index: number }) => void;
}

export async function downloadHubModel(o: HubModelOptions): Promise<{ dir: string; files: string[] }> {
  if (!/^[\w.-]+\/[\w.-]+$/.test(o.repo)) throw new Error(`"${o.repo}" is not a hub repo id (org/name)`);
  const endpoint = hubEndpoint(o.endpoint);
  const headers: Record<string, string> = o.hfToken ? { authorization: `Bearer ${o.hfToken}` } : {};
  const final = path.join(o.destDir, o.repo.replace('/', '--'));
  if (fs.existsSync(final)) throw new Error(`${final} already exists; choose it as the base folder, or remove it`);
  const tmp = path.join(o.destDir, `.${path.basename(final)}.${process.pid}-${randomBytes(4).toString('hex')}.partial`);
  const infoUrl = `${endpoint}/api/models/${o.repo}`;
  try {
    return await withDispatcher(infoUrl, o.network ?? {}, async (dispatcher) => {
      const res = await fetch(infoUrl, { headers, signal: o.signal, dispatcher });
      if (!res.ok) throw new Error(`the hub answered HTTP ${res.status} for ${o.repo}${res.status === 401 || res.status === 403 ? ' (a gated repo: set a Hugging Face token)' : ''}`);
      const info = ModelInfoSchema.safeParse(await res.json());
      if (!info.success) throw new Error(`the hub's answer for ${o.repo} has no file list (siblings)`);
      const files = info.data.siblings.map((s) => s.rfilename).filter(isBaseModelFile).sort();
      if (!files.some((f) => f.endsWith('.safetensors')) || !files.includes('config.json')) throw new Error(`${o.repo} on the hub has no config.json with safetensors weights`);
      await fs.promises.mkdir(tmp, { recursive: true });
      for (const [index, file] of files.entries()) {
        const r = await fetch(`${endpoint}/${o.repo}/resolve/main/${file}`, { headers, signal: o.signal, dispatcher, redirect: 'follow' });
        if (!r.ok || !r.body) throw new Error(`the hub answered HTTP ${r.status} for ${o.repo}/${file}`);
        const out = await fs.promises.open(path.join(tmp, file), 'w');
        let received = 0;
        try {
          for await (const chunk of r.body) {
            await out.write(chunk);
            received += chunk.byteLength;
            o.onProgress?.({ file, received, files: files.length, index });
            o.signal?.throwIfAborted();
          }
        } finally {
          await out.close();
        }
      }
      await fs.promises.rename(tmp, final);
      return { dir: final, files };
    });
  } finally {
    await fs.promises.rm(tmp, { recursive: true, force: true });
  }
}
