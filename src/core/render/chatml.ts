// chatml: the layout the embedded engine's models were pretrained on —
// <|im_start|>{role}\n{content}<|im_end|>\n, generation prompt <|im_start|>assistant\n, stop token
// <|im_end|>. As in qwen3, the newline after <|im_end|> opens the next header, so a trained turn
// ends on its stop token; content is taken literally (special-token text in it stays text).
// Tools use the compact format of chatmlTools.ts (a one-line declaration in the system message,
// `<tool_call>{…}</tool_call>` in the assistant turn, the result in a `tool` turn).
import { parseToolCalls, renderAssistantText, toolSystemMessage } from './chatmlTools';
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import type { Message, ParsedResponse, StopSequences, Tokenizer, ToolSpec } from './types';

export class ChatmlRenderer extends LayoutRenderer {
  readonly name = 'chatml';
  override readonly supportsTools = true;
  private readonly imEnd: number;

  constructor(tokenizer: Tokenizer) {
    super(tokenizer);
    this.imEnd = singleSpecialToken(tokenizer, '<|im_end|>', this.name);
    singleSpecialToken(tokenizer, '<|im_start|>', this.name);
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const tok = this.tokenizer;
    const text = message.role === 'assistant' ? renderAssistantText(message) : message.content;
    return {
      header: tok.encodeWithSpecialTokens(`${ctx.idx > 0 ? '\n' : ''}<|im_start|>${message.role}\n`),
      output: [...tok.encode(text), this.imEnd],
    };
  }

  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt?: string): Message[] {
    return [toolSystemMessage(tools, systemPrompt)];
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.imEnd] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.imEnd);
    if (termination !== 'stop_sequence') return { message: { role: 'assistant', content }, termination };
    const parsed = parseToolCalls(content);
    const message: Message = { role: 'assistant', content: parsed.content };
    if (parsed.tool_calls.length) message.tool_calls = parsed.tool_calls;
    if (parsed.unparsed_tool_calls.length) message.unparsed_tool_calls = parsed.unparsed_tool_calls;
    return { message, termination };
  }
}
