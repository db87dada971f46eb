// chatml: the layout the embedded engine's models were pretrained on —
// <|im_start|>{role}\n{content}<|im_end|>\n, generation prompt <|im_start|>assistant\n, stop token
// <|im_end|>. As in qwen3, the newline after <|im_end|> opens the next header, so a trained turn
// ends on its stop token; content is taken literally (special-token text in it stays text).
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import type { Message, ParsedResponse, StopSequences, Tokenizer } from './types';

export class ChatmlRenderer extends LayoutRenderer {
  readonly name = 'chatml';
  private readonly imEnd: number;

  constructor(tokenizer: Tokenizer) {
    super(tokenizer);
    this.imEnd = singleSpecialToken(tokenizer, '<|im_end|>', this.name);
    singleSpecialToken(tokenizer, '<|im_start|>', this.name);
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const tok = this.tokenizer;
    return {
      header: tok.encodeWithSpecialTokens(`${ctx.idx > 0 ? '\n' : ''}<|im_start|>${message.role}\n`),
      output: [...tok.encode(message.content), this.imEnd],
    };
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.imEnd] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.imEnd);
    return { message: { role: 'assistant', content }, termination };
  }
}
