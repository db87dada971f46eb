// The layout every renderer shares (grpo-reference §7.1): BOS, then per message a header (never
// trained) and an output (what the model generates for the turn), each piece tokenised on its own
// and concatenated; a generation suffix where sampling starts; SFT weights on the last assistant
// output, or on every assistant output.
import { RendererError } from './errors';
import type { Message, ParsedResponse, Renderer, Role, StopSequences, SupervisedExample, Tokenizer, ToolSpec, TrainOnWhat } from './types';

export interface RenderedMessage {
  /** role delimiters: weight 0 */
  header: number[];
  /** what the model generates for the turn, end-of-turn token included */
  output: number[];
  /** role_colon only: the part of the stop sequence that overlaps the next header */
  stopOverlap?: number[];
}

export interface RenderContext {
  /** index of the message in the conversation */
  idx: number;
  /** the last message of the conversation (or the generation suffix) */
  isLast: boolean;
  /** index of the last user message, -1 when there is none */
  lastUserIndex: number;
}

export abstract class LayoutRenderer implements Renderer {
  abstract readonly name: string;

  constructor(readonly tokenizer: Tokenizer) {}

  protected bosTokens(): number[] {
    return [];
  }

  protected abstract renderMessage(message: Message, ctx: RenderContext): RenderedMessage;

  /** By default the header of an empty message of `role`. */
  protected generationSuffix(role: Role, ctx: RenderContext): number[] {
    return this.renderMessage({ role, content: '' }, ctx).header;
  }

  /** No tool calling unless a renderer says so (the cookbook's base raises NotImplementedError). */
  readonly supportsTools: boolean = false;

  createConversationPrefixWithTools(_tools: readonly ToolSpec[], _systemPrompt?: string): Message[] {
    throw new RendererError(`renderer ${this.name} has no tool calling (as in the cookbook): choose a renderer of a model family that declares tools`);
  }

  abstract stopSequences(): StopSequences;
  abstract parseResponse(tokens: readonly number[]): ParsedResponse;

  private contexts(messages: readonly Message[]): RenderContext[] {
    let lastUserIndex = -1;
    messages.forEach((m, i) => {
      if (m.role === 'user') lastUserIndex = i;
    });
    return messages.map((_, idx) => ({ idx, isLast: idx === messages.length - 1, lastUserIndex }));
  }

  buildGenerationPrompt(messages: readonly Message[]): number[] {
    const out = [...this.bosTokens()];
    const ctxs = this.contexts(messages);
    messages.forEach((m, i) => {
      const r = this.renderMessage(m, ctxs[i]!);
      out.push(...r.header, ...r.output);
    });
    const lastUserIndex = ctxs.length ? ctxs[0]!.lastUserIndex : -1;
    out.push(...this.generationSuffix('assistant', { idx: messages.length, isLast: true, lastUserIndex }));
    return out;
  }

  /** Checks specific to a renderer before a conversation is used for SFT. */
  protected checkSupervised(_messages: readonly Message[]): void {}

  buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    if (messages.length === 0) throw new RendererError('a supervised example needs at least one message');
    this.checkSupervised(messages);
    const tokens: number[] = [];
    const weights: number[] = [];
    const push = (ids: readonly number[], w: number) => {
      for (const id of ids) {
        tokens.push(id);
        weights.push(w);
      }
    };
    push(this.bosTokens(), 0);
    const ctxs = this.contexts(messages);
    let lastStart = 0;
    messages.forEach((m, i) => {
      const ctx = ctxs[i]!;
      if (ctx.isLast) lastStart = tokens.length;
      const r = this.renderMessage(m, ctx);
      const trained = m.role === 'assistant' && (ctx.isLast || trainOnWhat === 'all_assistant_messages') ? 1 : 0;
      push(r.header, 0);
      push(r.output, trained);
      if (ctx.isLast && r.stopOverlap) push(r.stopOverlap, trained);
    });
    // Whatever the generation prompt of the trained turn already supplies (e.g. the empty think
    // block of qwen3_disable_thinking) is context, not something the model produces. Only the last
    // turn's tokens are cleared: earlier assistant turns trained by all_assistant_messages stay.
    if (messages[messages.length - 1]!.role === 'assistant') {
      const prompt = this.buildGenerationPrompt(messages.slice(0, -1));
      for (let i = 0; i < prompt.length && i < tokens.length && prompt[i] === tokens[i]; i++) if (i >= lastStart) weights[i] = 0;
    }
    return { tokens, weights };
  }
}

/** The one token `text` encodes to, or an error naming the tokenizer that lacks it. */
export function singleSpecialToken(tokenizer: Tokenizer, text: string, renderer: string): number {
  const ids = tokenizer.encodeWithSpecialTokens(text);
  if (ids.length !== 1) {
    throw new RendererError(`renderer ${renderer} needs the special token ${text}, which tokenizer ${tokenizer.name} does not have; choose a renderer that matches the model`);
  }
  return ids[0]!;
}

/**
 * The cookbook's shared stop-token parser: no stop token → malformed (whole text), exactly one →
 * the text before it, more than one → an error (the sampler was given the wrong stop tokens).
 */
export function parseOnStopToken(tokens: readonly number[], tokenizer: Tokenizer, stopToken: number): { content: string; termination: 'stop_sequence' | 'malformed' } {
  const count = tokens.reduce((n, t) => n + (t === stopToken ? 1 : 0), 0);
  if (count === 0) return { content: tokenizer.decode(tokens), termination: 'malformed' };
  if (count > 1) {
    throw new RendererError(`expected at most one stop token (id ${stopToken}) in a sampled response, got ${count}: wrong stop tokens when sampling? Use the renderer's stopSequences().`);
  }
  return { content: tokenizer.decode(tokens.slice(0, tokens.indexOf(stopToken))), termination: 'stop_sequence' };
}
