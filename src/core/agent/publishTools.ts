// The agent's publish_to_hub tool, on the same core as the CLI and "Publish to Hugging Face Hub…": an
// exported folder, or a tinker:// checkpoint (downloaded and exported as a PEFT adapter first), to a
// Hub repo, private unless `public`; recorded on the workspace registry's version of the checkpoint.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod';
import { downloadCheckpoint } from '../checkpoints/download';
import { exportCheckpoint } from '../export/exportCheckpoint';
import { HUB_URL_DEFAULT, hubTokenFrom } from '../export/publish';
import { publishAndRecord } from '../models/exports';
import { registryFileIn } from '../models/store';
import type { TrainingSession } from './session';

export const PublishToHubInput = z.object({
  source: z.string().min(1).describe('an exported adapter or model folder (relative to the workspace), or a tinker:// sampler path (exported as a PEFT adapter first)'),
  repo: z.string().min(1).describe('owner/name of the Hugging Face model repo to create, or to update when it holds this checkpoint'),
  public: z.boolean().optional().describe('make a new repo public (default private)'),
  backend: z.enum(['local', 'cloud', 'custom']).optional().describe('where a tinker:// checkpoint lives (default local)'),
  base_url: z.string().optional().describe('the server URL for custom'),
});

export async function publishToHubTool(s: TrainingSession, a: z.output<typeof PublishToHubInput>, signal?: AbortSignal): Promise<{ text: string; value: unknown }> {
  const token = hubTokenFrom(await s.hubToken(), process.env);
  if (!token) throw new Error('no Hugging Face token: ask the user to run "Tinker: Set Hugging Face Token" (or set HF_TOKEN), then try again');
  const c = s.evalContext();
  let work: string | undefined;
  try {
    let folder = path.resolve(c.baseDir, a.source);
    const tinkerPath = a.source.startsWith('tinker://') ? a.source : undefined;
    if (tinkerPath) {
      work = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'tinker-publish-'));
      const client = await c.connect({ backend: a.backend ?? 'local', ...(a.base_url ? { base_url: a.base_url } : {}) });
      try {
        const ckpt = (await downloadCheckpoint(client, tinkerPath, path.join(work, 'checkpoint'), signal ? { signal } : {})).dir;
        folder = (await exportCheckpoint({ kind: 'adapter', checkpointDir: ckpt, outDir: path.join(work, 'adapter'), tinkerPath, ...(signal ? { signal } : {}) })).dir;
      } finally {
        client.close();
      }
    }
    const { published, version } = await publishAndRecord({
      folder,
      repo: a.repo,
      public: a.public === true,
      token,
      hubUrl: process.env.HF_ENDPOINT?.trim() || HUB_URL_DEFAULT,
      registryFile: registryFileIn(c.baseDir),
      temporaryFolder: work !== undefined,
      ...(tinkerPath ? { tinkerPath } : {}),
      ...(signal ? { signal } : {}),
    });
    const { files, ...rest } = published;
    return {
      text: `${published.created ? 'created' : 'updated'} ${published.private ? 'private' : 'public'} repo ${published.repo} (${files.length} files): ${published.url}${version ? `; recorded on ${version}` : ''}`,
      value: { ...rest, files: files.map((f) => f.path), ...(version ? { version } : {}) },
    };
  } finally {
    if (work) await fs.promises.rm(work, { recursive: true, force: true });
  }
}
