// llama3 (grpo-reference §7.3): <|begin_of_text|>, <|start_header_id|>role<|end_header_id|>\n\n
// headers, <|eot_id|> ends a turn and is the stop token. No system preamble, no tool calls.
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderedMessage } from './layout';
import type { Message, ParsedResponse, Role, StopSequences, Tokenizer } from './types';

export class Llama3Renderer extends LayoutRenderer {
  readonly name = 'llama3';
  private readonly bos: number;
  private readonly eot: number;

  constructor(tokenizer: Tokenizer) {
    super(tokenizer);
    this.bos = singleSpecialToken(tokenizer, '<|begin_of_text|>', this.name);
    this.eot = singleSpecialToken(tokenizer, '<|eot_id|>', this.name);
  }

  protected override bosTokens(): number[] {
    return [this.bos];
  }

  private header(role: Role): number[] {
    return this.tokenizer.encodeWithSpecialTokens(`<|start_header_id|>${role}<|end_header_id|>\n\n`);
  }

  protected renderMessage(message: Message): RenderedMessage {
    return { header: this.header(message.role), output: this.tokenizer.encodeWithSpecialTokens(`${message.content}<|eot_id|>`) };
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.eot] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.eot);
    return { message: { role: 'assistant', content }, termination };
  }
}
