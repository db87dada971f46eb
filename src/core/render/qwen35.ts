// qwen3_5, qwen3_5_disable_thinking and the qwen3_8_* renderers (tinker_cookbook/renderers/
// qwen3_5.py, qwen3_8.py and the Qwen3-VL renderer they build on, v0.5.5). <|im_start|>/<|im_end|>
// turns; the turn being produced opens with `<think>\n` (or the closed empty block when thinking
// is off); assistant turns after the last user message carry an empty think block when they did not
// reason; tool calls in Qwen3.5's XML (`<function=…><parameter=…>`); a run of tool results shares
// one user block. Qwen3.8 adds a reasoning-effort sentence to the system message, keeps reasoning
// in history and renders no empty system message. Vision parts are out of scope (text messages).
import { RendererError } from './errors';
import { LayoutRenderer, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import { contentParts, detectUnterminatedToolBlock, isToolCall, messageFromParts, parseContentBlocks, pyJsonDumps, pyStrip, stripChars, type ContentPart } from './parsing';
import { assignParsedJson, parseJsonKeepingNumbers, pyJsonDumpsMember, pyStrMember } from './pyJson';
import { unframeThinking } from './qwen3';
import type { Message, ParsedResponse, Role, StopSequences, SupervisedExample, Tokenizer, ToolCall, ToolSpec, TrainOnWhat, UnparsedToolCall } from './types';

const UNTERMINATED = 'unterminated tool block';

/** A message's content as the cookbook sees it: a string, or thinking and text parts. */
export type Content = string | ContentPart[];

export function contentOf(m: Message): Content {
  return contentParts(m) ?? m.content;
}

/** The cookbook's `has_thinking`: a thinking part, or an opening `<think>` in string content. */
export function hasThinking(content: Content): boolean {
  return typeof content === 'string' ? content.includes('<think>') : content.some((p) => p.type === 'thinking');
}

export function hasThinkingPart(content: Content): boolean {
  return typeof content !== 'string' && content.some((p) => p.type === 'thinking');
}

const FUNCTION_BLOCK = /^\s*<tool_call>\s*<function=([^>\n]+)>\s*([\s\S]*?)\s*<\/function>\s*<\/tool_call>\s*$/;
const PARAM_BLOCK = /<parameter=([^>\n]+)>\s*([\s\S]*?)\s*<\/parameter>/g;

/** A Qwen3.5 XML tool call (`<function=name><parameter=p>value</parameter></function>`). */
export function parseXmlToolCall(raw: string): ToolCall | UnparsedToolCall {
  const m = FUNCTION_BLOCK.exec(raw);
  if (!m) return { raw_text: raw, error: 'Malformed Qwen3.5 tool call XML' };
  const name = pyStrip(m[1]!);
  const body = m[2]!;
  if (!name) return { raw_text: raw, error: 'Missing function name' };
  const args: Record<string, unknown> = {};
  let pos = 0;
  for (const p of body.matchAll(PARAM_BLOCK)) {
    if (pyStrip(body.slice(pos, p.index))) return { raw_text: raw, error: 'Unexpected non-parameter content inside <function> block' };
    const pname = pyStrip(p[1]!);
    const text = stripChars(p[2]!, '\\n');
    if (!pname) return { raw_text: raw, error: 'Empty parameter name' };
    try {
      assignParsedJson(args, pname, text);
    } catch {
      args[pname] = text;
    }
    pos = p.index + p[0].length;
  }
  if (pyStrip(body.slice(pos))) return { raw_text: raw, error: 'Unexpected trailing content inside <function> block' };
  return { type: 'function', function: { name, arguments: pyJsonDumps(args) } };
}

const QWEN35_TOOL_INSTRUCTIONS =
  'If you choose to call a function ONLY reply in the following format with NO suffix:\n\n' +
  '<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n' +
  '<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n' +
  '</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n' +
  '- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n' +
  '- Required parameters MUST be specified\n' +
  '- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n' +
  '- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n' +
  '</IMPORTANT>';

/** The part of the Qwen3.5 / Nemotron tool prompt after the declarations. */
export function xmlToolInstructions(): string {
  return QWEN35_TOOL_INSTRUCTIONS;
}

export interface Qwen35Options {
  thinkingDisabled?: boolean;
  /** strip reasoning from earlier assistant turns (Qwen3.5's default; Qwen3.8 keeps it) */
  stripThinkingFromHistory?: boolean;
}

export class Qwen35Renderer extends LayoutRenderer {
  readonly name: string;
  override readonly supportsTools = true;
  protected override readonly disablesThinking: boolean;
  protected readonly stripThinkingFromHistory: boolean;
  protected readonly imEnd: number;
  private readonly thinkClose: number;

  constructor(tokenizer: Tokenizer, name: string, opts: Qwen35Options = {}) {
    super(tokenizer);
    this.name = name;
    this.disablesThinking = opts.thinkingDisabled ?? false;
    this.stripThinkingFromHistory = opts.stripThinkingFromHistory ?? true;
    this.imEnd = singleSpecialToken(tokenizer, '<|im_end|>', name);
    this.thinkClose = singleSpecialToken(tokenizer, '</think>', name);
    singleSpecialToken(tokenizer, '<|im_start|>', name);
  }

  /** Qwen3's rule: history renders as the produced turn only when reasoning is kept in it. */
  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  protected encode(text: string): number[] {
    return this.tokenizer.encodeWithSpecialTokens(text);
  }

  // ---- hooks the Qwen3.8 and Nemotron renderers override (the cookbook's method names) ----

  /** `_generation_suffix_str`: the header the prompt ends with, `<think>` prefill included */
  protected generationSuffixStr(role: Role, ctx: RenderContext): string {
    const nl = ctx.idx > 0 ? '\n' : '';
    return this.disablesThinking ? `${nl}<|im_start|>${role}\n<think>\n\n</think>\n\n` : `${nl}<|im_start|>${role}\n<think>\n`;
  }

  /** `_assistant_header_suffix` */
  protected assistantHeaderSuffix(message: Message, content: Content, ctx: RenderContext): string {
    if (ctx.idx <= ctx.lastUserIndex) return '';
    return hasThinking(content) ? '' : '<think>\n\n</think>\n\n';
  }

  /** `_format_thinking_text` */
  protected formatThinkingText(thinking: string): string {
    return `<think>\n${thinking}\n</think>\n\n`;
  }

  /** `_strips_thinking_for` */
  protected stripsThinkingFor(message: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && message.role === 'assistant' && !ctx.isLast;
  }

  /** `_wrap_qwen_tool_response_chunks` */
  protected wrapToolResponse(text: string): string {
    return `<tool_response>\n${text}\n</tool_response>`;
  }

  /** `_tool_response_continuation_header` */
  protected toolResponseContinuationHeader(): string {
    return '\n';
  }

  /** `_format_tool_call_argument`: Qwen3.5 writes scalars with Python's str() (True, None) */
  protected formatToolCallArgument(args: Record<string, unknown>, key: string): string {
    const value = args[key];
    if (typeof value === 'object' && value !== null) return pyJsonDumps(value);
    return pyStrMember(args, key);
  }

  protected formatToolCallXml(call: ToolCall): string {
    let args: Record<string, unknown> = {};
    if (call.function.arguments) {
      try {
        args = parseJsonKeepingNumbers(call.function.arguments) as Record<string, unknown>;
      } catch (e) {
        throw new RendererError(`${this.name}: the arguments of tool call ${call.function.name} are not JSON (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    const lines = [`<tool_call>\n<function=${call.function.name}>`];
    for (const k of Object.keys(args)) lines.push(`<parameter=${k}>\n${this.formatToolCallArgument(args, k)}\n</parameter>`);
    lines.push('</function>\n</tool_call>');
    return lines.join('\n');
  }

  /** `_format_tool_calls_chunks` */
  protected formatToolCalls(message: Message, content: Content): string {
    const visible = typeof content === 'string' ? pyStrip(content) !== '' : content.some((p) => p.type === 'text' && pyStrip(p.text) !== '');
    return (visible ? '\n\n' : '') + (message.tool_calls ?? []).map((c) => this.formatToolCallXml(c)).join('\n');
  }

  /** The message as Qwen3.5's render_message sees it (string content stripped). */
  protected contentFor(message: Message, _ctx: RenderContext): Content {
    const c = contentOf(message);
    return typeof c === 'string' ? pyStrip(c) : c;
  }

  /** `render_message` (Qwen3_5Renderer over Qwen3VLRenderer) */
  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const content = this.contentFor(message, ctx);
    const role = message.role === 'tool' ? 'user' : message.role;
    const isTool = message.role === 'tool';
    const prevIsTool = ctx.prevMessage?.role === 'tool';
    let header: string;
    if (isTool && prevIsTool) header = this.toolResponseContinuationHeader();
    else {
      header = `${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n`;
      if (message.role === 'assistant') header += this.assistantHeaderSuffix(message, content, ctx);
    }
    const strip = this.stripsThinkingFor(message, ctx);
    let text =
      typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : strip ? '' : this.formatThinkingText(p.thinking))).join('');
    if (isTool) text = this.wrapToolResponse(text);
    if (message.tool_calls !== undefined) text += this.formatToolCalls(message, content);
    if (!(isTool && ctx.nextMessage?.role === 'tool')) text += '<|im_end|>';
    let output = this.encode(text);
    // `_generation_suffix_in_header`: the prompt of the produced turn ends inside its header (after
    // the prefilled `<think>\n`), so the rest of the header is output, tokenised on its own
    const prefix = message.role === 'assistant' && ctx.isLast ? this.generationSuffixStr(role, ctx) : '';
    if (prefix && header.startsWith(prefix)) {
      const rest = header.slice(prefix.length);
      if (rest) output = [...this.encode(rest), ...output];
      header = prefix;
    }
    return { header: this.encode(header), output };
  }

  protected override generationSuffix(role: Role, ctx: RenderContext): number[] {
    return this.encode(this.generationSuffixStr(role, ctx));
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.imEnd] };
  }

  /** `_normalize_response_tokens`: the prompt's `<think>\n` put back when the reply closes a block */
  private normalizeResponse(tokens: readonly number[]): number[] {
    const prefix = this.encode('<think>\n');
    const starts = tokens.length >= prefix.length && prefix.every((t, i) => tokens[i] === t);
    return !starts && tokens.includes(this.thinkClose) ? [...prefix, ...tokens] : [...tokens];
  }

  parseResponse(raw: readonly number[]): ParsedResponse {
    const tokens = this.normalizeResponse(raw);
    const count = tokens.filter((t) => t === this.imEnd).length;
    if (count === 0) return { message: { role: 'assistant', content: this.tokenizer.decode(tokens) }, termination: 'malformed' };
    if (count > 1) {
      throw new RendererError(`expected at most one <|im_end|> in a sampled response, got ${count}: wrong stop tokens when sampling? Use the renderer's stopSequences().`);
    }
    const text = this.tokenizer.decode(tokens.slice(0, tokens.indexOf(this.imEnd)));
    let parts: Content = text;
    let calls: ToolCall[] = [];
    let unparsed: UnparsedToolCall[] = [];
    const blocks = parseContentBlocks(text);
    if (blocks) {
      parts = unframeThinking(blocks.parts);
      calls = blocks.calls.filter(isToolCall);
      unparsed = blocks.calls.filter((c): c is UnparsedToolCall => !isToolCall(c));
    }
    const dangling = detectUnterminatedToolBlock(text, '<tool_call>', '</tool_call>');
    if (dangling) unparsed.push(dangling);
    parts = this.postprocessParts(parts);
    // Qwen3.5's calls are XML: the JSON parser left them unparsed, convert them here
    const remaining: UnparsedToolCall[] = [];
    for (const u of unparsed) {
      if (u.error.startsWith(UNTERMINATED) || !u.raw_text.includes('<function=')) {
        remaining.push(u);
        continue;
      }
      const p = parseXmlToolCall(u.raw_text);
      if (isToolCall(p)) calls.push(p);
      else remaining.push(p);
    }
    const extra = { ...(calls.length ? { tool_calls: calls } : {}), ...(remaining.length ? { unparsed_tool_calls: remaining } : {}) };
    const message: Message = typeof parts === 'string' ? { role: 'assistant', content: parts, ...extra } : messageFromParts(parts, extra);
    return { message, termination: 'stop_sequence' };
  }

  /** `_postprocess_parsed_message` on the content: reasoning trimmed, the separator after it removed */
  protected postprocessParts(content: Content): Content {
    if (typeof content === 'string') return content;
    let seenThinking = false;
    let firstTextDone = false;
    return content.map((p) => {
      if (p.type === 'thinking') {
        seenThinking = true;
        return { type: 'thinking', thinking: pyStrip(p.thinking) };
      }
      if (seenThinking && !firstTextDone) {
        firstTextDone = true;
        return { type: 'text', text: this.stripSeparatorAfterThinking(p.text) };
      }
      return p;
    });
  }

  protected stripSeparatorAfterThinking(text: string): string {
    return text.startsWith('\n\n') ? text.slice(2) : text;
  }

  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt = ''): Message[] {
    let content = systemPrompt;
    if (tools.length) {
      const decl = tools.map((t) => pyJsonDumps(t)).join('\n');
      const toolsText = `# Tools\n\nYou have access to the following functions:\n\n<tools>\n${decl}\n</tools>\n\n${QWEN35_TOOL_INSTRUCTIONS}`;
      content = systemPrompt ? `${toolsText}\n\n${systemPrompt}` : toolsText;
    }
    return [{ role: 'system', content }];
  }
}

export type Qwen38Effort = 'xhigh' | 'medium' | 'low';

const EFFORT_INSTRUCTIONS: Readonly<Record<Qwen38Effort, string>> = {
  xhigh:
    'Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, consider plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer.',
  medium: '',
  low: 'Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without unnecessary elaboration.',
};

export class Qwen38Renderer extends Qwen35Renderer {
  constructor(
    tokenizer: Tokenizer,
    readonly effort: Qwen38Effort | 'disabled',
  ) {
    super(tokenizer, effort === 'disabled' ? 'qwen3_8_disable_thinking' : `qwen3_8_${effort}_reasoning`, {
      thinkingDisabled: effort === 'disabled',
      stripThinkingFromHistory: false,
    });
  }

  private instructions(): string {
    return this.effort === 'disabled' ? '' : EFFORT_INSTRUCTIONS[this.effort];
  }

  override buildGenerationPrompt(messages: readonly Message[], role: Role = 'assistant', prefill?: string): number[] {
    return super.buildGenerationPrompt(this.normalizeMessages(messages), role, prefill);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.normalizeMessages(messages), trainOnWhat);
  }

  /** Qwen3.8 keeps reasoning in history, but a turn that did not reason is sampled after `<think>\n` and rendered with the closed empty block. */
  override get hasExtensionProperty(): boolean {
    return false;
  }

  /** `_normalize_messages`: the effort sentence put first in the system message; an empty one dropped */
  private normalizeMessages(messages: readonly Message[]): Message[] {
    const instr = this.instructions();
    const first = messages[0];
    if (first && first.role === 'system') {
      const rest = messages.slice(1);
      if (first.thinking !== undefined) {
        // Qwen3.8's template rejects non-text system content; the cookbook passes it through
        throw new RendererError(`${this.name}: a system message cannot carry reasoning (Qwen3.8's chat template accepts only text there)`);
      }
      let content = pyStrip(first.content);
      if (!content && !instr) return rest;
      if (instr && !(content === instr || content.startsWith(`${instr}\n\n`))) content = content ? `${instr}\n\n${content}` : instr;
      return [{ ...first, content }, ...rest];
    }
    if (instr) {
      const synthetic: Message = { role: 'system', content: instr };
      if (messages.some((m) => m.trainable !== undefined)) synthetic.trainable = false;
      return [synthetic, ...messages];
    }
    return [...messages];
  }

  /** Qwen3.8 writes every non-string value with tojson (true, null) */
  protected override formatToolCallArgument(args: Record<string, unknown>, key: string): string {
    const value = args[key];
    return typeof value === 'string' ? value : pyJsonDumpsMember(args, key);
  }

  protected override stripsThinkingFor(message: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && message.role === 'assistant' && ctx.idx <= ctx.lastUserIndex;
  }

  /** Every assistant turn that did not reason gets the empty block (only reasoning parts count). */
  protected override assistantHeaderSuffix(message: Message, content: Content, ctx: RenderContext): string {
    if (this.stripThinkingFromHistory && ctx.idx <= ctx.lastUserIndex) return '';
    return hasThinkingPart(content) ? '' : '<think>\n\n</think>\n\n';
  }
}
