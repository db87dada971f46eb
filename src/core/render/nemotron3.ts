// The Nemotron 3 renderers (the cookbook's renderers/nemotron3.py, v0.5.5): nemotron3,
// nemotron3_low_thinking, nemotron3_disable_thinking, nemotron3_preserve_thinking (Nano / Super) and
// nemotron3_ultra, _disable_thinking, _medium_thinking, _preserve_thinking (Ultra, 3.5 Lightning).
// Qwen3.5's layout with Nemotron's differences: an (empty) system message always; `<think></think>`
// on every assistant turn whose reasoning is not shown; one newline after `</think>` (none for
// Ultra); tool results end with a newline; tools declared in XML after the system prompt; thinking
// off is `<think></think>` with no newlines; low / medium effort appended to the last user message.
import { RendererError } from './errors';
import type { RenderContext, RenderedMessage } from './layout';
import { pyJsonDumps, pyStrip } from './parsing';
import { pyStr, pyStrMember } from './pyJson';
import { hasThinking, hasThinkingPart, Qwen35Renderer, xmlToolInstructions, type Content } from './qwen35';
import type { Message, Role, SupervisedExample, Tokenizer, ToolSpec, TrainOnWhat } from './types';

export interface Nemotron3Options {
  /** Ultra / 3.5 Lightning formatting */
  ultra?: boolean;
  thinkingDisabled?: boolean;
  /** keep earlier turns' reasoning (HF truncate_history_thinking=false) */
  preserveThinking?: boolean;
  /** low (Super) or medium (Ultra, "efficient") reasoning effort, appended to the last user message */
  effort?: 'low' | 'medium';
}

/** `render_extra_keys`: keys beyond the handled ones as `<key>value</key>` (JSON for objects and lists). */
function extraKeys(obj: Record<string, unknown>, handled: readonly string[]): string[] {
  return Object.entries(obj)
    .filter(([k]) => !handled.includes(k))
    .map(([k, v]) => `<${k}>${typeof v === 'object' && v !== null ? pyJsonDumps(v) : pyStrMember(obj, k)}</${k}>`);
}

/** One tool in Nemotron 3's XML declaration (the cookbook's `_format_nemotron3_tool_declaration`). */
export function nemotronToolDeclaration(tool: ToolSpec): string {
  const lines = ['<function>', `<name>${tool.name}</name>`];
  if (pyStrip(tool.description ?? '')) lines.push(`<description>${pyStrip(tool.description)}</description>`);
  lines.push('<parameters>');
  const params = (tool.parameters ?? {}) as Record<string, unknown>;
  const props = params.properties;
  if (typeof props === 'object' && props !== null) {
    for (const [name, raw] of Object.entries(props as Record<string, unknown>)) {
      const f = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
      lines.push('<parameter>', `<name>${name}</name>`);
      if ('type' in f) lines.push(`<type>${pyStr(f.type)}</type>`);
      if ('description' in f) lines.push(`<description>${pyStrip(String(f.description))}</description>`);
      if ('enum' in f) lines.push(`<enum>${pyJsonDumps(f.enum)}</enum>`);
      for (const l of extraKeys(f, ['name', 'type', 'description', 'enum'])) lines.push(l);
      lines.push('</parameter>');
    }
  }
  for (const l of extraKeys(params, ['type', 'properties', 'required'])) lines.push(l);
  if ('required' in params) lines.push(`<required>${pyJsonDumps(params.required)}</required>`);
  lines.push('</parameters>', '</function>');
  return lines.join('\n');
}

export class Nemotron3Renderer extends Qwen35Renderer {
  private readonly ultra: boolean;
  private readonly effort: 'low' | 'medium' | undefined;

  constructor(tokenizer: Tokenizer, name: string, opts: Nemotron3Options = {}) {
    super(tokenizer, name, { thinkingDisabled: opts.thinkingDisabled ?? false, stripThinkingFromHistory: !(opts.preserveThinking ?? false) });
    this.ultra = opts.ultra ?? false;
    this.effort = opts.effort;
  }

  /** The template always writes a system block: an empty one when the conversation has none. */
  private withSystem(messages: readonly Message[]): Message[] {
    return messages.length && messages[0]!.role === 'system' ? [...messages] : [{ role: 'system', content: '' }, ...messages];
  }

  override buildGenerationPrompt(messages: readonly Message[], role: Role = 'assistant', prefill?: string): number[] {
    return super.buildGenerationPrompt(this.withSystem(messages), role, prefill);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.withSystem(messages), trainOnWhat);
  }

  /** The produced turn's prompt (as Qwen3.5: `<think>\n`), whatever the thinking mode. */
  protected override generationSuffixStr(role: Role, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n<think>\n`;
  }

  protected override generationSuffix(role: Role, ctx: RenderContext): number[] {
    if (!this.disablesThinking) return super.generationSuffix(role, ctx);
    return this.encode(`${ctx.idx > 0 ? '\n' : ''}<|im_start|>${role}\n<think></think>`);
  }

  protected override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    let m = message;
    if (this.effort && m.role === 'user' && ctx.idx === ctx.lastUserIndex) {
      if (m.thinking !== undefined) throw new RendererError(`${this.name}: the reasoning-effort mode is text-only, and the last user message carries reasoning`);
      m = { ...m, content: `${m.content}\n\n{reasoning effort: ${this.effort === 'low' ? 'low' : 'efficient'}}` };
    }
    // reasoning is stripped only before the last user message (the template's truncate_history_thinking)
    const c = m.role === 'assistant' && ctx.idx >= ctx.lastUserIndex && !ctx.isLast ? { ...ctx, isLast: true } : ctx;
    return super.renderMessage(m, c);
  }

  protected override assistantHeaderSuffix(message: Message, content: Content, ctx: RenderContext): string {
    const historical = ctx.idx < ctx.lastUserIndex;
    const think = hasThinking(content);
    if (think && (!historical || !this.stripThinkingFromHistory)) return '';
    if (!this.ultra && historical && think) {
      const text = typeof content !== 'string' && content.some((p) => p.type === 'text' && p.text !== '');
      if (text && !message.tool_calls?.length) return '<think></think>\n';
    }
    return '<think></think>';
  }

  protected override formatThinkingText(thinking: string): string {
    return this.ultra ? `<think>\n${thinking}</think>` : `<think>\n${thinking}\n</think>\n`;
  }

  protected override wrapToolResponse(text: string): string {
    return `<tool_response>\n${text}\n</tool_response>\n`;
  }

  protected override toolResponseContinuationHeader(): string {
    return '';
  }

  protected override formatToolCalls(message: Message, content: Content): string {
    const calls = (message.tool_calls ?? []).map((c) => `${this.formatToolCallXml(c)}\n`).join('');
    if (this.ultra) return `\n${calls}`;
    const text = typeof content !== 'string' && content.some((p) => p.type === 'text' && p.text !== '');
    return (hasThinkingPart(content) && !text ? '' : '\n') + calls;
  }

  protected override stripSeparatorAfterThinking(text: string): string {
    // one newline (Nano / Super), then Qwen3.5's two
    const t = !this.ultra && text.startsWith('\n') ? text.slice(1) : text;
    return super.stripSeparatorAfterThinking(t);
  }

  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt = ''): Message[] {
    let content = systemPrompt;
    if (tools.length) {
      const toolsText = `# Tools\n\nYou have access to the following functions:\n\n<tools>\n${tools.map(nemotronToolDeclaration).join('\n')}\n</tools>\n\n${xmlToolInstructions()}`;
      content = systemPrompt ? `${systemPrompt}\n\n${toolsText}` : toolsText;
    }
    return [{ role: 'system', content }];
  }
}
