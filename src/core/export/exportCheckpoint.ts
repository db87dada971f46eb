// The one entry point the CLI, the Checkpoints view and the agent tool share: a downloaded checkpoint
// folder → a PEFT adapter folder or a merged Hugging Face model, with its model card. The output is
// written under a temporary name and renamed when complete.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openTinkerAdapter, toPeftAdapter } from './adapter';
import { ExportRefusal } from './families';
import { type MergeProgress, mergeIntoHfModel } from './merge';
import { modelCard } from './modelCard';
import { readHeader } from './safetensors';

export type ExportKind = 'adapter' | 'merge';

export interface ExportRequest {
  kind: ExportKind;
  /** a downloaded checkpoint folder (adapter_config.json, adapter_model.safetensors, checkpoint_complete) */
  checkpointDir: string;
  outDir: string;
  /** the base model's Hugging Face folder: needed to merge; optional for an adapter */
  baseDir?: string;
  /** the base model's hub id, when the checkpoint's config does not name it */
  baseModel?: string;
  tinkerPath?: string;
  maxShardBytes?: number;
  signal?: AbortSignal;
  onProgress?: (p: MergeProgress) => void;
}

export interface ExportResult {
  dir: string;
  files: string[];
  baseModel: string;
  /** merge: tensors a delta was added to; adapter: tensors written */
  tensors: number;
}

async function readBaseConfig(baseDir: string): Promise<Record<string, unknown>> {
  const file = path.join(baseDir, 'config.json');
  try {
    const v: unknown = JSON.parse(await fs.promises.readFile(file, 'utf8'));
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not a JSON object');
    return v as Record<string, unknown>;
  } catch (err) {
    throw new ExportRefusal(`${file}: ${err instanceof Error ? err.message : String(err)} (is ${baseDir} a Hugging Face model folder?)`);
  }
}

async function baseKeys(baseDir: string): Promise<Set<string>> {
  const names = (await fs.promises.readdir(baseDir)).filter((f) => f.endsWith('.safetensors'));
  const keys = new Set<string>();
  for (const f of names) for (const t of (await readHeader(path.join(baseDir, f))).tensors) keys.add(t.name);
  return keys;
}

export async function exportCheckpoint(req: ExportRequest): Promise<ExportResult> {
  const outDir = path.resolve(req.outDir);
  if (fs.existsSync(outDir)) throw new ExportRefusal(`${outDir} already exists; choose a new folder (nothing was written)`);
  const adapter = await openTinkerAdapter(req.checkpointDir);
  try {
    const baseModel = req.baseModel ?? adapter.baseModel;
    if (!baseModel) throw new ExportRefusal(`${req.checkpointDir}/adapter_config.json names no base model; give it (--base-model)`);
    const tinkerPath = req.tinkerPath ?? adapter.config.tinker_path;
    if (req.kind === 'merge') {
      if (!req.baseDir) throw new ExportRefusal('merging needs the base model\'s Hugging Face folder (--base DIR)');
      const card = modelCard({ kind: 'merged', baseModel, r: adapter.config.r, alpha: adapter.alpha, ...(tinkerPath ? { tinkerPath } : {}) });
      const r = await mergeIntoHfModel(req.baseDir, adapter, outDir, {
        modelCard: card,
        ...(req.maxShardBytes ? { maxShardBytes: req.maxShardBytes } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        ...(req.onProgress ? { onProgress: req.onProgress } : {}),
      });
      return { dir: r.dir, files: fs.readdirSync(r.dir).sort(), baseModel, tensors: r.merged };
    }
    const tmp = path.join(path.dirname(outDir), `.${path.basename(outDir)}.${process.pid}-${randomBytes(4).toString('hex')}.partial`);
    try {
      const r = await toPeftAdapter(adapter, tmp, {
        baseModel,
        ...(req.baseDir ? { baseConfig: await readBaseConfig(req.baseDir), baseKeys: await baseKeys(req.baseDir) } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
      });
      await fs.promises.writeFile(
        path.join(tmp, 'README.md'),
        modelCard({ kind: 'adapter', baseModel, r: adapter.config.r, alpha: adapter.alpha, targetModules: r.targetModules, ...(tinkerPath ? { tinkerPath } : {}) }),
      );
      req.signal?.throwIfAborted();
      await fs.promises.rename(tmp, outDir);
      return { dir: outDir, files: [...r.files, 'README.md'].sort(), baseModel, tensors: r.tensors };
    } finally {
      await fs.promises.rm(tmp, { recursive: true, force: true });
    }
  } finally {
    await adapter.reader.close();
  }
}
