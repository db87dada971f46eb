// Merges a Tinker LoRA adapter into a Hugging Face model folder, shard by shard and a slice of rows at
// a time: W += (lora_B · alpha/r) @ lora_A, added in fp32 and written back in the tensor's on-disk dtype.
// Memory stays at a few slices (≤ 64 MB) plus one LoRA pair, whatever the model's size. The output is
// written under a temporary name beside outDir and renamed when complete; cancel or failure removes it.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { type LoraPair, type TinkerAdapter, expertCount } from './adapter';
import { ExportRefusal, detectLanguageModelPrefix, familyOfModelType, quantizationRefusal, remapModule } from './families';
import { type FloatDtype, SafetensorsReader, SafetensorsWriter, type TensorInfo, fromFloat32, isFloatDtype, itemSize, numel, toFloat32 } from './safetensors';

export const MAX_SHARD_BYTES = 10 * 1000 ** 3;
const SLICE_BYTES = 4 * 1024 * 1024;

export interface MergeProgress {
  done: number;
  total: number;
  tensor: string;
}

export interface MergeOptions {
  signal?: AbortSignal;
  onProgress?: (p: MergeProgress) => void;
  /** output shards are at most this size (default 10 GB) */
  maxShardBytes?: number;
  /** the model card written as README.md */
  modelCard?: string;
  /** bytes read per slice (tests make it small to cross slice edges) */
  sliceBytes?: number;
}

export interface MergeResult {
  dir: string;
  shards: string[];
  /** base tensors a LoRA delta was added to */
  merged: number;
  tensors: number;
  bytes: number;
}

const ConfigSchema = z.object({ model_type: z.string().optional(), text_config: z.object({ model_type: z.string().optional() }).passthrough().optional() }).passthrough();
const IndexSchema = z.object({ weight_map: z.record(z.string(), z.string()) }).passthrough();

/** Where one LoRA pair lands in a base tensor. */
interface Delta {
  pair: LoraPair;
  /** a per-expert base tensor: which expert's slice of the 3-D pair */
  expert?: number;
  /** first row (or column, transposed) of this projection in a fused tensor, and the step between its rows */
  offset: number;
  stride: number;
  /** the base tensor is (E, in, out) rather than (E, out, in) */
  transposed: boolean;
}

interface LoadedDelta extends Delta {
  a: Float32Array;
  /** lora_B already multiplied by alpha / r, rounded to fp32 */
  b: Float32Array;
  nA: number;
  nB: number;
  r: number;
  inDim: number;
  outDim: number;
}

interface BaseTensor {
  info: TensorInfo;
  reader: SafetensorsReader;
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.promises.readFile(file, 'utf8'));
  } catch (err) {
    throw new ExportRefusal(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function exists(p: string): Promise<boolean> {
  return fs.promises.access(p).then(
    () => true,
    () => false,
  );
}

/** The base folder's shards: from model.safetensors.index.json, or the one model.safetensors. */
async function openBase(baseDir: string): Promise<{ readers: SafetensorsReader[]; indexFile?: string }> {
  const indexFile = path.join(baseDir, 'model.safetensors.index.json');
  let files: string[];
  if (await exists(indexFile)) {
    const idx = IndexSchema.safeParse(await readJson(indexFile));
    if (!idx.success) throw new ExportRefusal(`${indexFile}: ${idx.error.issues.map((i) => `field "${i.path.join('.')}" ${i.message}`).join('; ')}`);
    files = [...new Set(Object.values(idx.data.weight_map))].sort();
  } else if (await exists(path.join(baseDir, 'model.safetensors'))) {
    files = ['model.safetensors'];
  } else {
    const bin = (await fs.promises.readdir(baseDir)).some((f) => f.endsWith('.bin'));
    throw new ExportRefusal(`${baseDir} has no model.safetensors or model.safetensors.index.json${bin ? ' (only .bin weights, which are not read: convert them to safetensors)' : ''}: not a Hugging Face model folder`);
  }
  const readers: SafetensorsReader[] = [];
  try {
    for (const f of files) readers.push(await SafetensorsReader.open(path.join(baseDir, f)));
  } catch (err) {
    await Promise.all(readers.map((r) => r.close()));
    throw err;
  }
  return { readers, ...(files.length > 1 || files[0] !== 'model.safetensors' ? { indexFile } : {}) };
}

/** Finds each adapter pair's base tensor(s) and checks the shapes fit. */
function planDeltas(adapter: TinkerAdapter, base: Map<string, BaseTensor>, config: z.infer<typeof ConfigSchema>, where: string): Map<string, Delta[]> {
  const modelType = config.model_type ?? config.text_config?.model_type;
  if (!modelType) throw new ExportRefusal(`${where}: config.json has no model_type`);
  const family = familyOfModelType(modelType);
  const lmPrefix = detectLanguageModelPrefix(base.keys());
  const ctx = { family, hasLmHead: [...base.keys()].some((k) => k === 'lm_head.weight' || k.endsWith('.lm_head.weight')), ...(lmPrefix ? { languageModelPrefix: lmPrefix } : {}) };
  const plan = new Map<string, Delta[]>();
  const push = (target: string, d: Delta) => plan.set(target, [...(plan.get(target) ?? []), d]);
  const missing = (p: LoraPair, target: string) => new ExportRefusal(`adapter module "${p.module}" maps to "${target}", which the base model in ${where} does not have: is it the checkpoint's base model?`);
  // Qwen3.5's projections Tinker trains apart and the checkpoint holds fused: each part's rows follow the previous parts'
  const fusedOffsets = new Map<LoraPair, { target: string; offset: number }>();
  for (const f of family.fusedProjections ?? []) {
    const groups = new Map<string, Map<string, LoraPair>>();
    for (const p of adapter.pairs) {
      const m = remapModule(p.module, ctx, 'merge');
      const dot = m.lastIndexOf('.');
      if (f.parts.includes(m.slice(dot + 1))) groups.set(m.slice(0, dot), (groups.get(m.slice(0, dot)) ?? new Map()).set(m.slice(dot + 1), p));
    }
    for (const [prefix, parts] of groups) {
      const target = `${prefix}.${f.target}.weight`;
      if (!base.has(target)) continue;
      let offset = 0;
      for (const part of f.parts) {
        const p = parts.get(part);
        const rows = p?.b.shape[0] ?? Math.floor(base.get(target)!.info.shape[0]! / f.parts.length);
        if (p) fusedOffsets.set(p, { target, offset });
        offset += rows;
      }
    }
  }
  for (const p of adapter.pairs) {
    const module = remapModule(p.module, ctx, 'merge');
    const fused = fusedOffsets.get(p);
    if (p.a.shape.length === 2) {
      const target = fused?.target ?? `${module}.weight`;
      if (!base.has(target)) throw missing(p, target);
      push(target, { pair: p, offset: fused?.offset ?? 0, stride: 1, transposed: false });
      continue;
    }
    if (numel(p.a.shape) === 0 && numel(p.b.shape) === 0) continue; // a placeholder for a projection the model lacks
    const dot = module.lastIndexOf('.');
    const prefix = module.slice(0, dot);
    const leaf = module.slice(dot + 1);
    if (base.has(`${prefix}.0.${leaf}.weight`)) {
      for (let e = 0; e < expertCount(p); e++) {
        const target = `${prefix}.${e}.${leaf}.weight`;
        if (!base.has(target)) throw missing(p, target);
        push(target, { pair: p, expert: e, offset: 0, stride: 1, transposed: false });
      }
      continue;
    }
    const gateUp = leaf === 'gate_proj' || leaf === 'up_proj';
    const target = `${prefix}.${gateUp ? 'gate_up_proj' : leaf}`;
    const t = base.get(target);
    if (!t) throw missing(p, `${prefix}.0.${leaf}.weight or ${target}`);
    const outDim = p.b.shape[1]!;
    const interleaved = gateUp && family.interleavedGateUp === true;
    const index = leaf === 'up_proj' ? 1 : 0;
    const fusedOut = gateUp ? 2 * outDim : outDim;
    const transposed = family.expertsTransposed === true ? t.info.shape[2] === fusedOut : t.info.shape[1] !== fusedOut && t.info.shape[2] === fusedOut;
    push(target, { pair: p, offset: interleaved ? index : gateUp ? index * outDim : 0, stride: interleaved ? 2 : 1, transposed });
  }
  for (const [target, deltas] of plan) {
    const t = base.get(target)!;
    if (!isFloatDtype(t.info.dtype)) throw new ExportRefusal(`${t.reader.header.file}: "${target}" is ${t.info.dtype}; a LoRA delta is added only to F32, BF16 or F16 tensors (a quantized base needs re-quantising, which this export does not do)`);
    for (const d of deltas) checkShape(t.info, d, where);
  }
  return plan;
}

function dims(d: Delta): { r: number; inDim: number; outDim: number; experts: number } {
  const { a, b } = d.pair;
  const three = a.shape.length === 3;
  return { r: a.shape[three ? 1 : 0]!, inDim: a.shape[three ? 2 : 1]!, outDim: b.shape[three ? 1 : 0]!, experts: three && d.expert === undefined ? expertCount(d.pair) : 1 };
}

function checkShape(t: TensorInfo, d: Delta, where: string): void {
  const { r, inDim, outDim, experts } = dims(d);
  const rB = d.pair.b.shape[d.pair.b.shape.length - 1]!;
  const shape = t.shape.length === 2 ? [1, ...t.shape] : t.shape;
  const span = d.offset + (outDim - 1) * d.stride + 1;
  const ok = rB === r && shape.length === 3 && shape[0] === experts && (d.transposed ? shape[1] === inDim && shape[2]! >= span : shape[2] === inDim && shape[1]! >= span);
  if (!ok) {
    throw new ExportRefusal(
      `adapter module "${d.pair.module}" (lora_A ${JSON.stringify(d.pair.a.shape)}, lora_B ${JSON.stringify(d.pair.b.shape)}) does not fit "${t.name}" ${JSON.stringify(t.shape)} of the base model in ${where}: is it the checkpoint's base model?`,
    );
  }
}

async function loadDelta(adapter: TinkerAdapter, d: Delta): Promise<LoadedDelta> {
  const { r, inDim, outDim } = dims(d);
  let a = await adapter.reader.readFloat32(d.pair.a.name);
  let b = await adapter.reader.readFloat32(d.pair.b.name);
  let nA = d.pair.a.shape.length === 3 ? d.pair.a.shape[0]! : 1;
  let nB = d.pair.b.shape.length === 3 ? d.pair.b.shape[0]! : 1;
  if (d.expert !== undefined) {
    // one expert's slice of the 3-D pair (a shared side has one)
    const ea = nA === 1 ? 0 : d.expert;
    const eb = nB === 1 ? 0 : d.expert;
    a = a.slice(ea * r * inDim, (ea + 1) * r * inDim);
    b = b.slice(eb * outDim * r, (eb + 1) * outDim * r);
    nA = nB = 1;
  }
  const scale = adapter.scale;
  for (let i = 0; i < b.length; i++) b[i] = Math.fround(b[i]! * scale);
  return { ...d, a, b, nA, nB, r, inDim, outDim };
}

/** Adds the deltas to rows [row0, row0 + rows) of a tensor viewed as (E·X, Y); `values` holds those rows. */
function addDeltas(values: Float32Array, row0: number, rows: number, shape: readonly number[], deltas: readonly LoadedDelta[]): void {
  const X = shape.length === 3 ? shape[1]! : shape[0]!;
  const Y = shape[shape.length - 1]!;
  const acc = new Float64Array(Y);
  for (let rr = 0; rr < rows; rr++) {
    const row = row0 + rr;
    const e = Math.floor(row / X);
    const x = row % X;
    acc.fill(0);
    let touched = false;
    for (const d of deltas) {
      const aBase = (d.nA === 1 ? 0 : e) * d.r * d.inDim;
      const bBase = (d.nB === 1 ? 0 : e) * d.outDim * d.r;
      const a = d.a;
      const b = d.b;
      const r = d.r;
      const inDim = d.inDim;
      if (!d.transposed) {
        const rel = x - d.offset;
        if (rel < 0 || rel % d.stride !== 0 || rel / d.stride >= d.outDim) continue;
        const bRow = bBase + (rel / d.stride) * r;
        for (let k = 0; k < r; k++) {
          const bk = b[bRow + k]!;
          if (bk === 0) continue;
          const aRow = aBase + k * inDim;
          for (let i = 0; i < inDim; i++) acc[i] += bk * a[aRow + i]!;
        }
      } else {
        for (let o = 0; o < d.outDim; o++) {
          let s = 0;
          for (let k = 0; k < r; k++) s += a[aBase + k * inDim + x]! * b[bBase + o * r + k]!;
          acc[d.offset + o * d.stride] += s;
        }
      }
      touched = true;
    }
    if (!touched) continue;
    // the delta rounded to fp32, then one fp32 add (a sum of two floats in f64 rounds as fp32 would)
    const base = rr * Y;
    for (let i = 0; i < Y; i++) values[base + i] = Math.fround(values[base + i]! + Math.fround(acc[i]!));
  }
}

async function copyTensor(src: BaseTensor, out: SafetensorsWriter, sliceBytes: number, tick: (n: number) => void, signal?: AbortSignal): Promise<void> {
  const size = src.info.end - src.info.begin;
  for (let at = 0; at < size; at += sliceBytes) {
    signal?.throwIfAborted();
    const bytes = await src.reader.readBytes(src.info, at, Math.min(size, at + sliceBytes));
    await out.write(bytes);
    tick(bytes.length);
  }
}

async function mergeTensor(src: BaseTensor, deltas: readonly LoadedDelta[], out: SafetensorsWriter, sliceBytes: number, tick: (n: number) => void, signal?: AbortSignal): Promise<void> {
  const { shape } = src.info;
  const dtype = src.info.dtype as FloatDtype;
  const item = itemSize(dtype)!;
  const Y = shape[shape.length - 1]!;
  const totalRows = numel(shape) / Y;
  const rowsPer = Math.max(1, Math.floor(sliceBytes / (Y * item)));
  for (let row = 0; row < totalRows; row += rowsPer) {
    signal?.throwIfAborted();
    const rows = Math.min(rowsPer, totalRows - row);
    const bytes = await src.reader.readBytes(src.info, row * Y * item, (row + rows) * Y * item);
    const values = toFloat32(bytes, dtype);
    addDeltas(values, row, rows, shape, deltas);
    await out.write(fromFloat32(values, dtype));
    tick(bytes.length);
  }
}

/** Files of the base folder the merged model keeps as they are (config, tokenizer, generation config …). */
async function companionFiles(baseDir: string): Promise<string[]> {
  const entries = await fs.promises.readdir(baseDir, { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith('.') && !/\.(safetensors|bin|pt|pth|gguf|ckpt)$/.test(e.name) && e.name !== 'model.safetensors.index.json' && e.name !== 'README.md')
    .map((e) => e.name)
    .sort();
}

export async function mergeIntoHfModel(baseDir: string, adapter: TinkerAdapter, outDir: string, o: MergeOptions = {}): Promise<MergeResult> {
  const configFile = path.join(baseDir, 'config.json');
  if (!(await exists(configFile))) throw new ExportRefusal(`${baseDir} has no config.json: not a Hugging Face model folder`);
  const config = ConfigSchema.safeParse(await readJson(configFile));
  if (!config.success) throw new ExportRefusal(`${configFile}: ${config.error.issues.map((i) => `field "${i.path.join('.')}" ${i.message}`).join('; ')}`);
  const quantized = quantizationRefusal(config.data, configFile);
  if (quantized) throw new ExportRefusal(quantized);
  if (await exists(outDir)) throw new ExportRefusal(`${outDir} already exists; choose a new folder (nothing was written)`);
  const { readers } = await openBase(baseDir);
  const tmp = path.join(path.dirname(outDir), `.${path.basename(outDir)}.${process.pid}-${randomBytes(4).toString('hex')}.partial`);
  try {
    const base = new Map<string, BaseTensor>();
    for (const reader of readers) for (const info of reader.header.tensors) base.set(info.name, { info, reader });
    const plan = planDeltas(adapter, base, config.data, baseDir);
    const maxShard = o.maxShardBytes ?? MAX_SHARD_BYTES;
    const sliceBytes = o.sliceBytes ?? SLICE_BYTES;
    // shards in the base's order, each ≤ maxShard (a tensor larger than that gets a shard of its own)
    const shards: BaseTensor[][] = [];
    let size = 0;
    for (const t of base.values()) {
      const bytes = t.info.end - t.info.begin;
      if (shards.length === 0 || (size + bytes > maxShard && size > 0)) {
        shards.push([]);
        size = 0;
      }
      shards.at(-1)!.push(t);
      size += bytes;
    }
    const total = [...base.values()].reduce((s, t) => s + t.info.end - t.info.begin, 0);
    await fs.promises.mkdir(tmp, { recursive: true });
    let done = 0;
    const names = shards.length === 1 ? ['model.safetensors'] : shards.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`);
    const weightMap: Record<string, string> = {};
    for (const [i, shard] of shards.entries()) {
      const w = await SafetensorsWriter.create(path.join(tmp, names[i]!), shard.map((t) => ({ name: t.info.name, dtype: t.info.dtype, shape: t.info.shape })), { format: 'pt' });
      try {
        for (const t of shard) {
          weightMap[t.info.name] = names[i]!;
          const tick = (n: number) => {
            done += n;
            o.onProgress?.({ done, total, tensor: t.info.name });
          };
          const deltas = plan.get(t.info.name);
          if (deltas) await mergeTensor(t, await Promise.all(deltas.map((d) => loadDelta(adapter, d))), w, sliceBytes, tick, o.signal);
          else await copyTensor(t, w, sliceBytes, tick, o.signal);
        }
        await w.finish();
      } catch (err) {
        await w.abandon();
        throw err;
      }
    }
    if (shards.length > 1) {
      await fs.promises.writeFile(path.join(tmp, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2) + '\n');
    }
    for (const f of await companionFiles(baseDir)) await fs.promises.copyFile(path.join(baseDir, f), path.join(tmp, f));
    if (o.modelCard !== undefined) await fs.promises.writeFile(path.join(tmp, 'README.md'), o.modelCard);
    o.signal?.throwIfAborted();
    if (await exists(outDir)) throw new ExportRefusal(`${outDir} appeared while merging; the merged model was not moved there`);
    await fs.promises.rename(tmp, outDir);
    return { dir: outDir, shards: names, merged: plan.size, tensors: base.size, bytes: total };
  } finally {
    await Promise.all(readers.map((r) => r.close()));
    await fs.promises.rm(tmp, { recursive: true, force: true });
  }
}
