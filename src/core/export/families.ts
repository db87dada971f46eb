// How a Tinker adapter's tensor names map onto a Hugging Face model's, per model family of our model
// table (the cookbook's weights README gives the table; where the service's archive differs, it wins).
// A family is found from the base's config.json `model_type`, or from the base model's name when no
// base folder is at hand (adapter export).
import { ENGINE_MODELS } from '../render/modelInfo';

export type ExpertLayout = 'separate' | 'fused_concatenated' | 'fused_interleaved';

export interface ExportFamily {
  /** the Hugging Face `model_type`s it covers */
  modelTypes: readonly string[];
  label: string;
  /** (old, new) replacements in a name after the prefix is stripped, for the merged model's keys */
  mergeRemaps: readonly (readonly [string, string])[];
  /** the same for an adapter's module paths (serving names; Nemotron keeps `model.`) */
  adapterRemaps: readonly (readonly [string, string])[];
  /** Tinker's expert tensors w1, w2, w3 → the model's projection names */
  experts: { w1: string; w2: string; w3: string };
  /** fused experts on disk in transformers 5 are stored (E, in, out) instead of (E, out, in) */
  expertsTransposed?: boolean;
  interleavedGateUp?: boolean;
  /** a language model inside a multimodal one, when the base folder is not at hand to tell */
  languageModelPrefix?: string;
  /** Tinker trains these separately; the checkpoint holds them fused in this order */
  fusedProjections?: readonly { target: string; parts: readonly string[] }[];
  /** why an adapter cannot be exported (merge instead) */
  noAdapter?: string;
}

const STANDARD_EXPERTS = { w1: 'gate_proj', w2: 'down_proj', w3: 'up_proj' };

const FAMILIES: readonly ExportFamily[] = [
  { modelTypes: ['qwen3', 'qwen2', 'llama', 'mistral'], label: 'dense (Qwen3, Llama)', mergeRemaps: [], adapterRemaps: [], experts: STANDARD_EXPERTS },
  { modelTypes: ['qwen3_moe', 'qwen2_moe'], label: 'Qwen3 MoE', mergeRemaps: [], adapterRemaps: [], experts: STANDARD_EXPERTS },
  { modelTypes: ['qwen3_vl', 'qwen3_vl_moe'], label: 'Qwen3-VL', mergeRemaps: [], adapterRemaps: [], experts: STANDARD_EXPERTS, languageModelPrefix: 'model.language_model.' },
  {
    modelTypes: ['qwen3_5', 'qwen3_5_moe', 'qwen3_5_text', 'qwen3_5_moe_text'],
    label: 'Qwen3.5/3.6',
    mergeRemaps: [],
    adapterRemaps: [],
    experts: STANDARD_EXPERTS,
    languageModelPrefix: 'model.language_model.',
    fusedProjections: [{ target: 'in_proj_qkv', parts: ['in_proj_q', 'in_proj_k', 'in_proj_v'] }],
  },
  { modelTypes: ['gpt_oss'], label: 'GPT-OSS', mergeRemaps: [['.attn.', '.self_attn.']], adapterRemaps: [['.attn.', '.self_attn.']], experts: STANDARD_EXPERTS, expertsTransposed: true, interleavedGateUp: true },
  { modelTypes: ['nemotron_h'], label: 'Nemotron-3', mergeRemaps: [['model.', 'backbone.']], adapterRemaps: [], experts: { w1: 'up_proj', w2: 'down_proj', w3: 'gate_proj' } },
  { modelTypes: ['kimi_k25'], label: 'Kimi K2.5/K2.6', mergeRemaps: [], adapterRemaps: [], experts: STANDARD_EXPERTS, languageModelPrefix: 'language_model.model.' },
  {
    modelTypes: ['deepseek_v3', 'kimi_k2'],
    label: 'DeepSeek V3',
    mergeRemaps: [],
    adapterRemaps: [],
    experts: STANDARD_EXPERTS,
    noAdapter: 'DeepSeek V3 models have no LoRA adapter form that vLLM or SGLang serve; use "Merge into Hugging Face Model" instead',
  },
];

export class ExportRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportRefusal';
  }
}

export function familyOfModelType(modelType: string): ExportFamily {
  const f = FAMILIES.find((x) => x.modelTypes.includes(modelType));
  if (!f) throw new ExportRefusal(`model_type "${modelType}" is not a family Tinker Studio exports (${FAMILIES.flatMap((x) => x.modelTypes).join(', ')})`);
  return f;
}

/** The `model_type` of a base model of our table, from its name. */
export function modelTypeOfName(baseModel: string): string {
  if ((ENGINE_MODELS as readonly string[]).includes(baseModel)) {
    throw new ExportRefusal(`${baseModel} is a model of the embedded engine: its checkpoints are in the engine's own format and have no Hugging Face form`);
  }
  const n = baseModel.toLowerCase();
  const moe = /-a\d+(\.\d+)?b/.test(n);
  if (n.startsWith('qwen/qwen3-vl')) return moe ? 'qwen3_vl_moe' : 'qwen3_vl';
  if (/^qwen\/qwen3\.\d/.test(n)) return moe ? 'qwen3_5_moe' : 'qwen3_5';
  if (n.startsWith('qwen/qwen3')) return moe ? 'qwen3_moe' : 'qwen3';
  if (n.startsWith('meta-llama/')) return 'llama';
  if (n.startsWith('openai/gpt-oss')) return 'gpt_oss';
  if (n.startsWith('nvidia/nvidia-nemotron')) return 'nemotron_h';
  if (n.startsWith('moonshotai/kimi-k2.')) return 'kimi_k25';
  if (n.startsWith('moonshotai/kimi-k2') || n.startsWith('deepseek-ai/deepseek-v3')) return 'deepseek_v3';
  throw new ExportRefusal(`no export family is known for base model "${baseModel}"; give the base model's folder (its config.json names the family)`);
}

/**
 * Refuses, by name, a base whose weights would need re-quantising after the merge: Kimi's INT4
 * pack-quantized experts and DeepSeek's native FP8. `config` is the base's parsed config.json.
 */
export function quantizationRefusal(config: Record<string, unknown>, where: string): string | undefined {
  const q = (config.quantization_config ?? (config.text_config as Record<string, unknown> | undefined)?.quantization_config) as Record<string, unknown> | undefined;
  if (!q || typeof q !== 'object') return undefined;
  const format = String(q.format ?? '');
  const method = String(q.quant_method ?? '');
  if (format === 'pack-quantized' || method === 'compressed-tensors') {
    return `${where}: the base is Kimi's INT4 pack-quantized checkpoint; merging into it needs re-quantising its experts, which this export does not do. Use a BF16 copy of the base model`;
  }
  if (method === 'fp8') {
    return `${where}: the base is DeepSeek's native FP8 checkpoint; merging into it needs re-quantising to FP8, which this export does not do. Use a BF16 copy of the base model`;
  }
  return `${where}: the base is quantized (quant_method "${method}"); only F32, BF16 and F16 bases are merged`;
}

/** The base-relative name of an adapter tensor: `base_model.model.` stripped, `.lora_A/B` removed. */
export function adapterModuleName(adapterKey: string): { module: string; part: 'A' | 'B' } | undefined {
  const m = /^(?:base_model\.model\.)?(.*)\.lora_([AB])\.weight$/.exec(adapterKey);
  return m ? { module: m[1]!, part: m[2] as 'A' | 'B' } : undefined;
}

export interface NameContext {
  family: ExportFamily;
  /** the base has a separate lm_head (false: tied embeddings) */
  hasLmHead: boolean;
  /** the prefix the base's language model lives under, when not `model.` */
  languageModelPrefix?: string;
}

/** A module name of the adapter (`model.layers.0.self_attn.q_proj`) as a module path of the Hugging Face model. */
export function remapModule(module: string, ctx: NameContext, purpose: 'merge' | 'adapter'): string {
  let name = module;
  if (name === 'model.unembed_tokens' || name.endsWith('.unembed_tokens')) {
    // an adapter applies the unembedding LoRA where the logits are made: lm_head even when tied
    return ctx.hasLmHead || purpose === 'adapter' ? 'lm_head' : name.replace('unembed_tokens', 'embed_tokens');
  }
  for (const [from, to] of purpose === 'merge' ? ctx.family.mergeRemaps : ctx.family.adapterRemaps) {
    if (from === 'model.' ? name.startsWith(from) : name.includes(from)) name = from === 'model.' ? to + name.slice(from.length) : name.split(from).join(to);
  }
  if (ctx.languageModelPrefix && name.startsWith('model.')) name = ctx.languageModelPrefix + name.slice('model.'.length);
  const e = /\.experts\.(w[123])$/.exec(name);
  if (e) name = name.slice(0, e.index) + '.experts.' + ctx.family.experts[e[1] as 'w1' | 'w2' | 'w3'];
  return name;
}

/** The language-model prefix a base's tensor names show, if any. */
export function detectLanguageModelPrefix(keys: Iterable<string>): string | undefined {
  for (const k of keys) {
    if (k.startsWith('model.language_model.')) return 'model.language_model.';
    if (k.startsWith('language_model.model.')) return 'language_model.model.';
  }
  return undefined;
}
