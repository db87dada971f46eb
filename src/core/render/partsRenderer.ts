// The cookbook's Renderer base (tinker_cookbook/renderers/base.py, v0.5.5) for renderers that
// follow it step by step: each message rendered into a header and output chunks, each chunk
// tokenised on its own; SFT weights by train-on-what mode; the generation prompt's own tokens
// withheld from the loss. Messages are seen as the cookbook sees them: `content` a string, or a
// list of thinking and text parts when the message has `thinking` (partsOf).
import { RendererError } from './errors';
import type { Message, ParsedResponse, Renderer, StopSequences, SupervisedExample, Tokenizer, ToolCall, ToolSpec, TrainOnWhat, UnparsedToolCall } from './types';

/** A role as the cookbook's renderers see it: ours plus the internal ones of a tool prefix. */
export type AnyRole = string;

/** A message with any role (gpt-oss' developer, Kimi's tool_declare) as renderers handle it. */
export type RenderMessage = Omit<Message, 'role'> & { role: AnyRole };

export type TextPart = { type: 'text'; text: string };
export type ThinkingPart = { type: 'thinking'; thinking: string };
export type ContentPart = TextPart | ThinkingPart;
export type Content = string | ContentPart[];

/**
 * The cookbook's view of a message's content: a string, or (when the message has reasoning) a
 * thinking part then a text part, as the goldens' generator writes it.
 */
export function partsOf(m: RenderMessage): Content {
  if (m.thinking === undefined) return m.content;
  return [
    { type: 'thinking', thinking: m.thinking },
    { type: 'text', text: m.content },
  ];
}

/** The cookbook's `has_thinking`: a thinking part, or an opening `<think>` in string content. */
export function hasThinking(content: Content): boolean {
  return typeof content === 'string' ? content.includes('<think>') : content.some((p) => p.type === 'thinking');
}

export function textOf(content: Content): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

export function thinkingOf(content: Content): string {
  return typeof content === 'string' ? '' : content.map((p) => (p.type === 'thinking' ? p.thinking : '')).join('');
}

/** Parsed parts back into our message: thinking parts joined, text parts joined. */
export function messageFromParts(content: Content, extra: { tool_calls?: ToolCall[]; unparsed_tool_calls?: UnparsedToolCall[] } = {}): Message {
  const out: Message = { role: 'assistant', content: textOf(content) };
  if (typeof content !== 'string' && content.some((p) => p.type === 'thinking')) out.thinking = thinkingOf(content);
  if (extra.tool_calls?.length) out.tool_calls = extra.tool_calls;
  if (extra.unparsed_tool_calls?.length) out.unparsed_tool_calls = extra.unparsed_tool_calls;
  return out;
}

export interface PartsContext {
  idx: number;
  isLast: boolean;
  prev?: RenderMessage;
  next?: RenderMessage;
  /** index of the last user message, -1 when none */
  lastUserIndex: number;
  /** whether the message belongs to the turn the model is asked to produce */
  inLastAssistantTurn: boolean;
}

export interface PartsRendered {
  /** never trained, except in all_tokens */
  header: number[];
  /** chunks, each tokenised on its own */
  output: number[][];
}

function lastUserIndex(messages: readonly RenderMessage[]): number {
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') last = i;
  });
  return last;
}

export abstract class PartsRenderer implements Renderer {
  abstract readonly name: string;
  /** the generation prompt closes the think block (the cookbook's disables_thinking) */
  protected readonly disablesThinking: boolean = false;
  readonly supportsTools: boolean = true;

  constructor(readonly tokenizer: Tokenizer) {}

  protected bosTokens(): number[] {
    return [];
  }

  protected abstract renderMessage(message: RenderMessage, ctx: PartsContext): PartsRendered;
  abstract stopSequences(): StopSequences;
  abstract parseResponse(tokens: readonly number[]): ParsedResponse;
  abstract createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt?: string): Message[];

  /** The header of an empty message of `role` (the cookbook's default suffix). */
  protected generationSuffix(role: AnyRole, ctx: PartsContext): number[] {
    return this.renderMessage({ role, content: '' }, ctx).header;
  }

  /** The cookbook's `_last_assistant_turn_start_index`: after the last user message. */
  protected lastAssistantTurnStartIndex(messages: readonly RenderMessage[]): number {
    return lastUserIndex(messages) + 1;
  }

  protected encode(text: string): number[] {
    return this.tokenizer.encodeWithSpecialTokens(text);
  }

  /** Messages as the cookbook's overridden build_* methods see them (system prompts added …). */
  protected normalizeMessages(messages: readonly RenderMessage[]): RenderMessage[] {
    return [...messages];
  }

  /** A prefill the renderer itself appends to every generation prompt (Kimi K2.5's `<think>`). */
  protected defaultPrefill(): string {
    return '';
  }

  buildGenerationPrompt(messages: readonly Message[], prefill?: string): number[] {
    return this.generationPrompt(this.normalizeMessages(messages), prefill);
  }

  /** build_generation_prompt over already-normalised messages */
  protected generationPrompt(messages: readonly RenderMessage[], prefill?: string): number[] {
    const out = [...this.bosTokens()];
    const lastUser = lastUserIndex(messages);
    const turnStart = this.lastAssistantTurnStartIndex(messages);
    messages.forEach((m, idx) => {
      const r = this.renderMessage(m, this.context(messages, idx, lastUser, idx >= turnStart));
      out.push(...r.header);
      for (const c of r.output) out.push(...c);
    });
    const suffixCtx: PartsContext = { idx: messages.length, isLast: true, lastUserIndex: lastUser, inLastAssistantTurn: true };
    if (messages.length) suffixCtx.prev = messages[messages.length - 1]!;
    out.push(...this.generationSuffix('assistant', suffixCtx));
    const fill = this.defaultPrefill() + (prefill ?? '');
    if (fill) out.push(...this.tokenizer.encodeWithSpecialTokens(fill));
    return out;
  }

  private context(messages: readonly RenderMessage[], idx: number, lastUser: number, inLastTurn: boolean): PartsContext {
    const ctx: PartsContext = { idx, isLast: idx === messages.length - 1, lastUserIndex: lastUser, inLastAssistantTurn: inLastTurn };
    if (idx > 0) ctx.prev = messages[idx - 1]!;
    if (idx + 1 < messages.length) ctx.next = messages[idx + 1]!;
    return ctx;
  }

  buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return this.supervisedExample(this.normalizeMessages(messages), trainOnWhat);
  }

  protected outputIsTrained(message: RenderMessage, ctx: PartsContext, trainOnWhat: TrainOnWhat): boolean {
    const isAssistant = message.role === 'assistant';
    switch (trainOnWhat) {
      case 'last_assistant_message':
        return ctx.isLast && isAssistant;
      case 'last_assistant_turn':
        return isAssistant && ctx.inLastAssistantTurn;
      case 'all_assistant_messages':
        return isAssistant;
      case 'all_messages':
      case 'all_tokens':
        return true;
      case 'all_user_and_system_messages':
        return message.role === 'user' || message.role === 'system';
      case 'customized':
        return message.trainable ?? false;
    }
  }

  /** build_supervised_example over already-normalised messages */
  protected supervisedExample(messages: readonly RenderMessage[], trainOnWhat: TrainOnWhat): SupervisedExample {
    if (messages.length === 0) throw new RendererError('a supervised example needs at least one message');
    const tokens: number[] = [];
    const weights: number[] = [];
    const push = (ids: readonly number[], w: number) => {
      for (const id of ids) {
        tokens.push(id);
        weights.push(w);
      }
    };
    push(this.bosTokens(), 0);
    const lastUser = lastUserIndex(messages);
    const turnStart = this.lastAssistantTurnStartIndex(messages.slice(0, -1));
    messages.forEach((m, idx) => {
      if (trainOnWhat === 'customized' && m.trainable === undefined) {
        throw new RendererError(`train-on-what "customized" needs a "trainable" flag on every message; message ${idx + 1} (${m.role}) has none`);
      }
      if (trainOnWhat !== 'customized' && m.trainable !== undefined) {
        throw new RendererError(`message ${idx + 1} (${m.role}) has a "trainable" flag, which only train-on-what "customized" uses: remove it or choose "customized"`);
      }
      const ctx = this.context(messages, idx, lastUser, idx >= turnStart);
      const r = this.renderMessage(m, ctx);
      push(r.header, trainOnWhat === 'all_tokens' ? 1 : 0);
      const w = this.outputIsTrained(m, ctx, trainOnWhat) ? 1 : 0;
      for (const c of r.output) push(c, w);
    });
    return { tokens, weights: this.trainAfterGenerationPrompt(messages, trainOnWhat, tokens, weights) };
  }

  /** The cookbook's `_train_after_the_generation_prompt`: the prompt's own tokens carry no loss. */
  private trainAfterGenerationPrompt(messages: readonly RenderMessage[], trainOnWhat: TrainOnWhat, tokens: number[], weights: number[]): number[] {
    let boundary: number;
    if (trainOnWhat === 'last_assistant_message') boundary = messages.length - 1;
    else if (trainOnWhat === 'last_assistant_turn') boundary = lastUserIndex(messages) + 1;
    else return weights;
    if (boundary < 0 || boundary >= messages.length || messages[boundary]!.role !== 'assistant') return weights;
    // as the cookbook: the public build_generation_prompt, which normalises again (idempotent for
    // every renderer here but gpt-oss, whose prompt then has its system message twice and is no prefix)
    const prompt = this.buildGenerationPrompt(messages.slice(0, boundary) as Message[]);
    const isPrefix = prompt.length <= tokens.length && prompt.every((t, i) => tokens[i] === t);
    if (!isPrefix) {
      if (this.disablesThinking) {
        throw new RendererError(
          `${this.name} has thinking turned off: its generation prompt closes the think block, which tells the model not to reason. This turn contains reasoning, so training on it would teach the model to reason after being told not to. Use the thinking version of this renderer, or remove the reasoning from this turn.`,
        );
      }
      return weights;
    }
    return weights.map((w, i) => (i < prompt.length ? 0 : w));
  }
}

/** The cookbook's `detect_unterminated_tool_block`. */
export function unterminatedToolBlock(content: string, open: string, close: string): UnparsedToolCall | undefined {
  const opens = content.split(open).length - 1;
  if (opens === 0 || opens <= content.split(close).length - 1) return undefined;
  return {
    raw_text: content.slice(content.lastIndexOf(open)).slice(0, 16384),
    error: `unterminated tool block: '${open}' opened without a matching '${close}'`,
  };
}

/** The cookbook's `parse_think_blocks`: `<think>…</think>` into parts, whitespace kept; undefined when none. */
export function parseThinkBlocks(content: string): ContentPart[] | undefined {
  if (!content.includes('<think>')) return undefined;
  const parts: ContentPart[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>/g)) {
    const before = content.slice(pos, m.index);
    if (before) parts.push({ type: 'text', text: before });
    if (m[1]) parts.push({ type: 'thinking', thinking: m[1] });
    pos = m.index + m[0].length;
  }
  const rest = content.slice(pos);
  if (rest) parts.push({ type: 'text', text: rest });
  return parts;
}
