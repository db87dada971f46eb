// role_colon (grpo-reference §7.2): the plain "User: …\n\nAssistant: …" layout for base models.
// It stops on the string "\n\nUser:", so sampling needs string stop sequences.
import { LayoutRenderer, type RenderedMessage } from './layout';
import type { Message, ParsedResponse, StopSequences } from './types';

const STOP = '\n\nUser:';

/** Python's str.capitalize(): first character upper-case, the rest lower-case. */
function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
}

export class RoleColonRenderer extends LayoutRenderer {
  readonly name = 'role_colon';

  protected override bosTokens(): number[] {
    return this.tokenizer.bosTokenId === undefined ? [] : [this.tokenizer.bosTokenId];
  }

  protected renderMessage(message: Message): RenderedMessage {
    const tok = this.tokenizer;
    return {
      header: tok.encodeWithSpecialTokens(`${capitalize(message.role)}:`),
      output: tok.encodeWithSpecialTokens(` ${message.content}\n\n`),
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
    const content = trimTurn(pieces[0]!);
    const message: Message = { role: 'assistant', content };
    if (pieces.length === 1) return { message, termination: endedWithEos ? 'eos' : 'malformed' };
    // the sampler should have stopped at "\n\nUser:" before any EOS, and at the first one
    if (pieces.length === 2 && !endedWithEos) return { message, termination: 'stop_sequence' };
    return { message, termination: 'malformed' };
  }
}

/** One leading space and one trailing "\n\n" are the layout's, not the content's. */
function trimTurn(s: string): string {
  let out = s.startsWith(' ') ? s.slice(1) : s;
  if (out.endsWith('\n\n')) out = out.slice(0, -2);
  return out;
}
