// The layout every renderer shares — the cookbook's `Renderer` base (renderers/base.py, v0.5.5):
// BOS, then per message a header (never trained, except for all_tokens) and an output (what the
// model generates for the turn), each tokenised on its own and concatenated; a generation suffix
// where sampling starts; SFT weights by train-on-what mode; and the rule that nothing the generation
// prompt already supplies (a prefilled `<think>`, an empty think block) is trained.
import { RendererError } from './errors';
import type { Message, ParsedResponse, Renderer, Role, StopSequences, SupervisedExample, Tokenizer, ToolSpec, TrainOnWhat } from './types';

export interface RenderedMessage {
  /** role delimiters: weight 0 (1 for all_tokens) */
  header: number[];
  /** what the model generates for the turn, end-of-turn token included */
  output: number[];
  /** role_colon only: the part of the stop sequence that overlaps the next header */
  stopOverlap?: number[];
}

/** The cookbook's RenderContext: where a message sits in its conversation. */
export interface RenderContext {
  /** index of the message in the conversation */
  idx: number;
  /** the last message of the conversation (or the generation suffix) */
  isLast: boolean;
  prevMessage?: Message;
  nextMessage?: Message;
  /** index of the last user message, -1 when there is none */
  lastUserIndex: number;
  /** the message belongs to the turn the model is asked to produce (after the last user message) */
  inLastAssistantTurn: boolean;
}

function lastUserIndex(messages: readonly Message[]): number {
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') last = i;
  });
  return last;
}

export abstract class LayoutRenderer implements Renderer {
  abstract readonly name: string;

  constructor(readonly tokenizer: Tokenizer) {}

  protected bosTokens(): number[] {
    return [];
  }

  /**
   * True where the generation prompt closes the think block (telling the model not to reason): a
   * turn with reasoning cannot then be trained (the cookbook's `disables_thinking`).
   */
  protected readonly disablesThinking: boolean = false;

  /** False unless the renderer renders history exactly as the produced turn (see Renderer). */
  get hasExtensionProperty(): boolean {
    return false;
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

  /** Index of the first message of the produced turn: the one after the last user message. */
  protected lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    return lastUserIndex(messages) + 1;
  }

  private context(messages: readonly Message[], idx: number, lastUser: number, turnStart: number): RenderContext {
    return {
      idx,
      isLast: idx === messages.length - 1,
      ...(idx > 0 ? { prevMessage: messages[idx - 1]! } : {}),
      ...(idx + 1 < messages.length ? { nextMessage: messages[idx + 1]! } : {}),
      lastUserIndex: lastUser,
      inLastAssistantTurn: idx >= turnStart,
    };
  }

  buildGenerationPrompt(messages: readonly Message[], role: Role = 'assistant', prefill?: string): number[] {
    const out = [...this.bosTokens()];
    const lastUser = lastUserIndex(messages);
    const turnStart = this.lastAssistantTurnStartIndex(messages);
    messages.forEach((m, i) => {
      const r = this.renderMessage(m, this.context(messages, i, lastUser, turnStart));
      // loops, not push(...): a spread passes each token as an argument and overflows the stack on a long message
      for (const t of r.header) out.push(t);
      for (const t of r.output) out.push(t);
    });
    const suffixCtx: RenderContext = {
      idx: messages.length,
      isLast: true,
      ...(messages.length ? { prevMessage: messages[messages.length - 1]! } : {}),
      lastUserIndex: lastUser,
      inLastAssistantTurn: true,
    };
    for (const t of this.generationSuffix(role, suffixCtx)) out.push(t);
    if (prefill) for (const t of this.tokenizer.encodeWithSpecialTokens(prefill)) out.push(t);
    return out;
  }

  /** Whether a message's output carries loss under `mode` (the cookbook's `_output_is_trained`). */
  protected outputIsTrained(message: Message, ctx: RenderContext, mode: TrainOnWhat): boolean {
    const isAssistant = message.role === 'assistant';
    switch (mode) {
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

  buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    messages.forEach((m, i) => {
      if (trainOnWhat === 'customized' && m.trainable === undefined) {
        throw new RendererError(`train_on_what "customized" needs a "trainable" flag on every message; message ${i + 1} (${m.role}) has none`);
      }
      if (trainOnWhat !== 'customized' && m.trainable !== undefined) {
        throw new RendererError(`message ${i + 1} (${m.role}) has a "trainable" flag, which only train_on_what "customized" reads: use that mode or remove the flags`);
      }
    });
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
    // as the cookbook: the turn start of the conversation without its last message
    const turnStart = this.lastAssistantTurnStartIndex(messages.slice(0, -1));
    messages.forEach((m, i) => {
      const ctx = this.context(messages, i, lastUser, turnStart);
      const r = this.renderMessage(m, ctx);
      push(r.header, trainOnWhat === 'all_tokens' ? 1 : 0);
      const trained = this.outputIsTrained(m, ctx, trainOnWhat) ? 1 : 0;
      push(r.output, trained);
      if (ctx.isLast && r.stopOverlap) push(r.stopOverlap, trained);
    });
    return { tokens, weights: this.trainAfterTheGenerationPrompt(messages, trainOnWhat, tokens, weights) };
  }

  /**
   * Withholds loss from whatever the generation prompt of the trained turn already supplies (the
   * cookbook's `_train_after_the_generation_prompt`). A render that does not start with that prompt
   * is refused for renderers that disable thinking (the turn reasoned after being told not to) and
   * left as is otherwise.
   */
  private trainAfterTheGenerationPrompt(messages: readonly Message[], mode: TrainOnWhat, tokens: readonly number[], weights: number[]): number[] {
    let boundary: number;
    if (mode === 'last_assistant_message') boundary = messages.length - 1;
    else if (mode === 'last_assistant_turn') boundary = lastUserIndex(messages) + 1;
    else return weights;
    if (boundary < 0 || boundary >= messages.length || messages[boundary]!.role !== 'assistant') return weights;
    const prompt = this.buildGenerationPrompt(messages.slice(0, boundary));
    const startsWithPrompt = prompt.length <= tokens.length && prompt.every((t, i) => tokens[i] === t);
    if (!startsWithPrompt) {
      if (this.disablesThinking) {
        throw new RendererError(
          `${this.name} has thinking turned off: its generation prompt closes the think block, which tells the model not to reason, and this turn contains reasoning — training on it would teach the model to reason after being told not to. Use the thinking version of this renderer, or remove the reasoning from this turn.`,
        );
      }
      return weights;
    }
    return weights.map((w, i) => (i < prompt.length ? 0 : w));
  }

  buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_turn'): SupervisedExample[] {
    if (this.hasExtensionProperty) return [this.buildSupervisedExample(messages, trainOnWhat)];
    let from: number;
    if (trainOnWhat === 'last_assistant_message') from = messages.length - 1;
    else if (trainOnWhat === 'last_assistant_turn') from = this.lastAssistantTurnStartIndex(messages);
    else if (trainOnWhat === 'all_assistant_messages') from = 0;
    else {
      throw new RendererError(
        `${this.name} renders history differently from the turn it produces, so a conversation cannot be split into one example per trained turn for train_on_what "${trainOnWhat}" (it weights messages that are not produced turns); use one of last_assistant_message, last_assistant_turn, all_assistant_messages`,
      );
    }
    const out: SupervisedExample[] = [];
    for (let i = Math.max(0, from); i < messages.length; i++) {
      if (messages[i]!.role === 'assistant') out.push(this.buildSupervisedExample(messages.slice(0, i + 1), 'last_assistant_message'));
    }
    return out;
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
