// llama3 (the cookbook's renderers/llama3.py, v0.5.5; grpo-reference §7.3): <|begin_of_text|>,
// <|start_header_id|>role<|end_header_id|>\n\n headers, <|eot_id|> ends a turn and is the stop token.
// No "Cutting Knowledge Date" system preamble (as the cookbook). No tool calling (the cookbook's has
// none: Llama 3's bare-JSON calls cannot be told apart from JSON content), and no reasoning: both are
// refused with a RendererError (the cookbook raises on reasoning, but renders a message's content and
// silently drops its tool calls: refusing them is our deliberate difference — docs/renderers-and-models.md).
import { RendererError } from './errors';
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderedMessage } from './layout';
import type { Message, ParsedResponse, StopSequences, Tokenizer } from './types';

/**
 * The text of a message for a renderer that has neither reasoning nor tool calls (the cookbook's
 * ensure_text), or a RendererError saying what to do.
 */
export function textOnly(renderer: string, m: Message): string {
  if (m.thinking !== undefined) {
    throw new RendererError(
      `renderer ${renderer} cannot render reasoning (a ${m.role} message has "thinking"): the model has no reasoning format. Remove the reasoning from the data, or choose a renderer of a reasoning model`,
    );
  }
  if (m.tool_calls?.length) {
    throw new RendererError(
      `renderer ${renderer} has no tool calling, so it refuses the tool calls of a ${m.role} message (a deliberate difference from the cookbook, which renders the content and drops the calls silently); choose a renderer of a model family that calls tools, or remove the tool calls from the data`,
    );
  }
  return m.content;
}

export class Llama3Renderer extends LayoutRenderer {
  readonly name = 'llama3';
  private readonly bos: number;
  private readonly eot: number;

  constructor(tokenizer: Tokenizer) {
    super(tokenizer);
    this.bos = singleSpecialToken(tokenizer, '<|begin_of_text|>', this.name);
    this.eot = singleSpecialToken(tokenizer, '<|eot_id|>', this.name);
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }

  protected override bosTokens(): number[] {
    return [this.bos];
  }

  protected renderMessage(message: Message): RenderedMessage {
    const text = textOnly(this.name, message);
    return {
      header: this.tokenizer.encodeWithSpecialTokens(`<|start_header_id|>${message.role}<|end_header_id|>\n\n`),
      output: this.tokenizer.encodeWithSpecialTokens(`${text}<|eot_id|>`),
    };
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.eot] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.eot);
    return { message: { role: 'assistant', content }, termination };
  }
}
