// The Qwen3 family (the cookbook's renderers/qwen3.py, v0.5.5): qwen3, qwen3_disable_thinking,
// qwen3_instruct (Instruct-2507, no <think> framing), qwen3_vl and qwen3_vl_instruct (text only
// here). <|im_start|>/<|im_end|> turns, the newline after <|im_end|> belonging to the next header,
// the produced turn framed in a <think> block, reasoning stripped from earlier assistant turns,
// tools declared in the system message and called in <tool_call> JSON blocks.
//
// One deliberate difference from the cookbook (qwen3, qwen3_disable_thinking): for a produced turn with reasoning, tool calls and
// no text, the cookbook writes three newlines between </think> and <tool_call>; Qwen3's chat
// template writes two (its `content` is the text without the reasoning). We follow the template.
import { RendererError } from './errors';
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import {
  contentParts,
  detectUnterminatedToolBlock,
  isToolCall,
  lstripChars,
  messageFromParts,
  parseContentBlocks,
  pyJsonDumps,
  stripChars,
  toolCallPayload,
  type ContentPart,
} from './parsing';
import type { Message, ParsedResponse, Role, StopSequences, Tokenizer, ToolSpec } from './types';

export type Qwen3Variant = 'qwen3' | 'qwen3_disable_thinking' | 'qwen3_instruct';

/** The block the chat template writes around the produced turn, present even when empty. */
function frameThinking(reasoning: string): string {
  return `<think>\n${stripChars(reasoning, '\\n')}\n</think>\n\n`;
}

/** Reverses frameThinking, so render → parse is the identity. */
export function unframeThinking(parts: readonly ContentPart[]): ContentPart[] {
  const out: ContentPart[] = [];
  let afterBlock = false;
  for (const p of parts) {
    if (p.type === 'thinking') {
      const reasoning = stripChars(p.thinking, '\\n');
      if (reasoning) out.push({ type: 'thinking', thinking: reasoning });
      afterBlock = true;
    } else {
      out.push({ type: 'text', text: afterBlock ? lstripChars(p.text, '\\n') : p.text });
      afterBlock = false;
    }
  }
  return out;
}

function toolCallsText(m: Message): string {
  return (m.tool_calls ?? []).map((c) => `<tool_call>\n${pyJsonDumps(toolCallPayload(c))}\n</tool_call>`).join('\n');
}

export class Qwen3Renderer extends LayoutRenderer {
  readonly name: string;
  override readonly supportsTools = true;
  protected readonly imEnd: number;
  /** whether the produced turn is framed in a <think> block (not for the Instruct-2507 models) */
  protected readonly framesThinking: boolean;
  protected readonly stripThinkingFromHistory = true;
  protected override readonly disablesThinking: boolean;

  constructor(tokenizer: Tokenizer, variant: Qwen3Variant | 'qwen3_vl' | 'qwen3_vl_instruct' = 'qwen3') {
    super(tokenizer);
    this.name = variant;
    this.framesThinking = variant !== 'qwen3_instruct' && variant !== 'qwen3_vl_instruct';
    this.disablesThinking = variant === 'qwen3_disable_thinking';
    this.imEnd = singleSpecialToken(tokenizer, '<|im_end|>', this.name);
    singleSpecialToken(tokenizer, '<|im_start|>', this.name);
  }

  override get hasExtensionProperty(): boolean {
    // Instruct-2507 has no reasoning to strip from history
    return this.name === 'qwen3_instruct';
  }

  protected header(role: Role, idx: number): string {
    return `${idx > 0 ? '\n' : ''}<|im_start|>${role === 'tool' ? 'user' : role}\n`;
  }

  private framesProducedTurn(message: Message, ctx: RenderContext): boolean {
    if (!this.framesThinking || message.role !== 'assistant') return false;
    // the template frames only after the last user message, and never without one
    if (ctx.lastUserIndex < 0) return false;
    return ctx.isLast || !this.stripThinkingFromHistory;
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    if (this.disablesThinking && message.role === 'assistant' && ctx.isLast && (message.content || message.thinking !== undefined) && ctx.lastUserIndex < 0) {
      throw new RendererError(
        "this conversation has no user message, so Qwen3's template writes no empty think block on the produced turn — but the generation prompt always opens one. Add a user message, or render with thinking enabled.",
      );
    }
    const frames = this.framesProducedTurn(message, ctx);
    let parts = contentParts(message);
    // as the cookbook's has_thinking: a ThinkingPart, or `<think>` in string content
    const hasReasoning = parts !== null || message.content.includes('<think>');
    let output: string;
    // whether the message has text of its own, for the newline before its tool calls
    let hasText: boolean;
    if (parts) {
      if (this.stripThinkingFromHistory && message.role === 'assistant' && !ctx.isLast) parts = parts.filter((p) => p.type !== 'thinking');
      output = '';
      let text = '';
      let afterBlock = false;
      for (const p of parts) {
        if (p.type === 'thinking') {
          output += frames ? frameThinking(p.thinking) : `<think>${p.thinking}</think>`;
          afterBlock = frames;
        } else {
          const t = afterBlock ? lstripChars(p.text, '\\n') : p.text;
          output += t;
          text += t;
          afterBlock = false;
        }
      }
      // The cookbook asks whether the whole output (framed reasoning included) is non-empty; the
      // template asks about the text alone. They differ only on a framed turn with reasoning.
      hasText = frames ? text.length > 0 : output.length > 0;
    } else if (frames && message.content.includes('</think>')) {
      const cut = message.content.indexOf('</think>');
      const reasoning = message.content.slice(0, cut);
      const rest = message.content.slice(cut + '</think>'.length);
      const open = reasoning.lastIndexOf('<think>');
      output = frameThinking(open >= 0 ? reasoning.slice(open + '<think>'.length) : reasoning) + lstripChars(rest, '\\n');
      hasText = output.length > 0;
    } else {
      output = message.content;
      hasText = output.length > 0;
    }
    if (frames && !hasReasoning) output = frameThinking('') + lstripChars(output, '\\n');
    if (message.role === 'tool') output = `<tool_response>\n${output}\n</tool_response>`;
    if (message.tool_calls !== undefined) output += (hasText ? '\n' : '') + toolCallsText(message);
    return {
      header: this.tokenizer.encodeWithSpecialTokens(this.header(message.role, ctx.idx)),
      // content with split_special_tokens: `<|im_end|>` typed in content stays text
      output: [...this.tokenizer.encode(output), this.imEnd],
    };
  }

  protected override generationSuffix(role: Role, ctx: RenderContext): number[] {
    if (!this.disablesThinking) return super.generationSuffix(role, ctx);
    // the empty block is part of the prompt, so sampling starts after it
    return this.tokenizer.encodeWithSpecialTokens(`${this.header(role, ctx.idx)}<think>\n\n</think>\n\n`);
  }

  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt = ''): Message[] {
    let toolsText = '';
    if (tools.length) {
      const lines = tools.map((t) => pyJsonDumps({ type: 'function', function: t })).join('\n');
      toolsText =
        '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        lines +
        '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';
    }
    return [{ role: 'system', content: systemPrompt ? `${systemPrompt}\n\n${toolsText}` : toolsText }];
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.imEnd] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.imEnd);
    if (termination !== 'stop_sequence') return { message: { role: 'assistant', content }, termination };
    const blocks = parseContentBlocks(content);
    let message: Message;
    if (blocks) {
      const calls = blocks.calls.filter(isToolCall);
      const unparsed = blocks.calls.filter((c) => !isToolCall(c));
      message = messageFromParts(this.framesThinking ? unframeThinking(blocks.parts) : blocks.parts, {
        ...(calls.length ? { tool_calls: calls } : {}),
        ...(unparsed.length ? { unparsed_tool_calls: unparsed as Exclude<(typeof blocks.calls)[number], { function: unknown }>[] } : {}),
      });
    } else message = { role: 'assistant', content };
    const dangling = detectUnterminatedToolBlock(content, '<tool_call>', '</tool_call>');
    if (dangling) message.unparsed_tool_calls = [...(message.unparsed_tool_calls ?? []), dangling];
    return { message, termination };
  }
}

/**
 * qwen3_vl and qwen3_vl_instruct: message content is encoded as one text with the end-of-turn
 * token (special-token text in content becomes the token, as in the cookbook), reasoning written
 * `<think>…</think>` unframed, tool calls always after a newline. Text only: Tinker Studio's
 * messages carry no image parts (see docs/renderers-and-models.md, "Vision models").
 */
export class Qwen3VlRenderer extends Qwen3Renderer {
  constructor(tokenizer: Tokenizer, variant: 'qwen3_vl' | 'qwen3_vl_instruct') {
    super(tokenizer, variant);
  }

  override get hasExtensionProperty(): boolean {
    return false;
  }

  protected override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const strip = this.stripThinkingFromHistory && message.role === 'assistant' && !ctx.isLast;
    const parts = contentParts(message) ?? [{ type: 'text' as const, text: message.content }];
    let text = parts.map((p) => (p.type === 'text' ? p.text : strip ? '' : `<think>${p.thinking}</think>`)).join('');
    if (message.role === 'tool') text = `<tool_response>\n${text}\n</tool_response>`;
    if (message.tool_calls !== undefined) text += `\n${toolCallsText(message)}`;
    text += '<|im_end|>';
    return {
      header: this.tokenizer.encodeWithSpecialTokens(this.header(message.role, ctx.idx)),
      output: this.tokenizer.encodeWithSpecialTokens(text),
    };
  }

  protected override generationSuffix(role: Role, ctx: RenderContext): number[] {
    return this.tokenizer.encodeWithSpecialTokens(this.header(role, ctx.idx));
  }
}
