// What Tinker Studio knows about a base model (grpo-reference §6.1, §7.6): its recommended renderers
// (the first is the default), where its tokenizer comes from, and the cookbook's learning rate.
import { ModelConfigurationError } from './errors';

export interface ModelEntry {
  /** full `org/model` id */
  name: string;
  /** the cookbook's `is_chat` */
  chat: boolean;
  /** recommended renderers, the first being the default */
  renderers: readonly string[];
  /** hidden size used by getLr, when known */
  hiddenSize?: number;
}

/** The embedded engine's models (not in the cookbook): byte tokenizer, chatml layout. */
export const ENGINE_MODELS = ['tinker-studio/arith-gpt', 'tinker-studio/arith-chat', 'tinker-studio/random-gpt'] as const;

/** LoRA learning rate for the engine's models: §6.1 has no entry; this is what bench/grpo uses. */
export const ENGINE_LORA_LR = 3e-3;

const QWEN3_THINKING = ['qwen3', 'qwen3_disable_thinking'];
const QWEN3_5 = ['qwen3_5', 'qwen3_5_disable_thinking'];
const ROLE_COLON = ['role_colon'];

const entry = (name: string, chat: boolean, renderers: readonly string[], hiddenSize?: number): ModelEntry => ({
  name,
  chat,
  renderers,
  ...(hiddenSize !== undefined ? { hiddenSize } : {}),
});

export const MODELS: readonly ModelEntry[] = [
  entry('meta-llama/Llama-3.1-8B-Instruct', true, ['llama3'], 4096),
  entry('meta-llama/Llama-3.2-1B', false, ROLE_COLON, 2048),
  entry('meta-llama/Llama-3.2-3B', false, ROLE_COLON, 3072),
  entry('meta-llama/Llama-3.1-8B', false, ROLE_COLON, 4096),
  entry('meta-llama/Llama-3.1-70B', false, ROLE_COLON, 8192),
  entry('meta-llama/Llama-3.3-70B-Instruct', true, ['llama3'], 8192),
  entry('Qwen/Qwen3-VL-30B-A3B-Instruct', true, ['qwen3_vl_instruct'], 2048),
  entry('Qwen/Qwen3-VL-235B-A22B-Instruct', true, ['qwen3_vl_instruct'], 4096),
  entry('Qwen/Qwen3-8B-Base', false, ROLE_COLON, 4096),
  entry('Qwen/Qwen3-30B-A3B-Base', false, ROLE_COLON, 2048),
  entry('Qwen/Qwen3-8B', true, QWEN3_THINKING, 4096),
  entry('Qwen/Qwen3-32B', true, QWEN3_THINKING, 5120),
  entry('Qwen/Qwen3-30B-A3B', true, QWEN3_THINKING, 2048),
  entry('Qwen/Qwen3-4B-Instruct-2507', true, ['qwen3_instruct'], 2560),
  entry('Qwen/Qwen3-30B-A3B-Instruct-2507', true, ['qwen3_instruct'], 2048),
  entry('Qwen/Qwen3-235B-A22B-Instruct-2507', true, ['qwen3_instruct'], 4096),
  entry('Qwen/Qwen3.5-4B', true, QWEN3_5, 2560),
  entry('Qwen/Qwen3.5-9B', true, QWEN3_5, 4096),
  entry('Qwen/Qwen3.5-9B-Base', false, ROLE_COLON, 4096),
  entry('Qwen/Qwen3.5-27B', true, QWEN3_5, 5120),
  entry('Qwen/Qwen3.5-35B-A3B', true, QWEN3_5, 2048),
  entry('Qwen/Qwen3.5-35B-A3B-Base', false, ROLE_COLON, 2048),
  entry('Qwen/Qwen3.5-397B-A17B', true, QWEN3_5, 4096),
  entry('Qwen/Qwen3.6-27B', true, QWEN3_5, 5120),
  entry('Qwen/Qwen3.6-35B-A3B', true, QWEN3_5, 2048),
  entry('Qwen/Qwen3.8-27B', true, ['qwen3_8_xhigh_reasoning', 'qwen3_8_disable_thinking', 'qwen3_8_medium_reasoning', 'qwen3_8_low_reasoning'], 5120),
  entry('deepseek-ai/DeepSeek-V3.1', true, ['deepseekv3', 'deepseekv3_thinking'], 7168),
  entry('deepseek-ai/DeepSeek-V3.1-Base', false, ROLE_COLON, 7168),
  entry('openai/gpt-oss-20b', true, ['gpt_oss_no_sysprompt', 'gpt_oss_medium_reasoning'], 2880),
  entry('openai/gpt-oss-120b', true, ['gpt_oss_no_sysprompt', 'gpt_oss_medium_reasoning'], 2880),
  entry('moonshotai/Kimi-K2-Thinking', true, ['kimi_k2'], 7168),
  entry('moonshotai/Kimi-K2.5', true, ['kimi_k25', 'kimi_k25_disable_thinking'], 7168),
  entry('moonshotai/Kimi-K2.6', true, ['kimi_k26', 'kimi_k26_disable_thinking', 'kimi_k26_preserve_thinking'], 7168),
  entry('nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', true, ['nemotron3', 'nemotron3_disable_thinking', 'nemotron3_preserve_thinking'], 2688),
  entry('nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16', true, ['nemotron3', 'nemotron3_disable_thinking', 'nemotron3_preserve_thinking', 'nemotron3_low_thinking'], 4096),
  entry('nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16', true, ['nemotron3_ultra', 'nemotron3_ultra_disable_thinking', 'nemotron3_ultra_medium_thinking', 'nemotron3_ultra_preserve_thinking'], 8192),
  entry('nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16', true, ['nemotron3_ultra', 'nemotron3_ultra_disable_thinking', 'nemotron3_ultra_preserve_thinking'], 2688),
  ...ENGINE_MODELS.map((name) => entry(name, true, ['chatml'])),
];

/** Inkling models are matched by prefix: any `thinkingmachines/Inkling…`. */
const INKLING_PREFIX = 'thinkingmachines/Inkling';
const INKLING_HIDDEN: Readonly<Record<string, number>> = { 'thinkingmachines/Inkling': 6144, 'thinkingmachines/Inkling-Small': 4096 };

const BY_NAME = new Map(MODELS.map((m) => [m.name, m]));
const ORGS = new Set([...MODELS.map((m) => m.name.split('/')[0]!), 'thinkingmachines']);

/** `org/model` without a `:suffix` (e.g. `Qwen/Qwen3-8B:peft` → `Qwen/Qwen3-8B`). */
export function baseModelName(model: string): string {
  return model.split(':')[0]!;
}

/** The §7.6 entry of a model; unknown organisation or model → a ModelConfigurationError saying what is known. */
export function modelInfo(model: string): ModelEntry {
  const name = baseModelName(model);
  const parts = name.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new ModelConfigurationError(`model "${model}" is not of the form org/model (e.g. Qwen/Qwen3-8B)`);
  }
  const [org, short] = parts as [string, string];
  if (!ORGS.has(org)) {
    throw new ModelConfigurationError(`unknown model organisation "${org}" in "${model}"; known: ${[...ORGS].join(', ')}. Give the renderer explicitly.`);
  }
  if (name.startsWith(INKLING_PREFIX)) {
    return entry(name, true, ['tml_v0'], INKLING_HIDDEN[name]);
  }
  const m = BY_NAME.get(name);
  if (!m) {
    const known = MODELS.filter((x) => x.name.startsWith(`${org}/`)).map((x) => x.name.slice(org.length + 1));
    throw new ModelConfigurationError(`unknown model "${short}" of ${org}; known: ${known.join(', ')}. Give the renderer explicitly.`);
  }
  return m;
}

/** The renderer used when none is given: the first recommended one. */
export function recommendedRenderer(model: string): string {
  return modelInfo(model).renderers[0]!;
}

/** Renderers with no tool calling (as in the cookbook; tml_v0 is not implemented): every other one has it. */
const WITHOUT_TOOL_CALLING: ReadonlySet<string> = new Set(['role_colon', 'llama3', 'tml_v0']);

/** Whether the default renderer of `model` declares tools and parses calls (false for an unknown model). */
export function modelHasToolCalling(model: string): boolean {
  try {
    return !WITHOUT_TOOL_CALLING.has(recommendedRenderer(model));
  } catch {
    return false;
  }
}

export type TokenizerSource = { kind: 'byte' } | { kind: 'hf'; repo: string };

/**
 * The public mirror of the Llama 3 Instruct tokenizer the cookbook uses (its PR #260: the instruct
 * repository, EOS <|eot_id|>), so gated repos need no token.
 */
export const LLAMA3_TOKENIZER_REPO = 'thinkingmachineslabinc/meta-llama-3-instruct-tokenizer';

/**
 * Where a model's tokenizer comes from: the byte tokenizer for the engine's models, the Llama 3
 * mirror for `meta-llama/Llama-3…`, else the model's own repo (e.g. Qwen/Qwen3-8B-Base). A
 * server's `tokenizer_id` (get_info) wins when given.
 */
export function tokenizerSource(model: string, tokenizerId?: string): TokenizerSource {
  const name = baseModelName(tokenizerId ?? model);
  if ((ENGINE_MODELS as readonly string[]).includes(name)) return { kind: 'byte' };
  if (name.startsWith('meta-llama/Llama-3')) return { kind: 'hf', repo: LLAMA3_TOKENIZER_REPO };
  return { kind: 'hf', repo: name };
}

const UNCALIBRATED_PREFIXES = [
  'thinkingmachines/Inkling',
  'deepseek-ai/DeepSeek-V3.1',
  'openai/gpt-oss-20b',
  'openai/gpt-oss-120b',
  'moonshotai/Kimi-K2.6',
  'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16',
  'nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16',
  'nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16',
  'nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16',
];

/**
 * The cookbook's `get_lr`: 5e-5 × (10 for LoRA) × (2000 / hidden_size)^exponent, exponent 0.781
 * for Llama and 0.0775 for Qwen. The engine's models get ENGINE_LORA_LR (÷10 for full fine-tuning).
 */
export function getLr(model: string, isLora = true): number {
  const name = baseModelName(model);
  const loraFactor = isLora ? 10 : 1;
  if ((ENGINE_MODELS as readonly string[]).includes(name)) return (ENGINE_LORA_LR / 10) * loraFactor;
  if (UNCALIBRATED_PREFIXES.some((p) => name.startsWith(p))) {
    throw new ModelConfigurationError(`the learning-rate formula is not yet calibrated for ${name}; set the learning rate explicitly`);
  }
  const lower = name.toLowerCase();
  const exponent = lower.includes('llama') ? 0.781 : lower.includes('qwen') ? 0.0775 : undefined;
  if (exponent === undefined) {
    throw new ModelConfigurationError(`no learning-rate formula for ${name} (only Llama and Qwen models are covered); set the learning rate explicitly`);
  }
  const hidden = BY_NAME.get(name)?.hiddenSize;
  if (hidden === undefined) {
    throw new ModelConfigurationError(`the hidden size of ${name} is not known to Tinker Studio, so the learning rate cannot be derived; set it explicitly`);
  }
  return 5e-5 * loraFactor * Math.pow(2000 / hidden, exponent);
}
