// Merging a LoRA checkpoint into a ~1 GB model of the fixtures' Qwen3 dense shape (bf16, random
// weights, generated in a temp folder in 4 MB pieces), rank-8 LoRA on every attention and MLP
// projection and the unembedding. Prints MB/s and the merge's peak memory (the process's max RSS,
// sampled RSS above the level before the merge) next to the bound 2 × largest tensor + 64 MB.
// Wall time on a shared machine mostly measures the queue, so MB per CPU-second is printed too.
// Asserts nothing.   BENCH=export node scripts/bench.mjs     GB=1 RANK=8 SLICE_MB=4
import { randomFillSync } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { openTinkerAdapter } from '../src/core/export/adapter';
import { mergeIntoHfModel } from '../src/core/export/merge';
import { SafetensorsWriter, type TensorEntry, fromFloat32, writeSafetensors } from '../src/core/export/safetensors';

const GB = Number(process.env.GB ?? 1);
const RANK = Number(process.env.RANK ?? 8);
const SLICE = Number(process.env.SLICE_MB ?? 4) * 1024 * 1024;
const H = 1024;
const I = 3072;
const V = 32_000;
const Q = 1024;
const KV = 512;

function layerTensors(l: number): TensorEntry[] {
  const p = `model.layers.${l}`;
  return [
    { name: `${p}.input_layernorm.weight`, dtype: 'BF16', shape: [H] },
    { name: `${p}.self_attn.q_proj.weight`, dtype: 'BF16', shape: [Q, H] },
    { name: `${p}.self_attn.k_proj.weight`, dtype: 'BF16', shape: [KV, H] },
    { name: `${p}.self_attn.v_proj.weight`, dtype: 'BF16', shape: [KV, H] },
    { name: `${p}.self_attn.o_proj.weight`, dtype: 'BF16', shape: [H, Q] },
    { name: `${p}.post_attention_layernorm.weight`, dtype: 'BF16', shape: [H] },
    { name: `${p}.mlp.gate_proj.weight`, dtype: 'BF16', shape: [I, H] },
    { name: `${p}.mlp.up_proj.weight`, dtype: 'BF16', shape: [I, H] },
    { name: `${p}.mlp.down_proj.weight`, dtype: 'BF16', shape: [H, I] },
  ];
}

const bytesOf = (e: TensorEntry) => e.shape.reduce((a, b) => a * b, 1) * 2;

/** Finite random bf16 values (exponent kept near 2^-6) without a float per element in JS. */
function randomBf16(bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  randomFillSync(b);
  const u = new Uint16Array(b.buffer, b.byteOffset, bytes / 2);
  for (let i = 0; i < u.length; i++) u[i] = (u[i]! & 0x807f) | 0x3c00;
  return b;
}

async function makeBase(dir: string): Promise<{ entries: TensorEntry[]; layers: number }> {
  const embed = V * H * 2;
  const perLayer = layerTensors(0).reduce((s, e) => s + bytesOf(e), 0);
  const layers = Math.max(1, Math.round((GB * 1000 ** 3 - 2 * embed) / perLayer));
  const entries: TensorEntry[] = [{ name: 'model.embed_tokens.weight', dtype: 'BF16', shape: [V, H] }];
  for (let l = 0; l < layers; l++) entries.push(...layerTensors(l));
  entries.push({ name: 'model.norm.weight', dtype: 'BF16', shape: [H] }, { name: 'lm_head.weight', dtype: 'BF16', shape: [V, H] });
  fs.mkdirSync(dir, { recursive: true });
  const w = await SafetensorsWriter.create(path.join(dir, 'model.safetensors'), entries, { format: 'pt' });
  for (const e of entries) for (let left = bytesOf(e); left > 0; left -= 4 << 20) await w.write(randomBf16(Math.min(left, 4 << 20)));
  await w.finish();
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'qwen3', hidden_size: H, intermediate_size: I, vocab_size: V, num_hidden_layers: layers, tie_word_embeddings: false }));
  return { entries, layers };
}

async function makeCheckpoint(dir: string, layers: number): Promise<void> {
  const lora: { name: string; dtype: string; shape: number[]; data: Buffer }[] = [];
  const f32 = (n: number) => fromFloat32(Float32Array.from({ length: n }, () => (Math.random() - 0.5) / 64), 'F32');
  const pair = (module: string, inDim: number, outDim: number) =>
    lora.push(
      { name: `base_model.model.${module}.lora_A.weight`, dtype: 'F32', shape: [RANK, inDim], data: Buffer.from(f32(RANK * inDim)) },
      { name: `base_model.model.${module}.lora_B.weight`, dtype: 'F32', shape: [outDim, RANK], data: Buffer.from(f32(outDim * RANK)) },
    );
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}`;
    pair(`${p}.self_attn.q_proj`, H, Q);
    pair(`${p}.self_attn.k_proj`, H, KV);
    pair(`${p}.self_attn.v_proj`, H, KV);
    pair(`${p}.self_attn.o_proj`, Q, H);
    pair(`${p}.mlp.gate_proj`, H, I);
    pair(`${p}.mlp.up_proj`, H, I);
    pair(`${p}.mlp.down_proj`, I, H);
  }
  pair('model.unembed_tokens', H, V);
  fs.mkdirSync(dir, { recursive: true });
  await writeSafetensors(path.join(dir, 'adapter_model.safetensors'), lora);
  fs.writeFileSync(path.join(dir, 'adapter_config.json'), JSON.stringify({ base_model_name_or_path: 'Qwen/Qwen3-8B', r: RANK, lora_alpha: 2 * RANK }));
  fs.writeFileSync(path.join(dir, 'checkpoint_complete'), '');
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'export-bench-'));
  try {
    const t0 = performance.now();
    const { entries, layers } = await makeBase(path.join(tmp, 'base'));
    await makeCheckpoint(path.join(tmp, 'ckpt'), layers);
    const total = entries.reduce((s, e) => s + bytesOf(e), 0);
    const largest = Math.max(...entries.map(bytesOf));
    console.log(`base: ${layers} layers, ${(total / 1e9).toFixed(2)} GB bf16, largest tensor ${(largest / 1e6).toFixed(1)} MB; generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const adapter = await openTinkerAdapter(path.join(tmp, 'ckpt'));
    const t1 = performance.now();
    const cpu0 = process.cpuUsage();
    try {
      await mergeIntoHfModel(path.join(tmp, 'base'), adapter, path.join(tmp, 'merged'), { sliceBytes: SLICE });
    } finally {
      clearInterval(timer);
      await adapter.reader.close();
    }
    const seconds = (performance.now() - t1) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    peak = Math.max(peak, process.memoryUsage().rss);
    const maxRss = process.resourceUsage().maxRSS * 1024;
    console.log(`merge: ${seconds.toFixed(1)} s, ${(total / 1e6 / seconds).toFixed(0)} MB/s (rank ${RANK} on all ${layers * 7 + 1} projections, slices of ${SLICE >> 20} MB); CPU ${cpuSeconds.toFixed(1)} s, ${(total / 1e6 / cpuSeconds).toFixed(0)} MB per CPU-second; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`);
    console.log(`memory: RSS ${(before / 1e6).toFixed(0)} MB before the merge, sampled peak ${(peak / 1e6).toFixed(0)} MB (+${((peak - before) / 1e6).toFixed(0)} MB), process max RSS ${(maxRss / 1e6).toFixed(0)} MB; bound 2 × largest + 64 MB = ${((2 * largest) / 1e6 + 64).toFixed(0)} MB`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

void main();
