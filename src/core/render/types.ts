// The contract of the rendering layer: tokenizers turn text into ids and back; renderers turn a
// conversation into the exact token ids a model family expects (grpo-reference §7) and parse a
// sampled completion back into a message. Everything the GRPO loop, the playground and the dry runs
// know about a model family goes through these two interfaces.

import type { ChatMessage, Role as ChatRole, ToolCall, ToolSpec, UnparsedToolCall } from '../../protocol/chatMessage';

export type Role = ChatRole;
/** A chat message: text, reasoning, tool calls and tool results (src/protocol/chatMessage.ts). */
export type Message = ChatMessage;
export type { ToolCall, ToolSpec, UnparsedToolCall };

export interface Tokenizer {
  /** e.g. "Qwen/Qwen3-8B" or "byte" */
  readonly name: string;
  readonly vocabSize: number;
  /** ids of `text` with no special tokens added and special-token text not interpreted */
  encode(text: string): number[];
  /**
   * ids of `text` with no special tokens added, special-token text becoming the special token
   * (HF `encode(text, add_special_tokens=False)`): what renderers use for headers and, where the
   * cookbook does, for message content
   */
  encodeWithSpecialTokens(text: string): number[];
  /** text of `ids`; special tokens are written out as their text (e.g. `<|im_end|>`) */
  decode(ids: readonly number[]): string;
  /** the id of a special token given its text, if the vocabulary has it */
  specialTokenId(text: string): number | undefined;
  /** true for ids of special (added/control) tokens */
  isSpecial(id: number): boolean;
  readonly eosTokenId?: number;
  readonly bosTokenId?: number;
}

/** What a sampling call stops on: strings (role_colon) or token ids (every other renderer). */
export type StopSequences = { kind: 'strings'; strings: string[] } | { kind: 'tokens'; tokens: number[] };

/** How a completion ended: on the renderer's stop sequence, on EOS, or neither (cut off / malformed). */
export type Termination = 'stop_sequence' | 'eos' | 'malformed';

export interface ParsedResponse {
  message: Message;
  termination: Termination;
}

export interface SupervisedExample {
  /** the whole rendered conversation */
  tokens: number[];
  /** one weight per token of `tokens`: 1 where the model is trained to produce the token */
  weights: number[];
}

/** Which tokens an SFT example trains (the cookbook's TrainOnWhat values). */
export const TRAIN_ON_WHAT = [
  'last_assistant_message',
  'last_assistant_turn',
  'all_assistant_messages',
  'all_messages',
  'all_tokens',
  'all_user_and_system_messages',
  'customized',
] as const;
export type TrainOnWhat = (typeof TRAIN_ON_WHAT)[number];

export interface Renderer {
  /** the cookbook's renderer name, e.g. "qwen3_disable_thinking", or "chatml" for the engine's models */
  readonly name: string;
  readonly tokenizer: Tokenizer;
  /**
   * The prompt ids, ending exactly where the model's first sampled token goes (a turn of `role`,
   * default assistant), then `prefill` encoded when given.
   */
  buildGenerationPrompt(messages: readonly Message[], role?: Role, prefill?: string): number[];
  stopSequences(): StopSequences;
  /** sampled ids (stop token included when sampling stopped on it) → message and termination */
  parseResponse(tokens: readonly number[]): ParsedResponse;
  /**
   * Tokens and per-token weights for SFT (default: trained on the last assistant message). Throws a
   * RendererError where the cookbook raises (e.g. reasoning given to a renderer that has none).
   */
  buildSupervisedExample(messages: readonly Message[], trainOnWhat?: TrainOnWhat): SupervisedExample;
  /**
   * The cookbook's `build_supervised_examples` (default: last_assistant_turn): one example when the
   * renderer has the extension property, else one per trained assistant message, each ending at it.
   */
  buildSupervisedExamples(messages: readonly Message[], trainOnWhat?: TrainOnWhat): SupervisedExample[];
  /**
   * Whether each turn's generation prompt is a prefix of the next (the cookbook's
   * `has_extension_property`): false where history is rendered differently from the produced turn.
   */
  readonly hasExtensionProperty: boolean;
  /**
   * Whether the renderer can declare tools, render tool calls and parse them back. False where the
   * cookbook's renderer has no tool calling (llama3, role_colon).
   */
  readonly supportsTools: boolean;
  /**
   * The messages that start a conversation declaring `tools` (the cookbook's
   * `create_conversation_prefix_with_tools`): usually one system message holding the declaration and
   * `systemPrompt`. Throws a RendererError naming the renderer when it has no tool calling.
   */
  createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt?: string): Message[];
}
