// `tinker-studio export adapter|merge`: a checkpoint (a downloaded folder, or a tinker:// path
// downloaded first into a temporary folder) → a PEFT adapter folder or a merged Hugging Face model.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadCheckpoint } from '../core/checkpoints/download';
import type { ServiceClient } from '../core/tinker/client';
import { exportCheckpoint } from '../core/export/exportCheckpoint';
import { errorMessage } from '../core/errors';
import { exportEngineModel } from '../engine/model/hfExport';
import type { ExportArgs } from './exportArgs';
import { runPublish } from './publish';

export interface ExportIo {
  out: (text: string) => void;
  err: (text: string) => void;
  signal?: AbortSignal;
  /** a client for a tinker:// checkpoint, made only when one is asked for */
  connect: () => Promise<ServiceClient>;
  /** where HF_TOKEN and HF_ENDPOINT are read (default process.env) */
  env?: NodeJS.ProcessEnv;
}

export async function runExport(args: ExportArgs, io: ExportIo): Promise<number> {
  if (args.kind === 'publish') return runPublish(args, { ...io, env: io.env ?? process.env });
  let checkpointDir = path.resolve(args.checkpoint);
  let downloaded: string | undefined;
  try {
    if (args.checkpoint.startsWith('tinker://')) {
      downloaded = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'tinker-export-'));
      io.err(`downloading ${args.checkpoint}\n`);
      checkpointDir = (await downloadCheckpoint(await io.connect(), args.checkpoint, downloaded, io.signal ? { signal: io.signal } : {})).dir;
    }
    if (args.kind === 'engine') {
      const e = await exportEngineModel({ source: downloaded ? checkpointDir : args.checkpoint, outDir: args.output });
      io.out(`${e.architecture} of ${e.baseModel}${e.tied ? '' : ' (unembedding untied by its LoRA)'}: ${e.dir}\n${e.files.map((f) => `  ${f}`).join('\n')}\n`);
      return 0;
    }
    let lastTenth = -1;
    const r = await exportCheckpoint({
      kind: args.kind,
      checkpointDir,
      outDir: args.output,
      ...(args.base ? { baseDir: path.resolve(args.base) } : {}),
      ...(args.baseModel ? { baseModel: args.baseModel } : {}),
      ...(args.checkpoint.startsWith('tinker://') ? { tinkerPath: args.checkpoint } : {}),
      ...(args.maxShardGb ? { maxShardBytes: Math.floor(args.maxShardGb * 1000 ** 3) } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
      onProgress: (p) => {
        const tenth = Math.floor((10 * p.done) / Math.max(1, p.total));
        if (tenth !== lastTenth) io.err(`merged ${Math.round((100 * p.done) / Math.max(1, p.total))}% (${p.tensor})\n`);
        lastTenth = tenth;
      },
    });
    io.out(`${args.kind === 'adapter' ? 'PEFT adapter' : 'merged model'} of ${r.baseModel}: ${r.dir}\n${r.files.map((f) => `  ${f}`).join('\n')}\n`);
    return 0;
  } catch (err) {
    if (io.signal?.aborted) throw err;
    io.err(`tinker-studio export ${args.kind}: ${errorMessage(err)}\n`);
    return 1;
  } finally {
    if (downloaded) await fs.promises.rm(downloaded, { recursive: true, force: true });
  }
}
