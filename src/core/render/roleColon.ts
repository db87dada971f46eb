// role_colon (the cookbook's renderers/role_colon.py, v0.5.5; grpo-reference §7.2): the plain
// "User: …\n\nAssistant: …" layout for base models. It stops on the string "\n\nUser:", so sampling
// needs string stop sequences. No tool calling and no reasoning (refused, see llama3.ts's textOnly).
// One deliberate difference: a supervised example whose last message is not the assistant's does not
// end in the cookbook's "<UNUSED>" placeholder text (docs/renderers-and-models.md).
import { LayoutRenderer, type RenderedMessage } from './layout';
import { textOnly } from './llama3';
import type { Message, ParsedResponse, StopSequences } from './types';

const STOP = '\n\nUser:';
const PREFIX = ' ';
const SUFFIX = '\n\n';

/** Python's str.capitalize(): first character upper-case, the rest lower-case. */
function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
}

export class RoleColonRenderer extends LayoutRenderer {
  readonly name = 'role_colon';

  override get hasExtensionProperty(): boolean {
    return true;
  }

  protected override bosTokens(): number[] {
    return this.tokenizer.bosTokenId === undefined ? [] : [this.tokenizer.bosTokenId];
  }

  protected renderMessage(message: Message): RenderedMessage {
    const tok = this.tokenizer;
    const text = textOnly(this.name, message);
    return {
      header: tok.encodeWithSpecialTokens(`${capitalize(message.role)}:`),
      output: tok.encodeWithSpecialTokens(`${PREFIX}${text}${SUFFIX}`),
      // completes the stop sequence when an assistant turn is the last one trained on
      ...(message.role === 'assistant' ? { stopOverlap: tok.encodeWithSpecialTokens('User:') } : {}),
    };
  }

  stopSequences(): StopSequences {
    return { kind: 'strings', strings: [STOP] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const eos = this.tokenizer.eosTokenId;
    const endedWithEos = eos !== undefined && tokens.length > 0 && tokens[tokens.length - 1] === eos;
    const text = this.tokenizer.decode(endedWithEos ? tokens.slice(0, -1) : tokens);
    const pieces = text.split(STOP);
    let content = pieces[0]!;
    if (content.startsWith(PREFIX)) content = content.slice(PREFIX.length);
    if (content.endsWith(SUFFIX)) content = content.slice(0, -SUFFIX.length);
    const message: Message = { role: 'assistant', content };
    if (pieces.length === 1) return { message, termination: endedWithEos ? 'eos' : 'malformed' };
    // the sampler should have stopped at "\n\nUser:" before any EOS, and at the first one
    if (pieces.length === 2 && !endedWithEos) return { message, termination: 'stop_sequence' };
    return { message, termination: 'malformed' };
  }
}
