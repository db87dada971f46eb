// Renderer names → renderers. The names are the cookbook's; `chatml` is the embedded engine's.
import { ChatmlRenderer } from './chatml';
import { DeepSeekV3DisableThinkingRenderer, DeepSeekV3ThinkingRenderer } from './deepseekV3';
import { ModelConfigurationError } from './errors';
import { GptOssRenderer } from './gptOss';
import { KimiRenderer } from './kimi';
import { Llama3Renderer } from './llama3';
import { Nemotron3Renderer } from './nemotron3';
import { Qwen3Renderer, Qwen3VlRenderer } from './qwen3';
import { Qwen35Renderer, Qwen38Renderer } from './qwen35';
import { RoleColonRenderer } from './roleColon';
import type { Renderer, Tokenizer } from './types';

/** Settings some renderers take beyond the tokenizer. */
export interface RendererOptions {
  /** gpt-oss with a system prompt: the date it gives (YYYY-MM-DD); default today (as the cookbook) */
  currentDate?: string;
}

const FACTORIES: Readonly<Record<string, (t: Tokenizer, o: RendererOptions) => Renderer>> = {
  role_colon: (t) => new RoleColonRenderer(t),
  llama3: (t) => new Llama3Renderer(t),
  qwen3: (t) => new Qwen3Renderer(t, 'qwen3'),
  qwen3_disable_thinking: (t) => new Qwen3Renderer(t, 'qwen3_disable_thinking'),
  qwen3_instruct: (t) => new Qwen3Renderer(t, 'qwen3_instruct'),
  qwen3_vl: (t) => new Qwen3VlRenderer(t, 'qwen3_vl'),
  qwen3_vl_instruct: (t) => new Qwen3VlRenderer(t, 'qwen3_vl_instruct'),
  deepseekv3: (t) => new DeepSeekV3DisableThinkingRenderer(t, 'deepseekv3'),
  deepseekv3_disable_thinking: (t) => new DeepSeekV3DisableThinkingRenderer(t, 'deepseekv3_disable_thinking'),
  deepseekv3_thinking: (t) => new DeepSeekV3ThinkingRenderer(t),
  gpt_oss_no_sysprompt: (t) => new GptOssRenderer(t),
  gpt_oss_low_reasoning: (t, o) => new GptOssRenderer(t, 'low', o.currentDate),
  gpt_oss_medium_reasoning: (t, o) => new GptOssRenderer(t, 'medium', o.currentDate),
  gpt_oss_high_reasoning: (t, o) => new GptOssRenderer(t, 'high', o.currentDate),
  qwen3_5: (t) => new Qwen35Renderer(t, 'qwen3_5'),
  qwen3_5_disable_thinking: (t) => new Qwen35Renderer(t, 'qwen3_5_disable_thinking', { thinkingDisabled: true }),
  qwen3_8_xhigh_reasoning: (t) => new Qwen38Renderer(t, 'xhigh'),
  qwen3_8_medium_reasoning: (t) => new Qwen38Renderer(t, 'medium'),
  qwen3_8_low_reasoning: (t) => new Qwen38Renderer(t, 'low'),
  qwen3_8_disable_thinking: (t) => new Qwen38Renderer(t, 'disabled'),
  kimi_k2: (t) => new KimiRenderer(t, 'kimi_k2'),
  kimi_k25: (t) => new KimiRenderer(t, 'kimi_k25', { k25: true }),
  kimi_k25_disable_thinking: (t) => new KimiRenderer(t, 'kimi_k25_disable_thinking', { k25: true, thinkingDisabled: true }),
  kimi_k26: (t) => new KimiRenderer(t, 'kimi_k26', { k25: true }),
  kimi_k26_disable_thinking: (t) => new KimiRenderer(t, 'kimi_k26_disable_thinking', { k25: true, thinkingDisabled: true }),
  kimi_k26_preserve_thinking: (t) => new KimiRenderer(t, 'kimi_k26_preserve_thinking', { k25: true, preserveThinking: true }),
  nemotron3: (t) => new Nemotron3Renderer(t, 'nemotron3'),
  nemotron3_low_thinking: (t) => new Nemotron3Renderer(t, 'nemotron3_low_thinking', { effort: 'low' }),
  nemotron3_disable_thinking: (t) => new Nemotron3Renderer(t, 'nemotron3_disable_thinking', { thinkingDisabled: true }),
  nemotron3_preserve_thinking: (t) => new Nemotron3Renderer(t, 'nemotron3_preserve_thinking', { preserveThinking: true }),
  nemotron3_ultra: (t) => new Nemotron3Renderer(t, 'nemotron3_ultra', { ultra: true }),
  nemotron3_ultra_disable_thinking: (t) => new Nemotron3Renderer(t, 'nemotron3_ultra_disable_thinking', { ultra: true, thinkingDisabled: true }),
  nemotron3_ultra_medium_thinking: (t) => new Nemotron3Renderer(t, 'nemotron3_ultra_medium_thinking', { ultra: true, effort: 'medium' }),
  nemotron3_ultra_preserve_thinking: (t) => new Nemotron3Renderer(t, 'nemotron3_ultra_preserve_thinking', { ultra: true, preserveThinking: true }),
  chatml: (t) => new ChatmlRenderer(t),
};

/** The renderers Tinker Studio implements. */
export const RENDERER_NAMES: readonly string[] = Object.keys(FACTORIES);

export function isImplementedRenderer(name: string): boolean {
  return Object.hasOwn(FACTORIES, name);
}

/** Why Tinker Studio cannot render for Inkling models (the cookbook's tml_v0). */
export const TML_V0_UNAVAILABLE =
  "renderer \"tml_v0\" (Thinking Machines' Inkling models) is not implemented in Tinker Studio: the cookbook's tml_v0 wraps the tml_renderers package, whose source and format are not public, so its tokens cannot be reproduced or checked. Choose another model";

/** The error for a renderer name Tinker Studio does not implement, naming the ones it does. */
export function unavailableRendererMessage(name: string): string {
  if (name === 'tml_v0') return `${TML_V0_UNAVAILABLE}; available renderers: ${RENDERER_NAMES.join(', ')}`;
  return `renderer "${name}" is not implemented in Tinker Studio; available: ${RENDERER_NAMES.join(', ')}`;
}

export function getRenderer(name: string, tokenizer: Tokenizer, options: RendererOptions = {}): Renderer {
  const make = Object.hasOwn(FACTORIES, name) ? FACTORIES[name] : undefined;
  if (!make) throw new ModelConfigurationError(unavailableRendererMessage(name));
  return make(tokenizer, options);
}

/**
 * The renderers to offer for `model`, each once: its recommended ones that exist, in the cookbook's
 * order (the first is the default), then every other implemented renderer. Never a name that does not
 * exist. An unknown model gets every renderer, none recommended.
 */
export function rendererChoices(recommended: readonly string[]): { name: string; recommended: boolean }[] {
  const first = recommended.filter((r) => isImplementedRenderer(r));
  return [...first.map((name) => ({ name, recommended: true })), ...RENDERER_NAMES.filter((r) => !first.includes(r)).map((name) => ({ name, recommended: false }))];
}
