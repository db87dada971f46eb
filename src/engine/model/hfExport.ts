// The engine's models outside it: a pretrained engine model, or a checkpoint's LoRA merged into one,
// written as a folder Hugging Face transformers loads (config.json, model.safetensors, a tokenizer.json
// for the byte tokenizer, tokenizer_config.json with the chat template, generation_config.json).
// Learned positions (arith-gpt) map onto GPT2LMHeadModel exactly; rotary positions (arith-chat) onto
// GPTNeoXForCausalLM with a sequential residual (docs/export.md says why and how).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod';
import { writeSafetensors } from '../../core/export/safetensors';
import { errorMessage } from '../../core/errors';
import type { GptConfig, LoraSpec, Params } from './gptWeights';
import { baseShapes, mergeLora, numel } from './gptWeights';
import { LORA_ALPHA, STATE_MAGIC, WEIGHTS_MAGIC } from './backend';
import { BYTE_TOKENIZER, PRETRAINED_MODELS, findWeightsFile } from './models';
import { ROPE_BASE } from './rope';
import { readTensorFile } from './tensorFile';

/** The engine's layer norm epsilon (compute/tasks.ts layerNormTask). */
export const ENGINE_LN_EPS = 1e-5;

const GptConfigSchema = z.object({
  vocabSize: z.number().int().positive(),
  ctx: z.number().int().positive(),
  d: z.number().int().positive(),
  nLayer: z.number().int().positive(),
  nHead: z.number().int().positive(),
  ffn: z.number().int().positive(),
  rope: z.boolean().optional(),
});

const StateMetaSchema = z.looseObject({
  baseModel: z.string(),
  lora: z.looseObject({ rank: z.number().int().positive(), trainAttn: z.boolean(), trainMlp: z.boolean(), trainUnembed: z.boolean() }),
});

export interface HfTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

export interface HfModel {
  architecture: 'GPT2LMHeadModel' | 'GPTNeoXForCausalLM';
  config: Record<string, unknown>;
  tensors: HfTensor[];
  /** the unembedding is the token embedding (false after merging a LoRA on the unembedding) */
  tied: boolean;
}

const EOT = BYTE_TOKENIZER.specialTokens['<|endoftext|>']!;
const IM_END = BYTE_TOKENIZER.specialTokens['<|im_end|>']!;

/** din×dout (the engine's layout, as GPT-2's Conv1D) → dout×din (torch.nn.Linear's) */
function transposed(w: Float32Array, din: number, dout: number): Float32Array {
  const out = new Float32Array(din * dout);
  for (let i = 0; i < din; i++) for (let o = 0; o < dout; o++) out[o * din + i] = w[i * dout + o]!;
  return out;
}

function get(p: Params, name: string): Float32Array {
  const t = p.get(name);
  if (!t) throw new Error(`the engine weights lack tensor ${name}`);
  return Float32Array.from(t);
}

const zeros = (n: number) => new Float32Array(n);

/** Maps merged engine weights (mergeLora's output: `unembed` present when untied) to a transformers model. */
export function toHfModel(c: GptConfig, merged: Params): HfModel {
  const unembed = merged.get('unembed');
  const tied = !unembed;
  const common = { vocab_size: c.vocabSize, bos_token_id: EOT, eos_token_id: EOT, tie_word_embeddings: tied, dtype: 'float32', initializer_range: 0.02, use_cache: true };
  const t: HfTensor[] = [];
  const add = (name: string, shape: number[], data: Float32Array) => {
    if (data.length !== numel(shape)) throw new Error(`${name}: ${data.length} values for shape [${shape.join(', ')}]`);
    t.push({ name, shape, data });
  };
  const { d, ffn, vocabSize: V } = c;
  if (!c.rope) {
    // GPT-2: Conv1D weights are in×out, as the engine stores them; the engine's linears have no biases.
    add('transformer.wte.weight', [V, d], get(merged, 'tok'));
    add('transformer.wpe.weight', [c.ctx, d], get(merged, 'pos'));
    for (let l = 0; l < c.nLayer; l++) {
      const p = `h${l}.`;
      const h = `transformer.h.${l}.`;
      const [wq, wk, wv] = [get(merged, p + 'wq'), get(merged, p + 'wk'), get(merged, p + 'wv')];
      const qkv = new Float32Array(d * 3 * d);
      for (let i = 0; i < d; i++) {
        qkv.set(wq.subarray(i * d, (i + 1) * d), i * 3 * d);
        qkv.set(wk.subarray(i * d, (i + 1) * d), i * 3 * d + d);
        qkv.set(wv.subarray(i * d, (i + 1) * d), i * 3 * d + 2 * d);
      }
      add(h + 'ln_1.weight', [d], get(merged, p + 'ln1.g'));
      add(h + 'ln_1.bias', [d], get(merged, p + 'ln1.b'));
      add(h + 'attn.c_attn.weight', [d, 3 * d], qkv);
      add(h + 'attn.c_attn.bias', [3 * d], zeros(3 * d));
      add(h + 'attn.c_proj.weight', [d, d], get(merged, p + 'wo'));
      add(h + 'attn.c_proj.bias', [d], zeros(d));
      add(h + 'ln_2.weight', [d], get(merged, p + 'ln2.g'));
      add(h + 'ln_2.bias', [d], get(merged, p + 'ln2.b'));
      add(h + 'mlp.c_fc.weight', [d, ffn], get(merged, p + 'w1'));
      add(h + 'mlp.c_fc.bias', [ffn], zeros(ffn));
      add(h + 'mlp.c_proj.weight', [ffn, d], get(merged, p + 'w2'));
      add(h + 'mlp.c_proj.bias', [d], zeros(d));
    }
    add('transformer.ln_f.weight', [d], get(merged, 'lnf.g'));
    add('transformer.ln_f.bias', [d], get(merged, 'lnf.b'));
    if (unembed) add('lm_head.weight', [V, d], Float32Array.from(unembed));
    const config = {
      architectures: ['GPT2LMHeadModel'],
      model_type: 'gpt2',
      ...common,
      n_positions: c.ctx,
      n_ctx: c.ctx,
      n_embd: d,
      n_layer: c.nLayer,
      n_head: c.nHead,
      n_inner: ffn,
      activation_function: 'gelu_new', // GELU's tanh form, as compute/tasks.ts geluTask
      layer_norm_epsilon: ENGINE_LN_EPS,
      resid_pdrop: 0,
      embd_pdrop: 0,
      attn_pdrop: 0,
      scale_attn_weights: true,
    };
    return { architecture: 'GPT2LMHeadModel', config, tensors: t, tied };
  }
  // GPT-NeoX: nn.Linear weights (out×in); the fused query_key_value holds, per head, its q, k and v rows.
  // The engine rotates pairs (2i, 2i+1), NeoX pairs (i, i + hd/2): the same permutation of q's and k's
  // outputs within each head turns one into the other and leaves every attention score unchanged.
  const hd = d / c.nHead;
  const half = hd / 2;
  const fromHalves = (j: number) => (j < half ? 2 * j : 2 * (j - half) + 1);
  add('gpt_neox.embed_in.weight', [V, d], get(merged, 'tok'));
  for (let l = 0; l < c.nLayer; l++) {
    const p = `h${l}.`;
    const h = `gpt_neox.layers.${l}.`;
    const parts = [get(merged, p + 'wq'), get(merged, p + 'wk'), get(merged, p + 'wv')];
    const qkv = new Float32Array(3 * d * d);
    for (let head = 0; head < c.nHead; head++) {
      for (let part = 0; part < 3; part++) {
        for (let j = 0; j < hd; j++) {
          const col = head * hd + (part < 2 ? fromHalves(j) : j);
          const row = head * 3 * hd + part * hd + j;
          const w = parts[part]!;
          for (let i = 0; i < d; i++) qkv[row * d + i] = w[i * d + col]!;
        }
      }
    }
    add(h + 'input_layernorm.weight', [d], get(merged, p + 'ln1.g'));
    add(h + 'input_layernorm.bias', [d], get(merged, p + 'ln1.b'));
    add(h + 'attention.query_key_value.weight', [3 * d, d], qkv);
    add(h + 'attention.query_key_value.bias', [3 * d], zeros(3 * d));
    add(h + 'attention.dense.weight', [d, d], transposed(get(merged, p + 'wo'), d, d));
    add(h + 'attention.dense.bias', [d], zeros(d));
    add(h + 'post_attention_layernorm.weight', [d], get(merged, p + 'ln2.g'));
    add(h + 'post_attention_layernorm.bias', [d], get(merged, p + 'ln2.b'));
    add(h + 'mlp.dense_h_to_4h.weight', [ffn, d], transposed(get(merged, p + 'w1'), d, ffn));
    add(h + 'mlp.dense_h_to_4h.bias', [ffn], zeros(ffn));
    add(h + 'mlp.dense_4h_to_h.weight', [d, ffn], transposed(get(merged, p + 'w2'), ffn, d));
    add(h + 'mlp.dense_4h_to_h.bias', [d], zeros(d));
  }
  add('gpt_neox.final_layer_norm.weight', [d], get(merged, 'lnf.g'));
  add('gpt_neox.final_layer_norm.bias', [d], get(merged, 'lnf.b'));
  // transformers 5 reads embed_out as lm_head; tied, the embedding is the unembedding
  if (unembed) add('embed_out.weight', [V, d], Float32Array.from(unembed));
  const config = {
    architectures: ['GPTNeoXForCausalLM'],
    model_type: 'gpt_neox',
    ...common,
    hidden_size: d,
    num_hidden_layers: c.nLayer,
    num_attention_heads: c.nHead,
    intermediate_size: ffn,
    hidden_act: 'gelu_new',
    max_position_embeddings: c.ctx,
    layer_norm_eps: ENGINE_LN_EPS,
    // the engine's residual is sequential: x + attn(ln1(x)), then + mlp(ln2(·))
    use_parallel_residual: false,
    attention_bias: true,
    attention_dropout: 0,
    hidden_dropout: 0,
    // rotary on every dimension of a head, base 10000 (rope.ts); the older names for transformers 4
    rope_parameters: { rope_type: 'default', rope_theta: ROPE_BASE, partial_rotary_factor: 1.0 },
    rotary_pct: 1.0,
    rotary_emb_base: ROPE_BASE,
  };
  return { architecture: 'GPTNeoXForCausalLM', config, tensors: t, tied };
}

/** GPT-2's byte ↔ printable character table: bytes that print stand for themselves, the rest from U+0100 on. */
function byteChars(): string[] {
  const prints = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const chars: string[] = [];
  let next = 0;
  for (let b = 0; b < 256; b++) chars.push(String.fromCodePoint(prints(b) ? b : 256 + next++));
  return chars;
}

/** tokenizer.json: byte-level, one id per byte (no merges), the special tokens after them. */
export function byteTokenizerJson(): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  byteChars().forEach((ch, b) => (vocab[ch] = b));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: Object.entries(BYTE_TOKENIZER.specialTokens).map(([content, id]) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: [] },
  };
}

/** The engine's chatml renderer (core/render/chatml.ts) as a Jinja template: the newline opens the next header. */
export const CHATML_TEMPLATE =
  "{%- for message in messages %}{%- if not loop.first %}{{ '\\n' }}{%- endif %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{%- if messages %}{{ '\\n' }}{%- endif %}{{ '<|im_start|>assistant\\n' }}{%- endif %}";

export function tokenizerConfigJson(ctx: number): Record<string, unknown> {
  const decoder = Object.fromEntries(
    Object.entries(BYTE_TOKENIZER.specialTokens).map(([content, id]) => [String(id), { content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }]),
  );
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    added_tokens_decoder: decoder,
    bos_token: '<|endoftext|>',
    eos_token: '<|im_end|>',
    pad_token: '<|endoftext|>',
    model_max_length: ctx,
    clean_up_tokenization_spaces: false,
    chat_template: CHATML_TEMPLATE,
  };
}

/** Greedy by default; a chat turn ends at <|im_end|>, a plain completion at <|endoftext|>. */
export function generationConfigJson(): Record<string, unknown> {
  return { bos_token_id: EOT, eos_token_id: [IM_END, EOT], pad_token_id: EOT, do_sample: false };
}

export interface EngineWeights {
  baseModel: string;
  config: GptConfig;
  merged: Params;
  /** the checkpoint file merged in, if any */
  checkpoint?: string;
  /** what was merged: the base weights and the checkpoint's adapters (the trainer's unmerged view) */
  base: Params;
  lora?: { params: Params; spec: LoraSpec };
}

function readPretrained(name: string, weightsDir?: string): { config: GptConfig; params: Params } {
  const entry = PRETRAINED_MODELS.find((m) => m.name === name || m.name.endsWith(`/${name}`));
  if (!entry) throw new Error(`${name} is not a pretrained engine model (one of ${PRETRAINED_MODELS.map((m) => m.name).join(', ')}); the random model has no weights file to export`);
  const file = findWeightsFile(weightsDir, entry.file);
  if (!file) throw new Error(`the weights file ${entry.file} of ${entry.name} was not found${weightsDir ? ` in ${weightsDir}` : ''}`);
  const w = readTensorFile(new Uint8Array(fs.readFileSync(file)), WEIGHTS_MAGIC, file);
  const cfg = GptConfigSchema.safeParse(w.meta.config);
  if (!cfg.success) throw new Error(`${file}: header field config.${cfg.error.issues[0]?.path.join('.')}: ${cfg.error.issues[0]?.message}`);
  const params: Params = new Map();
  for (const [tensor, shape] of baseShapes(cfg.data)) {
    const t = w.tensors.get(tensor);
    if (!t || t.length !== numel(shape)) throw new Error(`${file}: tensor ${tensor} is missing or has the wrong size`);
    params.set(tensor, t);
  }
  return { config: cfg.data, params };
}

/**
 * The weights to export from `source`: a pretrained model's name (tinker-studio/arith-chat or arith-chat),
 * an engine checkpoint's state file, or a downloaded checkpoint folder (its adapter_model.tsstate).
 */
export function readEngineWeights(source: string, weightsDir?: string): EngineWeights {
  let file: string | undefined;
  if (fs.existsSync(source)) file = fs.statSync(source).isDirectory() ? path.join(source, 'adapter_model.tsstate') : source;
  if (!file) {
    const { config, params } = readPretrained(source, weightsDir);
    const name = PRETRAINED_MODELS.find((m) => m.name === source || m.name.endsWith(`/${source}`))!.name;
    return { baseModel: name, config, merged: mergeLora(config, params, undefined, undefined), base: params };
  }
  if (!fs.existsSync(file)) throw new Error(`${source} has no adapter_model.tsstate: is it an engine checkpoint downloaded from the local engine?`);
  const state = readTensorFile(new Uint8Array(fs.readFileSync(file)), STATE_MAGIC, file);
  const meta = StateMetaSchema.safeParse(state.meta);
  if (!meta.success) throw new Error(`${file}: header field ${meta.error.issues[0]?.path.join('.')}: ${meta.error.issues[0]?.message}`);
  const { config, params } = readPretrained(meta.data.baseModel, weightsDir);
  const { rank, trainAttn, trainMlp, trainUnembed } = meta.data.lora;
  const spec: LoraSpec = { rank, alpha: LORA_ALPHA, attn: trainAttn, mlp: trainMlp, unembed: trainUnembed };
  const lora: Params = new Map();
  for (const [name, t] of state.tensors) if (name.startsWith('w:')) lora.set(name.slice(2), t);
  return { baseModel: meta.data.baseModel, config, merged: mergeLora(config, params, lora, spec), checkpoint: file, base: params, lora: { params: lora, spec } };
}

export interface EngineExportResult {
  dir: string;
  files: string[];
  architecture: HfModel['architecture'];
  baseModel: string;
  tied: boolean;
}

/** Writes the transformers folder into `outDir` (which must not exist) through a temporary sibling renamed when complete. */
export async function exportEngineModel(opts: { source: string; outDir: string; weightsDir?: string }): Promise<EngineExportResult> {
  const outDir = path.resolve(opts.outDir);
  if (fs.existsSync(outDir)) throw new Error(`${outDir} already exists: choose a new folder for the export`);
  const w = readEngineWeights(opts.source, opts.weightsDir);
  const model = toHfModel(w.config, w.merged);
  const tmp = `${outDir}.partial-${process.pid}`;
  await fs.promises.rm(tmp, { recursive: true, force: true });
  await fs.promises.mkdir(tmp, { recursive: true });
  try {
    const json = (name: string, v: unknown) => fs.promises.writeFile(path.join(tmp, name), `${JSON.stringify(v, null, 2)}\n`);
    await writeSafetensors(
      path.join(tmp, 'model.safetensors'),
      model.tensors.map((x) => ({ name: x.name, dtype: 'F32', shape: x.shape, data: Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength) })),
      { format: 'pt', source: `tinker-studio engine: ${w.baseModel}${w.checkpoint ? ` + ${path.basename(w.checkpoint)}` : ''}` },
    );
    await json('config.json', { ...model.config, transformers_version: '5.0.0' });
    await json('generation_config.json', generationConfigJson());
    await json('tokenizer.json', byteTokenizerJson());
    await json('tokenizer_config.json', tokenizerConfigJson(w.config.ctx));
    await json('special_tokens_map.json', { bos_token: '<|endoftext|>', eos_token: '<|im_end|>', pad_token: '<|endoftext|>' });
    await fs.promises.rename(tmp, outDir);
  } catch (err) {
    await fs.promises.rm(tmp, { recursive: true, force: true });
    throw new Error(`exporting ${opts.source} to ${outDir} failed: ${errorMessage(err)}`);
  }
  return { dir: outDir, files: fs.readdirSync(outDir).sort(), architecture: model.architecture, baseModel: w.baseModel, tied: model.tied };
}
