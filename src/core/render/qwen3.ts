// qwen3 and qwen3_disable_thinking (grpo-reference §7.4): <|im_start|>/<|im_end|> turns, the
// newline after <|im_end|> belonging to the next header, the turn being produced framed in a
// <think> block, reasoning stripped from earlier assistant turns.
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import type { Message, ParsedResponse, Role, StopSequences, Tokenizer } from './types';

const EMPTY_THINK = '<think>\n\n</think>\n\n';

function stripNewlines(s: string): string {
  return s.replace(/^\n+|\n+$/g, '');
}

function lstripNewlines(s: string): string {
  return s.replace(/^\n+/, '');
}

/** The block the chat template writes around the turn being produced, present even when empty. */
function frameThinking(reasoning: string): string {
  return `<think>\n${stripNewlines(reasoning)}\n</think>\n\n`;
}

export class Qwen3Renderer extends LayoutRenderer {
  readonly name: string;
  private readonly imEnd: number;

  constructor(
    tokenizer: Tokenizer,
    private readonly thinkingDisabled = false,
  ) {
    super(tokenizer);
    this.name = thinkingDisabled ? 'qwen3_disable_thinking' : 'qwen3';
    this.imEnd = singleSpecialToken(tokenizer, '<|im_end|>', this.name);
    singleSpecialToken(tokenizer, '<|im_start|>', this.name);
  }

  private headerText(role: Role, idx: number): string {
    return `${idx > 0 ? '\n' : ''}<|im_start|>${role === 'tool' ? 'user' : role}\n`;
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const thinking = message.thinking ?? '';
    // The template frames only the turn after the last user message; history is stripped.
    const frames = message.role === 'assistant' && ctx.isLast && ctx.lastUserIndex >= 0;
    let text: string;
    if (message.role === 'assistant' && !ctx.isLast) text = message.content;
    else if (frames) text = frameThinking(thinking) + lstripNewlines(message.content);
    else if (thinking) text = `<think>${thinking}</think>${message.content}`;
    else text = message.content;
    if (message.role === 'tool') text = `<tool_response>\n${text}\n</tool_response>`;
    return {
      header: this.tokenizer.encodeWithSpecialTokens(this.headerText(message.role, ctx.idx)),
      // content with split_special_tokens: `<|im_end|>` typed in content stays text
      output: [...this.tokenizer.encode(text), this.imEnd],
    };
  }

  protected override generationSuffix(role: Role, ctx: RenderContext): number[] {
    const suffix = this.headerText(role, ctx.idx) + (this.thinkingDisabled ? EMPTY_THINK : '');
    return this.tokenizer.encodeWithSpecialTokens(suffix);
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.imEnd] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.imEnd);
    if (termination !== 'stop_sequence') return { message: { role: 'assistant', content }, termination };
    return { message: splitThinkBlocks(content), termination };
  }
}

/**
 * `<think>…</think>` blocks become the message's thinking (padding newlines stripped, empty
 * blocks dropped, the text after a block without its leading newlines); an unclosed `<think>`
 * leaves everything as text.
 */
export function splitThinkBlocks(content: string): Message {
  if (!content.includes('<think>')) return { role: 'assistant', content };
  const thinking: string[] = [];
  let text = '';
  let pos = 0;
  let afterBlock = false;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>/g)) {
    const before = content.slice(pos, m.index);
    text += afterBlock ? lstripNewlines(before) : before;
    const reasoning = stripNewlines(m[1]!);
    if (reasoning) thinking.push(reasoning);
    pos = m.index + m[0].length;
    afterBlock = true;
  }
  const rest = content.slice(pos);
  text += afterBlock ? lstripNewlines(rest) : rest;
  return thinking.length ? { role: 'assistant', content: text, thinking: thinking.join('') } : { role: 'assistant', content: text };
}
