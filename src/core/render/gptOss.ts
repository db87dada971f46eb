// gpt_oss_no_sysprompt, gpt_oss_low/medium/high_reasoning: OpenAI's Harmony format
// (tinker_cookbook/renderers/gpt_oss.py, v0.5.5). `<|start|>role<|channel|>…<|message|>…<|end|>`,
// no newlines between messages; the last assistant message ends with `<|return|>`, a tool call with
// `<|call|>`; reasoning goes to the analysis channel, tool calls to commentary, the answer to final.
// As in the cookbook, reasoning is kept on every assistant message (Harmony's own template drops it
// from earlier turns), and a system message is rendered as a developer message "# Instructions".
import { RendererError } from './errors';
import { LayoutRenderer, singleSpecialToken, type RenderContext, type RenderedMessage } from './layout';
import { messageFromParts, type ContentPart } from './parsing';
import { pyJsonDumpsMember } from './pyJson';
import type { Message, ParsedResponse, Role, StopSequences, SupervisedExample, Tokenizer, ToolCall, ToolSpec, TrainOnWhat, UnparsedToolCall } from './types';

export type GptOssReasoning = 'low' | 'medium' | 'high';

/** The role the built-in system prompt and the tool-routing note render under (`system`, not developer). */
export const GPT_OSS_SYSTEM_ROLE = '_gptoss_internal_system';

type Schema = Record<string, unknown>;

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function tsType(schema: Schema): string {
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as Schema[]).map(tsType).join(' | ');
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(tsType).join(' | ');
  const t = 'type' in schema ? schema.type : 'any';
  if (Array.isArray(t)) return t.map((x) => tsType({ type: x })).join(' | ');
  let base: string;
  if (t === 'string') {
    if (Array.isArray(schema.enum)) return schema.enum.map((_, i, all) => pyJsonDumpsMember(all, i)).join(' | ');
    base = 'string';
  } else if (t === 'number' || t === 'integer') base = 'number';
  else if (t === 'boolean') base = 'boolean';
  else if (t === 'array') base = `${tsType(isObj(schema.items) ? schema.items : {})}[]`;
  else if (t === 'object') base = tsObject(schema);
  else base = 'any';
  return schema.nullable ? `${base} | null` : base;
}

function tsObject(schema: Schema): string {
  if (schema.type !== 'object') return 'any';
  const props = isObj(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return `{ ${Object.entries(props)
    .map(([name, s]) => `${name}${required.has(name) ? '' : '?'}: ${tsType(isObj(s) ? s : {})}`)
    .join(', ')} }`;
}

function comments(schema: Schema): string[] {
  const out: string[] = [];
  if (schema.title) out.push(String(schema.title), '');
  if (schema.description) out.push(String(schema.description));
  if (Array.isArray(schema.examples) && schema.examples.length) {
    out.push('Examples:');
    for (let i = 0; i < schema.examples.length; i++) out.push(`- ${pyJsonDumpsMember(schema.examples, i)}`);
  }
  return out;
}

function parametersBlock(schema: Schema): string {
  if (schema.type !== 'object' || !isObj(schema.properties) || Object.keys(schema.properties).length === 0) return '()';
  const lines: string[] = [];
  let header = '(_:';
  if (schema.description) header += ` // ${String(schema.description)}`;
  lines.push(header, '{');
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [name, raw] of Object.entries(schema.properties)) {
    const s = isObj(raw) ? raw : {};
    for (const c of comments(s)) lines.push(`// ${c}`);
    const def = 'default' in s ? ` // default: ${pyJsonDumpsMember(s, 'default')}` : '';
    lines.push(`${name}${required.has(name) ? '' : '?'}: ${tsType(s)},${def}`);
  }
  lines.push('})');
  return lines.join('\n');
}

/** One tool in Harmony's TypeScript-like declaration (the cookbook's `_format_tool_definition`). */
export function harmonyToolDefinition(tool: ToolSpec): string {
  const lines: string[] = [];
  if (tool.description) lines.push(`// ${tool.description}`);
  lines.push(`type ${tool.name} = ${parametersBlock(tool.parameters ?? {})} => any;`);
  return lines.join('\n');
}

interface HarmonyMessage {
  channel?: string;
  recipient?: string;
  content: string;
  rawText: string;
}

/** Harmony segments of decoded text (the cookbook's `_parse_harmony_messages`). */
function harmonyMessages(content: string): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  let idx = 0;
  const ends = ['<|end|>', '<|call|>', '<|return|>'];
  for (;;) {
    const messageIdx = content.indexOf('<|message|>', idx);
    if (messageIdx === -1) break;
    // Python's rfind within [idx, messageIdx): the match lies wholly inside the window
    let headerStart = messageIdx - '<|start|>'.length >= 0 ? content.lastIndexOf('<|start|>', messageIdx - '<|start|>'.length) : -1;
    if (headerStart < idx) headerStart = idx;
    const header = content.slice(headerStart, messageIdx);
    const contentStart = messageIdx + '<|message|>'.length;
    let endIdx = content.length;
    let endToken = '';
    for (const t of ends) {
      const at = content.indexOf(t, contentStart);
      if (at !== -1 && at < endIdx) {
        endIdx = at;
        endToken = t;
      }
    }
    const m: HarmonyMessage = {
      content: content.slice(contentStart, endIdx),
      rawText: endToken ? content.slice(headerStart, endIdx + endToken.length) : content.slice(headerStart),
    };
    const channel = /<\|channel\|>([^<\s]+)/.exec(header);
    if (channel) m.channel = channel[1]!;
    const recipient = /to=([^\s<]+)/.exec(header);
    if (recipient) m.recipient = recipient[1]!;
    out.push(m);
    idx = endIdx + endToken.length;
  }
  return out;
}

export class GptOssRenderer extends LayoutRenderer {
  override readonly supportsTools = true;
  readonly name: string;
  private readonly returnToken: number;
  private readonly callToken: number;

  /**
   * @param reasoning the reasoning effort of the built-in system prompt; none: no system prompt
   * @param currentDate the date the system prompt gives (YYYY-MM-DD); default today
   */
  constructor(
    tokenizer: Tokenizer,
    readonly reasoning?: GptOssReasoning,
    readonly currentDate?: string,
  ) {
    super(tokenizer);
    this.name = reasoning ? `gpt_oss_${reasoning}_reasoning` : 'gpt_oss_no_sysprompt';
    this.returnToken = singleSpecialToken(tokenizer, '<|return|>', this.name);
    this.callToken = singleSpecialToken(tokenizer, '<|call|>', this.name);
    for (const t of ['<|start|>', '<|end|>', '<|message|>', '<|channel|>']) singleSpecialToken(tokenizer, t, this.name);
  }

  private encode(text: string): number[] {
    return this.tokenizer.encodeWithSpecialTokens(text);
  }

  private systemMessage(): Message | undefined {
    if (!this.reasoning) return undefined;
    const date = this.currentDate ?? new Date().toISOString().slice(0, 10);
    return {
      role: GPT_OSS_SYSTEM_ROLE,
      content:
        'You are ChatGPT, a large language model trained by OpenAI.\n' +
        'Knowledge cutoff: 2024-06\n' +
        `Current date: ${date}\n\n` +
        `Reasoning: ${this.reasoning}\n\n` +
        '# Valid channels: analysis, commentary, final. Channel must be included for every message.',
    };
  }

  /** The built-in system prompt first, when the renderer has one (as the cookbook, on every call). */
  private withSystem(messages: readonly Message[]): Message[] {
    const sys = this.systemMessage();
    return sys ? [sys, ...messages] : [...messages];
  }

  override buildGenerationPrompt(messages: readonly Message[], role: Role = 'assistant', prefill?: string): number[] {
    return super.buildGenerationPrompt(this.withSystem(messages), role, prefill);
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = 'last_assistant_message'): SupervisedExample {
    return super.buildSupervisedExample(this.withSystem(messages), trainOnWhat);
  }

  protected renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    if (message.role === 'tool') return this.renderToolResult(message);
    const role = message.role === GPT_OSS_SYSTEM_ROLE ? 'system' : message.role === 'system' ? 'developer' : message.role;
    let out = '';
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    if (message.role === 'assistant') {
      const text = message.content;
      const thinking = message.thinking ?? '';
      if (thinking) out += `<|channel|>analysis<|message|>${thinking}<|end|><|start|>assistant`;
      if (calls.length) {
        if (text) out += `<|channel|>commentary<|message|>${text}<|end|><|start|>assistant`;
        out += calls
          .map((tc) => ` to=functions.${tc.function.name}<|channel|>commentary <|constrain|>json<|message|>${tc.function.arguments}<|call|>`)
          .join('<|start|>assistant');
      } else out += `<|channel|>final<|message|>${text}`;
      if (!calls.length) out += ctx.isLast ? '<|return|>' : '<|end|>';
    } else {
      this.textOnly(message);
      out += message.role === 'system' ? `<|message|># Instructions\n\n${message.content}\n\n` : `<|message|>${message.content}`;
      out += '<|end|>';
    }
    return { header: this.encode(`<|start|>${role}`), output: this.encode(out) };
  }

  /** The cookbook's `ensure_text`: reasoning on a non-assistant message cannot be rendered. */
  private textOnly(message: Message): void {
    if (message.thinking !== undefined) {
      throw new RendererError(`${this.name}: a ${message.role} message cannot carry reasoning (only assistant messages have an analysis channel)`);
    }
  }

  private renderToolResult(message: Message): RenderedMessage {
    // The cookbook warns and writes functions.unknown when the name is missing; we refuse.
    if (!message.name) {
      throw new RendererError(`${this.name}: a tool result needs the "name" of the function that was called (Harmony writes it as the author, functions.<name>)`);
    }
    this.textOnly(message);
    const tool = message.name.startsWith('functions.') ? message.name : `functions.${message.name}`;
    return {
      header: this.encode(`<|start|>${tool} to=assistant`),
      output: this.encode(`<|channel|>commentary<|message|>${message.content}<|end|>`),
    };
  }

  stopSequences(): StopSequences {
    return { kind: 'tokens', tokens: [this.returnToken, this.callToken] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const calls = tokens.filter((t) => t === this.callToken).length;
    const returns = tokens.filter((t) => t === this.returnToken).length;
    if (calls === 0 && returns === 0) return { message: { role: 'assistant', content: this.tokenizer.decode(tokens) }, termination: 'malformed' };
    if (calls > 1 || returns > 1) {
      throw new RendererError(
        `expected at most one <|call|> and one <|return|> in a sampled response, got ${calls} and ${returns}: wrong stop tokens when sampling? Use the renderer's stopSequences().`,
      );
    }
    let stop = returns ? tokens.indexOf(this.returnToken) : -1;
    if (calls) {
      const at = tokens.indexOf(this.callToken);
      if (stop === -1 || at < stop) stop = at;
    }
    const text = this.tokenizer.decode(tokens.slice(0, stop));
    const parts: ContentPart[] = [];
    const toolCalls: ToolCall[] = [];
    const unparsed: UnparsedToolCall[] = [];
    for (const m of harmonyMessages(text)) {
      if (!m.content.trim()) continue;
      if (m.recipient?.startsWith('functions.')) {
        const name = m.recipient.slice('functions.'.length);
        try {
          JSON.parse(m.content);
          toolCalls.push({ type: 'function', function: { name, arguments: m.content.trim() } });
        } catch (e) {
          unparsed.push({ raw_text: m.rawText, error: `Invalid JSON: ${e instanceof Error ? e.message : String(e)}` });
        }
        continue;
      }
      if (m.channel === 'analysis') parts.push({ type: 'thinking', thinking: m.content });
      else if (m.channel === 'final' || m.channel === 'commentary') parts.push({ type: 'text', text: m.content });
    }
    const intents = text.split('to=functions.').length - 1;
    if (intents > toolCalls.length + unparsed.length) {
      const start = text.lastIndexOf('<|start|>');
      unparsed.push({
        raw_text: start !== -1 ? text.slice(start) : text,
        error: "unterminated tool block: 'to=functions.' tool-call header without a parsable arguments payload",
      });
    }
    const extra = { ...(toolCalls.length ? { tool_calls: toolCalls } : {}), ...(unparsed.length ? { unparsed_tool_calls: unparsed } : {}) };
    const message: Message = parts.length ? messageFromParts(parts, extra) : { role: 'assistant', content: text, ...extra };
    return { message, termination: 'stop_sequence' };
  }

  override createConversationPrefixWithTools(tools: readonly ToolSpec[], systemPrompt = ''): Message[] {
    // The routing note renders under Harmony's own `system` role (GPT_OSS_SYSTEM_ROLE), not developer.
    const out: Message[] = [];
    if (tools.length) out.push({ role: GPT_OSS_SYSTEM_ROLE, content: "Calls to these tools must go to the commentary channel: 'functions'." });
    const parts: string[] = [];
    if (systemPrompt) parts.push(`# Instructions\n\n${systemPrompt}`);
    if (tools.length) {
      parts.push(`# Tools\n\n## functions\n\nnamespace functions {\n\n${tools.map(harmonyToolDefinition).join('\n\n')}\n\n} // namespace functions`);
    }
    if (parts.length) out.push({ role: 'developer', content: parts.join('\n\n') });
    return out;
  }
}
