// Hints on a run spec (and on a sweep's learning rates), from tinker-cookbook's hyperparameter
// utilities, shown as information in the editor and never blocking a run:
//  - a learning rate more than 4× away (either way) from the model's recommended LoRA learning rate,
//    the cookbook's `get_lr` (getLr in render/modelInfo.ts: its family formula, Llama and Qwen); no hint
//    for any other model, the engine's arith-gpt included (its 3e-3 default is this project's pick, not a
//    calibrated recommendation);
//  - SFT with LoRA: trainable LoRA parameters below the completion tokens of the dataset ("LoRA without
//    regret": the adapter's capacity should cover what it is taught), where the model's dimensions are
//    known (MODEL_DIMS). The parameters are counted as the cookbook's get_lora_param_count does (rank ×
//    the sum of in + out dimensions of every 2-D weight but the embeddings); the tokens are counted with
//    the renderer for the engine's byte-level models, and estimated as characters ÷ 4 for the others
//    (their tokenizer is a download; the message says it is an estimate); the count is cached per
//    file version and read in ~10 ms slices, as an editor asks again at every keystroke.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { timeSlicer } from '../data/jsonl';
import { baseModelName, ENGINE_MODELS, getLr } from '../render/modelInfo';

/** A hint at a field of the spec (or of the sweep file). */
export interface SpecHint {
  path: PropertyKey[];
  message: string;
}

/** A learning rate this many times above or below the recommended one gets a hint. */
export const LR_HINT_FACTOR = 4;

/** The recommended LoRA learning rate of a model whose family the cookbook's get_lr knows, else undefined. */
export function recommendedLr(model: string): number | undefined {
  const name = baseModelName(model);
  if ((ENGINE_MODELS as readonly string[]).includes(name)) return undefined;
  const lower = name.toLowerCase();
  if (!lower.includes('llama') && !lower.includes('qwen')) return undefined;
  try {
    return getLr(name, true);
  } catch {
    return undefined; // a family member whose hidden size is not known
  }
}

const fmt = (v: number) => String(Number(v.toPrecision(2)));

/** The hint for a learning rate, or undefined when it is within LR_HINT_FACTOR× of the recommended one (or none is known). */
export function learningRateHint(model: string, lr: number): string | undefined {
  const rec = recommendedLr(model);
  if (rec === undefined || !(lr > 0)) return undefined;
  const ratio = lr / rec;
  if (ratio <= LR_HINT_FACTOR && ratio >= 1 / LR_HINT_FACTOR) return undefined;
  const how = ratio > 1 ? `${Number(ratio.toPrecision(2))}× above` : `${Number((1 / ratio).toPrecision(2))}× below`;
  return `learning_rate ${fmt(lr)} is ${how} the recommended ${fmt(rec)} for ${baseModelName(model)} with LoRA (tinker-cookbook get_lr); more than ${LR_HINT_FACTOR}× away, runs tend to diverge (too high) or barely move (too low)`;
}

/** The dimensions of a dense transformer, for counting LoRA parameters. */
export interface ModelDims {
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
  /** the unembedding shares the embedding's weight (no separate lm_head to adapt) */
  tied: boolean;
  /** the engine's GPT: q, k, v, o are hidden × hidden and the MLP has two linears (w1, w2) */
  engine?: boolean;
}

const llama = (hidden: number, layers: number, heads: number, headDim: number, intermediate: number, tied: boolean): ModelDims => ({ hidden, layers, heads, kvHeads: 8, headDim, intermediate, vocab: 128256, tied });
const qwen3 = (hidden: number, layers: number, heads: number, intermediate: number, tied: boolean): ModelDims => ({ hidden, layers, heads, kvHeads: 8, headDim: 128, intermediate, vocab: 151936, tied });
const ENGINE_GPT: ModelDims = { hidden: 128, layers: 3, heads: 4, kvHeads: 4, headDim: 32, intermediate: 512, vocab: 259, tied: false, engine: true };

/** Dense models whose dimensions are known (their published configs); mixture-of-experts models are left out. */
export const MODEL_DIMS: Readonly<Record<string, ModelDims>> = {
  'meta-llama/Llama-3.2-1B': llama(2048, 16, 32, 64, 8192, true),
  'meta-llama/Llama-3.2-3B': llama(3072, 28, 24, 128, 8192, true),
  'meta-llama/Llama-3.1-8B': llama(4096, 32, 32, 128, 14336, false),
  'meta-llama/Llama-3.1-8B-Instruct': llama(4096, 32, 32, 128, 14336, false),
  'meta-llama/Llama-3.1-70B': llama(8192, 80, 64, 128, 28672, false),
  'meta-llama/Llama-3.3-70B-Instruct': llama(8192, 80, 64, 128, 28672, false),
  'Qwen/Qwen3-4B-Instruct-2507': qwen3(2560, 36, 32, 9728, true),
  'Qwen/Qwen3-8B': qwen3(4096, 36, 32, 12288, false),
  'Qwen/Qwen3-8B-Base': qwen3(4096, 36, 32, 12288, false),
  'Qwen/Qwen3-32B': qwen3(5120, 64, 64, 25600, false),
  'tinker-studio/arith-gpt': ENGINE_GPT,
  'tinker-studio/random-gpt': ENGINE_GPT,
};

/** Trainable LoRA parameters at `rank` (attention, MLP and unembedding adapted), or undefined for a model of unknown dimensions. */
export function loraParamCount(model: string, rank: number): number | undefined {
  const d = MODEL_DIMS[baseModelName(model)];
  if (!d) return undefined;
  const h = d.hidden;
  const q = d.heads * d.headDim;
  const kv = d.kvHeads * d.headDim;
  const attn = d.engine ? 4 * (h + h) : h + q + 2 * (h + kv) + (q + h);
  const mlp = d.engine ? 2 * (h + d.intermediate) : 3 * (h + d.intermediate);
  const unembed = d.tied ? 0 : h + d.vocab;
  return rank * (d.layers * (attn + mlp) + unembed);
}

export interface CompletionTokens {
  tokens: number;
  /** counted with the model's renderer (true), or estimated as characters ÷ 4 (false) */
  exact: boolean;
  chats: number;
}

/** Above this size a dataset is not read for a hint. */
const MAX_DATASET_BYTES = 64 * 1024 * 1024;

/**
 * The tokens an SFT run trains on (the assistant turns `train_on_what` names) in a JSONL dataset:
 * exact for the engine's byte-level models (their renderer), estimated for the others; undefined when
 * the file cannot be read or is too large.
 */
export async function completionTokens(o: {
  file: string;
  model: string;
  trainOnWhat: 'last_assistant_message' | 'all_assistant_messages';
  fields: { messagesField: string; promptField: string; completionField: string };
}): Promise<CompletionTokens | undefined> {
  const st = await fs.stat(o.file).catch(() => undefined);
  if (!st?.isFile() || st.size > MAX_DATASET_BYTES) return undefined;
  // an editor asks again at every keystroke: the count is kept while the file is unchanged
  const key = JSON.stringify([o.file, st.size, st.mtimeMs, byteLevel(o.model), o.trainOnWhat, o.fields]);
  const cached = tokenCache.get(key);
  if (cached) return cached;
  const counted = countCompletionTokens(o);
  tokenCache.set(key, counted);
  if (tokenCache.size > 32) tokenCache.delete(tokenCache.keys().next().value!);
  return counted;
}

const tokenCache = new Map<string, Promise<CompletionTokens | undefined>>();

const byteLevel = (model: string) => (ENGINE_MODELS as readonly string[]).includes(baseModelName(model));

async function countCompletionTokens(o: Parameters<typeof completionTokens>[0]): Promise<CompletionTokens | undefined> {
  const text = await fs.readFile(o.file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const [{ recordToChat }, exact] = await Promise.all([import('../sft/data'), byteRenderer(o.model)]);
  let tokens = 0;
  let chars = 0;
  let chats = 0;
  const lines = text.split('\n');
  const slice = timeSlicer(); // an editor's extension host runs this: in slices of ~10 ms
  for (let i = 0; i < lines.length; i++) {
    if ((i & 255) === 255) await slice();
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    const r = recordToChat(rec, o.fields, '');
    if (!r.ok) continue;
    chats++;
    if (exact) {
      tokens += exact.buildSupervisedExample(r.chat.messages, o.trainOnWhat).weights.reduce((a, w) => a + (w > 0 ? 1 : 0), 0);
    } else {
      const assistant = r.chat.messages.filter((m) => m.role === 'assistant');
      const trained = o.trainOnWhat === 'last_assistant_message' ? assistant.slice(-1) : assistant;
      chars += trained.reduce((a, m) => a + m.content.length, 0);
    }
  }
  return { tokens: exact ? tokens : Math.round(chars / 4), exact: Boolean(exact), chats };
}

async function byteRenderer(model: string) {
  if (!byteLevel(model)) return undefined;
  const [{ ByteTokenizer }, { getRenderer }] = await Promise.all([import('../render/byteTokenizer'), import('../render/registry')]);
  return getRenderer('chatml', new ByteTokenizer());
}

const human = (n: number) => (n >= 1e9 ? `${Number((n / 1e9).toPrecision(3))} B` : n >= 1e6 ? `${Number((n / 1e6).toPrecision(3))} M` : n >= 1e4 ? `${Number((n / 1e3).toPrecision(3))} k` : String(n));

/** The LoRA capacity hint, or undefined when the parameters cover the tokens (or the model's dimensions are unknown). */
export function loraCapacityHint(model: string, rank: number, data: CompletionTokens, datasetLabel: string): string | undefined {
  const params = loraParamCount(model, rank);
  if (params === undefined || params >= data.tokens) return undefined;
  const perRank = params / rank;
  let need = rank;
  while (need * perRank < data.tokens && need < 1 << 16) need *= 2;
  const counted = data.exact ? 'counted with the renderer' : 'estimated as characters ÷ 4';
  return `lora_rank ${rank} gives ${human(params)} trainable LoRA parameters for ${baseModelName(model)}, fewer than the ${data.exact ? '' : '≈ '}${human(data.tokens)} completion tokens of ${datasetLabel} (${counted}): a LoRA's capacity should cover the tokens it learns ("LoRA without regret"); lora_rank ${need} would`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, d: string) => (typeof v === 'string' && v !== '' ? v : d);

/**
 * The hints of a run spec (its value as written, valid or not): the learning rate (GRPO and SFT; not DPO), and
 * for SFT the LoRA capacity against the dataset's completion tokens (its JSONL file, relative to the spec).
 */
export async function specHints(kind: string, spec: unknown, specFile: string): Promise<SpecHint[]> {
  if (!isRecord(spec) || typeof spec.model !== 'string') return [];
  const out: SpecHint[] = [];
  // the get_lr formula is calibrated for SFT (and GRPO's cookbook recipes); DPO's learning rates are far lower (1e-5)
  if (typeof spec.learning_rate === 'number' && kind !== 'dpo') {
    const m = learningRateHint(spec.model, spec.learning_rate);
    if (m) out.push({ path: ['learning_rate'], message: m });
  }
  if (kind === 'sft' && isRecord(spec.dataset) && typeof spec.dataset.path === 'string' && loraParamCount(spec.model, 1) !== undefined) {
    const rank = typeof spec.lora_rank === 'number' && spec.lora_rank > 0 ? spec.lora_rank : 32;
    const d = spec.dataset;
    const file = path.resolve(path.dirname(path.resolve(specFile)), d.path as string);
    const data = await completionTokens({
      file,
      model: spec.model,
      trainOnWhat: spec.train_on_what === 'all_assistant_messages' ? 'all_assistant_messages' : 'last_assistant_message',
      fields: { messagesField: str(d.messages_field, 'messages'), promptField: str(d.prompt_field, 'prompt'), completionField: str(d.completion_field, 'completion') },
    });
    const m = data && loraCapacityHint(spec.model, rank, data, path.basename(file));
    if (m) out.push({ path: spec.lora_rank !== undefined ? ['lora_rank'] : ['model'], message: m });
  }
  return out;
}
