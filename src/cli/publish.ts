// `tinker-studio export publish <folder | tinker path> --repo OWNER/NAME [--public]`: an exported folder
// (or a tinker:// checkpoint, downloaded and exported as a PEFT adapter first, as push-hf does) to the
// Hugging Face Hub, recorded on the registry's version of that checkpoint when there is one.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadCheckpoint } from '../core/checkpoints/download';
import { errorMessage } from '../core/errors';
import { exportCheckpoint } from '../core/export/exportCheckpoint';
import { HUB_URL_DEFAULT, hubTokenFrom, redactToken } from '../core/export/publish';
import { publishAndRecord } from '../core/models/exports';
import type { ExportArgs } from './exportArgs';
import type { ServiceClient } from '../core/tinker/client';

export interface PublishIo {
  out: (text: string) => void;
  err: (text: string) => void;
  signal?: AbortSignal;
  /** a client for a tinker:// checkpoint, made only when one is asked for */
  connect: () => Promise<ServiceClient>;
  /** HF_TOKEN, HF_ENDPOINT, TINKER_STUDIO_REGISTRY */
  env: NodeJS.ProcessEnv;
}

export async function runPublish(args: ExportArgs, io: PublishIo): Promise<number> {
  const token = hubTokenFrom(undefined, io.env);
  const say = (t: string) => io.err(token ? redactToken(t, token) : t);
  if (!token) {
    say('tinker-studio export publish: no Hugging Face token: set HF_TOKEN to a token with write access (huggingface.co/settings/tokens)\n');
    return 1;
  }
  const hubUrl = io.env.HF_ENDPOINT?.trim() || HUB_URL_DEFAULT;
  const tinkerPath = args.checkpoint.startsWith('tinker://') ? args.checkpoint : undefined;
  let tmp: string | undefined;
  try {
    let folder = path.resolve(args.checkpoint);
    if (tinkerPath) {
      tmp = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'tinker-publish-'));
      say(`downloading ${tinkerPath}\n`);
      const ckpt = (await downloadCheckpoint(await io.connect(), tinkerPath, path.join(tmp, 'checkpoint'), io.signal ? { signal: io.signal } : {})).dir;
      folder = (await exportCheckpoint({ kind: 'adapter', checkpointDir: ckpt, outDir: path.join(tmp, 'adapter'), tinkerPath, ...(args.baseModel ? { baseModel: args.baseModel } : {}), ...(io.signal ? { signal: io.signal } : {}) })).dir;
    }
    const registryFile = path.resolve(args.registry ?? io.env.TINKER_STUDIO_REGISTRY ?? 'tinker-models.json');
    let lastTenth = -1;
    const { published, version } = await publishAndRecord({
      folder,
      repo: args.repo!,
      public: args.public === true,
      token,
      hubUrl,
      ...(tinkerPath ? { tinkerPath } : {}),
      registryFile,
      temporaryFolder: tmp !== undefined,
      ...(io.signal ? { signal: io.signal } : {}),
      onProgress: (p) => {
        if (p.phase === 'retrying') say(`the Hub failed on the way; trying again (attempt ${p.attempt})\n`);
        if (p.phase !== 'uploading') return;
        const tenth = Math.floor((10 * p.done) / Math.max(1, p.total));
        if (tenth !== lastTenth) say(`uploaded ${Math.round((100 * p.done) / Math.max(1, p.total))}%\n`);
        lastTenth = tenth;
      },
    });
    io.out(`${published.created ? 'created' : 'updated'} ${published.private ? 'private' : 'public'} repo ${published.repo}: ${published.url}\n${version ? `recorded on ${version}\n` : ''}`);
    return 0;
  } catch (err) {
    if (io.signal?.aborted) throw err;
    say(`tinker-studio export publish: ${errorMessage(err)}\n`);
    return 1;
  } finally {
    if (tmp) await fs.promises.rm(tmp, { recursive: true, force: true });
  }
}
