// kimi_k2, kimi_k25, kimi_k25_disable_thinking, kimi_k26, kimi_k26_disable_thinking and
// kimi_k26_preserve_thinking (the cookbook's renderers/kimi_k2.py, kimi_k25.py, kimi_k26.py, v0.5.5).
// `<|im_user|>user<|im_middle|>…<|im_end|>` turns; a default system prompt when the conversation has
// none; every assistant turn opens a think block, empty outside the produced turn (which spans the
// whole assistant/tool exchange after the last assistant message without tool calls) unless
// reasoning is preserved; tool calls in `<|tool_calls_section_begin|>` sections with
// `functions.name:i` ids; tool results as `## Return of <id>`. K2.5 and K2.6 prefill `<think>`
// (`<think></think>` with thinking off) and declare tools in TypeScript style; K2.6 is K2.5's renderer.
import { RendererError } from './errors';
import { kimiToolsTypescript } from './kimiToolDeclaration';
import { LayoutRenderer, parseOnStopToken, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import { detectUnterminatedToolBlock, messageFromParts, parseThinkBlocks, pyJsonDumps } from './parsing';
import { copyNumberForms } from './pyJson';
import type { Message, ParsedResponse, Role, StopSequences, SupervisedExample, Tokenizer, ToolCall, ToolSpec, TrainOnWhat, UnparsedToolCall } from './types';

export const KIMI_DEFAULT_SYSTEM_PROMPT = 'You are Kimi, an AI assistant created by Moonshot AI.';

const SECTION = /<\|tool_calls_section_begin\|>([\s\S]*?)<\|tool_calls_section_end\|>|<\|tool_call_section_begin\|>([\s\S]*?)<\|tool_call_section_end\|>/;
const CALL = /<\|tool_call_begin\|>\s*([^<]+:\d+)\s*<\|tool_call_argument_begin\|>\s*([\s\S]*?)\s*<\|tool_call_end\|>/g;

/** `functions.get_weather:0` → `get_weather` */
function toolName(id: string): string {
  if (!id) return '';
  let name = id.split(':')[0]!;
  const dot = name.indexOf('.');
  if (dot >= 0) name = name.slice(dot + 1);
  return name;
}

/** Keys sorted at every level (Python's sort_keys). */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out = v.map(sortKeys);
    copyNumberForms(v, out);
    return out;
  }
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    copyNumberForms(v, out);
    return out;
  }
  return v;
}

export interface KimiOptions {
  /** K2.5 / K2.6: prefill `<think>` (or `<think></think>` with thinking off), TypeScript tool declarations */
  k25?: boolean;
  thinkingDisabled?: boolean;
  /** keep earlier turns' reasoning (kimi_k26_preserve_thinking); default: emptied */
  preserveThinking?: boolean;
}

export class KimiRenderer extends LayoutRenderer {
  override readonly supportsTools = true;
  protected override readonly disablesThinking: boolean;
  private readonly imEnd: number;
  private readonly thinkOpen: number | undefined;
  private readonly thinkClose: number | undefined;
  private readonly k25: boolean;
  private readonly strip: boolean;

  constructor(
    tokenizer: Tokenizer,
    readonly name: string,
    opts: KimiOptions = {},
  ) {
    super(tokenizer);
    this.k25 = opts.k25 ?? false;
    this.disablesThinking = opts.thinkingDisabled ?? false;
    this.strip = !(opts.preserveThinking ?? false);
    this.imEnd = singleSpecialToken(tokenizer, '<|im_end|>', name);
    for (const t of ['<|im_user|>', '<|im_assistant|>', '<|im_system|>', '<|im_middle|>']) singleSpecialToken(tokenizer, t, name);
    if (this.k25) {
      this.thinkOpen = singleSpecialToken(tokenizer, '<think>', name);
      this.thinkClose = singleSpecialToken(tokenizer, '</think>', name);
    }
  }

  private encode(text: string): number[] {
    return this.tokenizer.encodeWithSpecialTokens(text);
  }

  /** The default system message, placed as Kimi's chat template places it (after a tool declaration). */
  private withSystem(messages: readonly Message[]): Message[] {
    const sys: Message = { role: 'system', content: KIMI_DEFAULT_SYSTEM_PROMPT };
    if (!messages.length) return [sys];
    if (messages[0]!.role === 'tool_declare') {
      if (messages.length >= 2 && messages[1]!.role === 'system') return [...messages];
      return [messages[0]!, sys, ...messages.slice(1)];
    }
    if (messages[0]!.role !== 'system') return [sys, ...messages];
    return [...messages];
  }

  override buildGenerationPrompt(messages: readonly Message[], role: Role = 'assistant', prefill?: string): number[] {
    const fill = this.k25 ? (this.disablesThinking ? '<think></think>' : '<think>') + (prefill ?? '') : prefill;
    return super.buildGenerationPrompt(this.withSystem(messages), role, fill);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.withSystem(messages), trainOnWhat);
  }

  /**
   * The cookbook's Kimi split: the last turn as one example, or one example per user turn (each
   * trained on its last assistant turn for all_assistant_messages, else with the mode given).
   */
  override buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_turn'): SupervisedExample[] {
    if (trainOnWhat === 'last_assistant_message' || trainOnWhat === 'last_assistant_turn') return [this.buildSupervisedExample(messages, trainOnWhat)];
    const users = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
    return [...users.slice(1), messages.length].map((end) =>
      this.buildSupervisedExample(messages.slice(0, end), trainOnWhat === 'all_assistant_messages' ? 'last_assistant_turn' : trainOnWhat),
    );
  }

  /** The produced turn starts after the last assistant message that called no tool. */
  protected override lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role === 'assistant' && !m.tool_calls?.length) return i + 1;
    }
    return 0;
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const role = message.role;
    let header: string;
    if (role === 'user') header = `<|im_user|>${role}<|im_middle|>`;
    else if (role === 'assistant') header = `<|im_assistant|>${role}<|im_middle|>`;
    else if (role === 'tool') {
      // as the cookbook (and Kimi's template): the function's name, else "tool"; the call id, else empty
      header = `<|im_system|>${message.name || 'tool'}<|im_middle|>## Return of ${message.tool_call_id ?? ''}\n`;
    } else header = `<|im_system|>${role}<|im_middle|>`;
    let out: string;
    if (role === 'assistant') {
      const thinking = message.thinking ?? '';
      out = (ctx.inLastAssistantTurn || !this.strip) && thinking ? `<think>${thinking}</think>` : '<think></think>';
      out += message.content;
      const calls = message.tool_calls ?? [];
      if (calls.length) {
        out += '<|tool_calls_section_begin|>';
        calls.forEach((c, i) => {
          out += `<|tool_call_begin|>${c.id || `functions.${c.function.name}:${i}`}<|tool_call_argument_begin|>${c.function.arguments}<|tool_call_end|>`;
        });
        out += '<|tool_calls_section_end|>';
      }
      out += '<|im_end|>';
    } else {
      if (message.thinking !== undefined) {
        throw new RendererError(`${this.name}: a ${role} message cannot carry reasoning (the cookbook's Kimi renderers render reasoning only on assistant messages)`);
      }
      out = `${message.content}<|im_end|>`;
    }
    return { header: this.encode(header), output: this.encode(out) };
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.imEnd] };
  }

  parseResponse(raw: readonly number[]): ParsedResponse {
    let tokens = [...raw];
    // K2.5: the prompt's prefilled <think> put back when the reply closes a block
    if (this.thinkOpen !== undefined && tokens.length && tokens[0] !== this.thinkOpen && tokens.includes(this.thinkClose!)) tokens = [this.thinkOpen, ...tokens];
    const { content, termination } = parseOnStopToken(tokens, this.tokenizer, this.imEnd);
    if (termination !== 'stop_sequence') return { message: { role: 'assistant', content }, termination };
    let text = content;
    const calls: ToolCall[] = [];
    const unparsed: UnparsedToolCall[] = [];
    const section = SECTION.exec(content);
    if (section) {
      text = content.slice(0, section.index);
      for (const m of (section[1] ?? section[2]!).matchAll(CALL)) {
        const id = m[1]!.trim();
        const args = m[2]!.trim();
        try {
          JSON.parse(args);
          calls.push({ type: 'function', ...(id ? { id } : {}), function: { name: toolName(id), arguments: args } });
        } catch (e) {
          unparsed.push({ raw_text: m[0], error: `Invalid JSON: ${e instanceof Error ? e.message : String(e)}` });
        }
      }
    }
    for (const [open, close] of [
      ['<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'],
      ['<|tool_call_section_begin|>', '<|tool_call_section_end|>'],
      ['<|tool_call_begin|>', '<|tool_call_end|>'],
    ] as const) {
      const dangling = detectUnterminatedToolBlock(content, open, close);
      if (dangling) {
        unparsed.push(dangling);
        break;
      }
    }
    const extra = { ...(calls.length ? { tool_calls: calls } : {}), ...(unparsed.length ? { unparsed_tool_calls: unparsed } : {}) };
    const parts = parseThinkBlocks(text);
    return { message: parts ? messageFromParts(parts, extra) : { role: 'assistant', content: text, ...extra }, termination };
  }

  /** A `tool_declare` message (JSON for K2, TypeScript style for K2.5/K2.6), then the system prompt. */
  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt = ''): Message[] {
    const out: Message[] = [];
    if (tools.length) {
      const payload = tools.map((t) => ({ type: 'function', function: t }));
      const content = this.k25 ? kimiToolsTypescript(payload) : pyJsonDumps(sortKeys(payload), { itemSeparator: ',', keySeparator: ':' });
      out.push({ role: 'tool_declare', content });
    }
    out.push({ role: 'system', content: systemPrompt || KIMI_DEFAULT_SYSTEM_PROMPT });
    return out;
  }
}
