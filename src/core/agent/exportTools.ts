// The agent's export tool, on the same core as the CLI and the Checkpoints view: a checkpoint (a
// downloaded folder or a tinker:// path, downloaded first) as a PEFT adapter or merged into the base
// model's Hugging Face folder, with a model card.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod';
import { downloadCheckpoint } from '../checkpoints/download';
import { exportCheckpoint } from '../export/exportCheckpoint';
import type { TrainingSession } from './session';

export const ExportCheckpointInput = z.object({
  checkpoint: z.string().min(1).describe('a tinker:// sampler or state path, or a downloaded checkpoint folder (relative to the workspace)'),
  kind: z.enum(['adapter', 'merge']).describe('adapter: a PEFT adapter folder; merge: the base model with the LoRA merged in'),
  output: z.string().min(1).describe('the folder to write (relative to the workspace); it must not exist'),
  base: z.string().min(1).optional().describe("the base model's Hugging Face folder (config.json, *.safetensors, tokenizer files); needed to merge"),
  backend: z.enum(['local', 'cloud', 'custom']).optional().describe('where a tinker:// checkpoint lives (default local)'),
  base_url: z.string().optional().describe('the server URL for custom'),
});

export async function exportCheckpointTool(s: TrainingSession, a: z.output<typeof ExportCheckpointInput>, signal?: AbortSignal): Promise<{ text: string; value: unknown }> {
  const c = s.evalContext();
  const at = (p: string) => path.resolve(c.baseDir, p);
  let work: string | undefined;
  try {
    let checkpointDir = at(a.checkpoint);
    if (a.checkpoint.startsWith('tinker://')) {
      work = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'tinker-export-'));
      const client = await c.connect({ backend: a.backend ?? 'local', ...(a.base_url ? { base_url: a.base_url } : {}) });
      try {
        checkpointDir = (await downloadCheckpoint(client, a.checkpoint, work, signal ? { signal } : {})).dir;
      } finally {
        client.close();
      }
    }
    const r = await exportCheckpoint({
      kind: a.kind,
      checkpointDir,
      outDir: at(a.output),
      ...(a.base ? { baseDir: at(a.base) } : {}),
      ...(a.checkpoint.startsWith('tinker://') ? { tinkerPath: a.checkpoint } : {}),
      ...(signal ? { signal } : {}),
    });
    return { text: `${a.kind === 'adapter' ? 'PEFT adapter' : 'merged model'} of ${r.baseModel} written to ${r.dir}: ${r.files.join(', ')}`, value: r };
  } finally {
    if (work) await fs.promises.rm(work, { recursive: true, force: true });
  }
}
