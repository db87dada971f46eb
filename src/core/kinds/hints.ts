// Hints on a run spec (and on a sweep's learning rates), from tinker-cookbook's hyperparameter
// utilities, shown as information in the editor and never blocking a run:
//  - a learning rate more than 4× away (either way) from the model's recommended LoRA learning rate,
//    the cookbook's `get_lr` (getLr in render/modelInfo.ts: its family formula, Llama and Qwen); for any
//    other model a hint that get_lr has no recommendation for it; none for the engine's arith-gpt (its
//    3e-3 default is this project's pick, not a calibrated recommendation);
//  - SFT with LoRA: trainable LoRA parameters below the completion tokens of the dataset ("LoRA without
//    regret": the adapter's capacity should cover what it is taught). The parameters are the cookbook's
//    get_lora_param_count (its table measured by Tinker, LORA_PARAMS_PER_RANK) for the Tinker lineup and
//    the dense formula for the engine's models (MODEL_DIMS); "unknown" said for any other; the tokens are counted with
//    the renderer for the engine's byte-level models, and estimated as characters ÷ 4 for the others
//    (their tokenizer is a download; the message says it is an estimate); the count is cached per
//    file version and read in ~10 ms slices, as an editor asks again at every keystroke.
// Here, above the kinds, as it reads an SFT dataset with sft/data's reader.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { timeSlicer } from '../data/jsonl';
import { baseModelName, ENGINE_MODELS, getLr } from '../render/modelInfo';
import { diagnosticAtPath, type SpecDiagnostic } from '../spec/diagnostics';
import { parsePlacedText } from '../spec/placedText';
import { isRunKind, runKind } from './registry';

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

/**
 * The hint for a learning rate, or undefined when it is within LR_HINT_FACTOR× of the recommended one.
 * For a model outside the families get_lr covers (Llama, Qwen) the hint says there is no
 * recommendation to compare with; the engine's models get none.
 */
export function learningRateHint(model: string, lr: number): string | undefined {
  if (!(lr > 0)) return undefined;
  const rec = recommendedLr(model);
  if (rec === undefined) {
    const name = baseModelName(model);
    if ((ENGINE_MODELS as readonly string[]).includes(name)) return undefined;
    const lower = name.toLowerCase();
    const family = lower.includes('llama') || lower.includes('qwen');
    return family
      ? `no recommended learning rate for ${name}: tinker-cookbook's get_lr does not know its hidden size, so learning_rate ${fmt(lr)} is not checked`
      : `no recommended learning rate for ${name}: tinker-cookbook's get_lr covers only Llama and Qwen models, so learning_rate ${fmt(lr)} is not checked (a short sweep finds one)`;
  }
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

const ENGINE_GPT: ModelDims = { hidden: 128, layers: 3, heads: 4, kvHeads: 4, headDim: 32, intermediate: 512, vocab: 259, tied: false, engine: true };

/** The engine's models: dimensions known, counted as below. */
export const MODEL_DIMS: Readonly<Record<string, ModelDims>> = {
  'tinker-studio/arith-gpt': ENGINE_GPT,
  'tinker-studio/arith-chat': ENGINE_GPT,
  'tinker-studio/random-gpt': ENGINE_GPT,
};

/**
 * LoRA parameters per unit of rank on Tinker, by adapted part (mlp, attn, unembed), for every model of
 * the lineup: the cookbook's `_LORA_PARAMS_PER_RANK_BY_COMPONENT` (tinker_cookbook/hyperparam_utils.py,
 * v0.5.5), measured by Tinker. For mixture-of-experts layers Tinker shares the LoRA factor on the
 * hidden side across experts (the cookbook's note), so these are not the dense formula's numbers; the
 * unembedding is adapted even where it is tied to the embedding.
 */
export const LORA_PARAMS_PER_RANK: Readonly<Record<string, { mlp: number; attn: number; unembed: number }>> = {
  'Qwen/Qwen3-235B-A22B-Instruct-2507': { mlp: 56_598_528, attn: 3_176_448, unembed: 156_032 },
  'Qwen/Qwen3-30B-A3B': { mlp: 14_450_688, attn: 835_584, unembed: 153_984 },
  'Qwen/Qwen3-30B-A3B-Base': { mlp: 14_450_688, attn: 835_584, unembed: 153_984 },
  'Qwen/Qwen3-30B-A3B-Instruct-2507': { mlp: 14_450_688, attn: 835_584, unembed: 153_984 },
  'Qwen/Qwen3-32B': { mlp: 5_898_240, attn: 2_490_368, unembed: 157_056 },
  'Qwen/Qwen3-4B-Instruct-2507': { mlp: 1_327_104, attn: 737_280, unembed: 154_496 },
  'Qwen/Qwen3-8B': { mlp: 1_769_472, attn: 958_464, unembed: 156_032 },
  'Qwen/Qwen3-8B-Base': { mlp: 1_769_472, attn: 958_464, unembed: 156_032 },
  'Qwen/Qwen3-VL-235B-A22B-Instruct': { mlp: 56_598_528, attn: 3_176_448, unembed: 156_032 },
  'Qwen/Qwen3-VL-30B-A3B-Instruct': { mlp: 14_450_688, attn: 835_584, unembed: 153_984 },
  'Qwen/Qwen3.5-27B': { mlp: 4_325_376, attn: 2_965_504, unembed: 253_440 },
  'Qwen/Qwen3.5-35B-A3B': { mlp: 16_281_600, attn: 1_013_760, unembed: 250_368 },
  'Qwen/Qwen3.5-35B-A3B-Base': { mlp: 16_281_600, attn: 1_013_760, unembed: 250_368 },
  'Qwen/Qwen3.5-397B-A17B': { mlp: 96_030_720, attn: 2_841_600, unembed: 252_416 },
  'Qwen/Qwen3.5-4B': { mlp: 1_130_496, attn: 897_024, unembed: 250_880 },
  'Qwen/Qwen3.5-9B': { mlp: 1_572_864, attn: 1_130_496, unembed: 252_416 },
  'Qwen/Qwen3.5-9B-Base': { mlp: 1_572_864, attn: 1_130_496, unembed: 252_416 },
  'Qwen/Qwen3.6-27B': { mlp: 4_325_376, attn: 2_965_504, unembed: 253_440 },
  'Qwen/Qwen3.6-35B-A3B': { mlp: 16_281_600, attn: 1_013_760, unembed: 250_368 },
  'Qwen/Qwen3.8-27B': { mlp: 4_325_376, attn: 2_965_504, unembed: 253_440 },
  'deepseek-ai/DeepSeek-V3.1': { mlp: 94_307_328, attn: 2_440_000, unembed: 136_448 },
  'deepseek-ai/DeepSeek-V3.1-Base': { mlp: 94_307_328, attn: 2_440_000, unembed: 136_448 },
  'meta-llama/Llama-3.1-70B': { mlp: 8_847_360, attn: 4_096_000, unembed: 136_448 },
  'meta-llama/Llama-3.1-8B': { mlp: 1_769_472, attn: 851_968, unembed: 132_352 },
  'meta-llama/Llama-3.1-8B-Instruct': { mlp: 1_769_472, attn: 851_968, unembed: 132_352 },
  'meta-llama/Llama-3.2-1B': { mlp: 491_520, attn: 212_992, unembed: 130_304 },
  'meta-llama/Llama-3.2-3B': { mlp: 946_176, attn: 573_440, unembed: 131_328 },
  'meta-llama/Llama-3.3-70B-Instruct': { mlp: 8_847_360, attn: 4_096_000, unembed: 136_448 },
  'moonshotai/Kimi-K2-Thinking': { mlp: 144_583_680, attn: 1_940_288, unembed: 171_008 },
  'moonshotai/Kimi-K2.5': { mlp: 144_583_680, attn: 1_940_288, unembed: 171_008 },
  'moonshotai/Kimi-K2.6': { mlp: 144_583_680, attn: 1_940_288, unembed: 171_008 },
  'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16': { mlp: 11_346_176, attn: 584_832, unembed: 133_760 },
  'nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16': { mlp: 11_346_176, attn: 584_832, unembed: 133_760 },
  'nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16': { mlp: 111_349_760, attn: 1_675_264, unembed: 135_168 },
  'nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16': { mlp: 254_529_536, attn: 4_134_912, unembed: 139_264 },
  'openai/gpt-oss-120b': { mlp: 40_124_160, attn: 746_496, unembed: 203_968 },
  'openai/gpt-oss-20b': { mlp: 6_842_880, attn: 497_664, unembed: 203_968 },
  'thinkingmachines/Inkling': { mlp: 154_705_920, attn: 3_424_256, unembed: 207_168 },
};

/**
 * Trainable LoRA parameters at `rank` (MLP, attention and unembedding adapted, Tinker's defaults):
 * the cookbook's measured table for the Tinker lineup, the dense formula for the engine's models,
 * undefined for a model neither covers.
 */
export function loraParamCount(model: string, rank: number): number | undefined {
  const name = baseModelName(model);
  const measured = LORA_PARAMS_PER_RANK[name];
  if (measured) return rank * (measured.mlp + measured.attn + measured.unembed);
  const d = MODEL_DIMS[name];
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
  const [{ recordToChat }, exact] = await Promise.all([import('../training/chats'), byteRenderer(o.model)]);
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
 * The hints of a run spec (its value as written, valid or not) that its kind asks for (its descriptor's
 * specHints): the learning rate, and the LoRA capacity against the dataset's completion tokens (its JSONL
 * file, relative to the spec).
 */
export async function specHints(kind: string, spec: unknown, specFile: string): Promise<SpecHint[]> {
  if (!isRecord(spec) || typeof spec.model !== 'string') return [];
  const hints = isRunKind(kind) ? ((await runKind(kind)).specHints ?? {}) : {};
  const out: SpecHint[] = [];
  if (typeof spec.learning_rate === 'number' && hints.learningRate) {
    const m = learningRateHint(spec.model, spec.learning_rate);
    if (m) out.push({ path: ['learning_rate'], message: m });
  }
  if (hints.loraCapacity && isRecord(spec.dataset) && typeof spec.dataset.path === 'string' && loraParamCount(spec.model, 1) === undefined && !spec.model.startsWith('tinker-studio/')) {
    out.push({ path: ['model'], message: `the LoRA parameter count of ${baseModelName(spec.model)} is unknown (not in tinker-cookbook's table of Tinker's models), so the LoRA capacity is not checked against the dataset` });
  }
  if (hints.loraCapacity && isRecord(spec.dataset) && typeof spec.dataset.path === 'string' && loraParamCount(spec.model, 1) !== undefined) {
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

/** The hints of a run spec's text (specHints above), at severity 'info', each at the value it is about; [] for a text that does not parse. */
export async function specHintDiagnostics(kind: string, text: string, specFile: string): Promise<SpecDiagnostic[]> {
  const parsed = parsePlacedText(text, 'json');
  if (!parsed.ok) return [];
  return (await specHints(kind, parsed.value, specFile)).map((h) => diagnosticAtPath(text, parsed, h.path, h.message, { severity: 'info', value: true }));
}
