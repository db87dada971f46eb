// Shared pieces of the cookbook's response parsing (renderers/base.py): content as thinking/text
// parts, `<think>` and `<tool_call>` blocks, tool-call JSON and unterminated tool blocks. Tool JSON is
// read and written as Python's json does it (pyJson.ts), as the cookbook does.
import { parseJsonKeepingNumbers, pyJsonDumps } from './pyJson';
import type { Message, ToolCall, UnparsedToolCall } from './types';

export { pyJsonDumps } from './pyJson';

export type ContentPart = { type: 'thinking'; thinking: string } | { type: 'text'; text: string };

/**
 * A message's content as the cookbook's part list: its reasoning as one ThinkingPart, then its text
 * as a TextPart (none when the text is empty), or null when it has no reasoning (plain string
 * content). The one mapping between our `thinking` field and the cookbook's ThinkingPart.
 */
export function contentParts(m: Message): ContentPart[] | null {
  if (m.thinking === undefined) return null;
  return [{ type: 'thinking', thinking: m.thinking }, ...(m.content ? [{ type: 'text' as const, text: m.content }] : [])];
}

/** Parsed parts back into a message: ThinkingParts joined into `thinking`, TextParts into `content`. */
export function messageFromParts(parts: readonly ContentPart[], extra: Partial<Message> = {}): Message {
  let content = '';
  const thinking: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') content += p.text;
    else thinking.push(p.thinking);
  }
  return { role: 'assistant', content, ...(thinking.length ? { thinking: thinking.join('') } : {}), ...extra };
}

/** Python's str.strip(chars) for one character class given as a regex fragment. */
export function stripChars(s: string, chars: string): string {
  return s.replace(new RegExp(`^[${chars}]+|[${chars}]+$`, 'g'), '');
}
export function lstripChars(s: string, chars: string): string {
  return s.replace(new RegExp(`^[${chars}]+`), '');
}
export function rstripChars(s: string, chars: string): string {
  return s.replace(new RegExp(`[${chars}]+$`), '');
}

/** Python's str.strip() with no argument (Unicode whitespace). */
export function pyStrip(s: string): string {
  return s.replace(/^[\s\u001c-\u001f\u0085]+|[\s\u001c-\u001f\u0085]+$/gu, '');
}

/** The cookbook's `_tool_call_payload`: the flat {"name", "arguments"} object of a <tool_call> block. */
export function toolCallPayload(call: ToolCall): { name: string; arguments: unknown } {
  let args: unknown;
  try {
    args = parseJsonKeepingNumbers(call.function.arguments);
  } catch (e) {
    throw new TypeError(`the arguments of tool call ${call.function.name} are not JSON (${(e as Error).message}): ${call.function.arguments.slice(0, 200)}`);
  }
  return { name: call.function.name, arguments: args };
}

/** The cookbook's `_parse_tool_call_json`: a ToolCall, or an UnparsedToolCall saying why not. */
export function parseToolCallJson(json: string, rawText: string): ToolCall | UnparsedToolCall {
  let value: unknown;
  try {
    value = parseJsonKeepingNumbers(pyStrip(json));
  } catch (e) {
    return { raw_text: rawText, error: `Invalid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { raw_text: rawText, error: 'Tool call is not a JSON object' };
  const o = value as Record<string, unknown>;
  if (typeof o.name !== 'string') return { raw_text: rawText, error: "Missing or invalid 'name' field" };
  if (typeof o.arguments !== 'object' || o.arguments === null || Array.isArray(o.arguments)) return { raw_text: rawText, error: "Missing or invalid 'arguments' field" };
  return {
    type: 'function',
    ...(typeof o.id === 'string' ? { id: o.id } : {}),
    function: { name: o.name, arguments: pyJsonDumps(o.arguments) },
  };
}

export function isToolCall(x: ToolCall | UnparsedToolCall): x is ToolCall {
  return 'function' in x;
}

/**
 * The cookbook's `parse_content_blocks`: `<think>` and `<tool_call>` blocks in order; null when the
 * text has neither tag. Empty think blocks are dropped; whitespace elsewhere is kept.
 */
export function parseContentBlocks(content: string): { parts: ContentPart[]; calls: (ToolCall | UnparsedToolCall)[] } | null {
  if (!content.includes('<think>') && !content.includes('<tool_call>')) return null;
  const parts: ContentPart[] = [];
  const calls: (ToolCall | UnparsedToolCall)[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>|<tool_call>([\s\S]*?)<\/tool_call>/g)) {
    const before = content.slice(pos, m.index);
    if (before) parts.push({ type: 'text', text: before });
    if (m[1] !== undefined) {
      if (m[1]) parts.push({ type: 'thinking', thinking: m[1] });
    } else calls.push(parseToolCallJson(m[2]!, m[0]));
    pos = m.index + m[0].length;
  }
  const rest = content.slice(pos);
  if (rest) parts.push({ type: 'text', text: rest });
  return { parts, calls };
}

/** The cookbook's `parse_think_blocks`: only `<think>` blocks; null when there is none. */
export function parseThinkBlocks(content: string): ContentPart[] | null {
  if (!content.includes('<think>')) return null;
  const parts: ContentPart[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>/g)) {
    const before = content.slice(pos, m.index);
    if (before) parts.push({ type: 'text', text: before });
    if (m[1]) parts.push({ type: 'thinking', thinking: m[1] });
    pos = m.index + m[0].length;
  }
  const rest = content.slice(pos);
  if (rest) parts.push({ type: 'text', text: rest });
  return parts;
}

const DETAIL_MAX_CHARS = 16384;

/** The cookbook's `detect_unterminated_tool_block`: a tool block opened and never closed. */
export function detectUnterminatedToolBlock(content: string, open: string, close: string): UnparsedToolCall | undefined {
  const opens = content.split(open).length - 1;
  if (opens === 0 || opens <= content.split(close).length - 1) return undefined;
  return {
    raw_text: content.slice(content.lastIndexOf(open)).slice(0, DETAIL_MAX_CHARS),
    error: `unterminated tool block: '${open}' opened without a matching '${close}'`,
  };
}
