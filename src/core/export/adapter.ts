// A downloaded Tinker checkpoint (adapter_config.json, adapter_model.safetensors, checkpoint_complete)
// read and checked, and turned into a PEFT adapter folder (adapter_config.json as PEFT reads it, the
// tensors under PEFT's names, experts split per expert, Qwen3.5's split projections kept split).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { type ExportFamily, ExportRefusal, adapterModuleName, familyOfModelType, modelTypeOfName, remapModule } from './families';
import { SafetensorsReader, type TensorInfo, writeSafetensors } from './safetensors';

export const TinkerAdapterConfigSchema = z
  .object({
    r: z.number().int().positive(),
    lora_alpha: z.number().positive().optional(),
    base_model_name_or_path: z.string().optional(),
    base_model: z.string().optional(),
    tinker_path: z.string().optional(),
    format: z.string().optional(),
  })
  .passthrough();
export type TinkerAdapterConfig = z.infer<typeof TinkerAdapterConfigSchema>;

export interface LoraPair {
  /** the module name in the archive, `base_model.model.` stripped (model.layers.0.mlp.experts.w1) */
  module: string;
  a: TensorInfo;
  b: TensorInfo;
}

export interface TinkerAdapter {
  dir: string;
  config: TinkerAdapterConfig;
  /** alpha / r, the factor lora_B is scaled by */
  scale: number;
  alpha: number;
  baseModel?: string;
  reader: SafetensorsReader;
  pairs: LoraPair[];
}

async function exists(p: string): Promise<boolean> {
  return fs.promises.access(p).then(
    () => true,
    () => false,
  );
}

/** Opens a checkpoint folder; the caller closes `reader`. Errors name the file and what is wrong. */
export async function openTinkerAdapter(dir: string): Promise<TinkerAdapter> {
  const configFile = path.join(dir, 'adapter_config.json');
  if (!(await exists(configFile))) throw new ExportRefusal(`${dir} has no adapter_config.json: it is not a downloaded Tinker checkpoint (download it first)`);
  if (!(await exists(path.join(dir, 'checkpoint_complete')))) throw new ExportRefusal(`${dir} has no checkpoint_complete marker: the checkpoint was not saved or downloaded in full`);
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.promises.readFile(configFile, 'utf8'));
  } catch (err) {
    throw new ExportRefusal(`${configFile}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = TinkerAdapterConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ExportRefusal(`${configFile}: ${parsed.error.issues.map((i) => `field "${i.path.join('.')}" ${i.message}`).join('; ')}`);
  const config = parsed.data;
  if (config.format === 'tinker-studio-engine-state') throw new ExportRefusal(`${dir} is a checkpoint of the embedded engine (its own weights format), which has no Hugging Face form`);
  const weights = path.join(dir, 'adapter_model.safetensors');
  if (!(await exists(weights))) {
    const bin = await exists(path.join(dir, 'adapter_model.bin'));
    throw new ExportRefusal(bin ? `${dir} holds adapter_model.bin (a pickle), which Tinker Studio does not load; only adapter_model.safetensors is read` : `${dir} has no adapter_model.safetensors`);
  }
  const reader = await SafetensorsReader.open(weights);
  try {
    const halves = new Map<string, { a?: TensorInfo; b?: TensorInfo }>();
    for (const t of reader.header.tensors) {
      const m = adapterModuleName(t.name);
      if (!m) throw new ExportRefusal(`${weights}: tensor "${t.name}" is not a LoRA tensor (<module>.lora_A.weight or .lora_B.weight)`);
      const h = halves.get(m.module) ?? {};
      h[m.part === 'A' ? 'a' : 'b'] = t;
      halves.set(m.module, h);
    }
    const pairs: LoraPair[] = [];
    for (const [module, h] of halves) {
      if (!h.a || !h.b) throw new ExportRefusal(`${weights}: module "${module}" has lora_${h.a ? 'A' : 'B'} but no lora_${h.a ? 'B' : 'A'}`);
      pairs.push({ module, a: h.a, b: h.b });
    }
    if (pairs.length === 0) throw new ExportRefusal(`${weights} holds no LoRA tensors`);
    pairs.sort((x, y) => (x.module < y.module ? -1 : x.module > y.module ? 1 : 0));
    const alpha = config.lora_alpha ?? config.r;
    const baseModel = config.base_model_name_or_path ?? config.base_model;
    return { dir, config, alpha, scale: alpha / config.r, ...(baseModel ? { baseModel } : {}), reader, pairs };
  } catch (err) {
    await reader.close();
    throw err;
  }
}

/** The expert count of a 3-D pair (A is (1|E, r, in), B is (1|E, out, r); one side may be shared). */
export function expertCount(p: LoraPair): number {
  return Math.max(p.a.shape[0]!, p.b.shape[0]!);
}

export interface PeftExportOptions {
  /** the base model's hub id written into the config and card (default: the checkpoint's) */
  baseModel?: string;
  /** the base's config.json, when its folder is at hand (names the family, tells tied embeddings) */
  baseConfig?: Record<string, unknown>;
  /** the base's tensor names, when its folder is at hand */
  baseKeys?: ReadonlySet<string>;
  signal?: AbortSignal;
}

export interface PeftAdapterResult {
  files: string[];
  targetModules: string[];
  tensors: number;
}

function familyFor(adapter: TinkerAdapter, o: PeftExportOptions): ExportFamily {
  const type = typeof o.baseConfig?.model_type === 'string' ? o.baseConfig.model_type : undefined;
  const base = o.baseModel ?? adapter.baseModel;
  if (type) return familyOfModelType(type);
  if (!base) throw new ExportRefusal(`${adapter.dir}/adapter_config.json names no base model; give it (--base-model) or the base model's folder`);
  return familyOfModelType(modelTypeOfName(base));
}

/**
 * Writes `outDir/adapter_model.safetensors` and `adapter_config.json` in PEFT's layout. The tensors keep
 * their dtype and are not scaled (PEFT scales by lora_alpha / r when it applies them).
 */
export async function toPeftAdapter(adapter: TinkerAdapter, outDir: string, o: PeftExportOptions = {}): Promise<PeftAdapterResult> {
  const family = familyFor(adapter, o);
  if (family.noAdapter) throw new ExportRefusal(family.noAdapter);
  const baseModel = o.baseModel ?? adapter.baseModel;
  if (!baseModel) throw new ExportRefusal(`${adapter.dir}/adapter_config.json names no base model; give it (--base-model)`);
  const keys = o.baseKeys;
  const lmPrefix = keys ? [...keys].find((k) => k.startsWith('model.language_model.')) ? 'model.language_model.' : [...keys].find((k) => k.startsWith('language_model.model.')) ? 'language_model.model.' : undefined : family.languageModelPrefix;
  const ctx = { family, hasLmHead: true, ...(lmPrefix ? { languageModelPrefix: lmPrefix } : {}) };
  const out: { name: string; dtype: string; shape: number[]; data: Buffer }[] = [];
  const targets = new Set<string>();
  const add = (module: string, a: { dtype: string; shape: number[]; data: Buffer }, b: { dtype: string; shape: number[]; data: Buffer }) => {
    out.push({ name: `base_model.model.${module}.lora_A.weight`, ...a }, { name: `base_model.model.${module}.lora_B.weight`, ...b });
    targets.add(module.slice(module.lastIndexOf('.') + 1));
  };
  for (const p of adapter.pairs) {
    o.signal?.throwIfAborted();
    const module = remapModule(p.module, ctx, 'adapter');
    const aBytes = await adapter.reader.readBytes(p.a);
    const bBytes = await adapter.reader.readBytes(p.b);
    if (p.a.shape.length === 3) {
      if (p.a.shape[0] === 0 || p.b.shape[0] === 0 || aBytes.length === 0) continue; // a placeholder for a projection the model lacks
      const n = expertCount(p);
      const aSize = aBytes.length / p.a.shape[0]!;
      const bSize = bBytes.length / p.b.shape[0]!;
      const dot = module.lastIndexOf('.');
      for (let e = 0; e < n; e++) {
        const ea = p.a.shape[0] === 1 ? 0 : e;
        const eb = p.b.shape[0] === 1 ? 0 : e;
        add(
          `${module.slice(0, dot)}.${e}${module.slice(dot)}`,
          { dtype: p.a.dtype, shape: p.a.shape.slice(1), data: Buffer.from(aBytes.subarray(ea * aSize, (ea + 1) * aSize)) },
          { dtype: p.b.dtype, shape: p.b.shape.slice(1), data: Buffer.from(bBytes.subarray(eb * bSize, (eb + 1) * bSize)) },
        );
      }
    } else if (p.a.shape.length === 2 && p.b.shape.length === 2) {
      add(module, { dtype: p.a.dtype, shape: p.a.shape, data: aBytes }, { dtype: p.b.dtype, shape: p.b.shape, data: bBytes });
    } else {
      throw new ExportRefusal(`${adapter.reader.header.file}: module "${p.module}" has lora_A ${JSON.stringify(p.a.shape)} and lora_B ${JSON.stringify(p.b.shape)}; expected 2-D, or 3-D experts`);
    }
  }
  await fs.promises.mkdir(outDir, { recursive: true });
  await writeSafetensors(path.join(outDir, 'adapter_model.safetensors'), out, { format: 'pt' });
  const targetModules = [...targets].sort();
  const config = peftAdapterConfig({ baseModel, r: adapter.config.r, alpha: adapter.alpha, targetModules });
  await fs.promises.writeFile(path.join(outDir, 'adapter_config.json'), JSON.stringify(config, null, 2) + '\n');
  return { files: ['adapter_config.json', 'adapter_model.safetensors'], targetModules, tensors: out.length };
}

/** adapter_config.json with the fields PEFT's LoraConfig reads. */
export function peftAdapterConfig(o: { baseModel: string; r: number; alpha: number; targetModules: string[] }): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: o.baseModel,
    r: o.r,
    lora_alpha: o.alpha,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    target_modules: o.targetModules,
    rank_pattern: {},
    alpha_pattern: {},
    modules_to_save: null,
    use_rslora: false,
    use_dora: false,
  };
}
