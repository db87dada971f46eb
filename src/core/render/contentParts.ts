// Messages as the cookbook's renderers see them: `content` a string, or — when the message has
// reasoning — a list of a thinking part and a text part (none when the text is empty), the one
// mapping the goldens' generator uses too (scripts/renderer-goldens/generate.py, to_cookbook). Parsed
// parts come back as our message: thinking parts joined into `thinking`, text parts into `content`.
import type { Message, ToolCall, UnparsedToolCall } from './types';

export type TextPart = { type: 'text'; text: string };
export type ThinkingPart = { type: 'thinking'; thinking: string };
export type ContentPart = TextPart | ThinkingPart;
export type Content = string | ContentPart[];

export function partsOf(m: Message): Content {
  if (m.thinking === undefined) return m.content;
  const parts: ContentPart[] = [{ type: 'thinking', thinking: m.thinking }];
  if (m.content) parts.push({ type: 'text', text: m.content });
  return parts;
}

/** The cookbook's `has_thinking`: a thinking part, or an opening `<think>` in string content. */
export function hasThinking(content: Content): boolean {
  return typeof content === 'string' ? content.includes('<think>') : content.some((p) => p.type === 'thinking');
}

export function hasThinkingPart(content: Content): boolean {
  return typeof content !== 'string' && content.some((p) => p.type === 'thinking');
}

export function textOf(content: Content): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

export function thinkingOf(content: Content): string {
  return typeof content === 'string' ? '' : content.map((p) => (p.type === 'thinking' ? p.thinking : '')).join('');
}

/** Parsed parts back into our message. */
export function messageFromParts(content: Content, extra: { tool_calls?: ToolCall[]; unparsed_tool_calls?: UnparsedToolCall[] } = {}): Message {
  const out: Message = { role: 'assistant', content: textOf(content) };
  if (hasThinkingPart(content)) out.thinking = thinkingOf(content);
  if (extra.tool_calls?.length) out.tool_calls = extra.tool_calls;
  if (extra.unparsed_tool_calls?.length) out.unparsed_tool_calls = extra.unparsed_tool_calls;
  return out;
}

/** The cookbook's `detect_unterminated_tool_block`. */
export function unterminatedToolBlock(content: string, open: string, close: string): UnparsedToolCall | undefined {
  const opens = content.split(open).length - 1;
  if (opens === 0 || opens <= content.split(close).length - 1) return undefined;
  return {
    raw_text: content.slice(content.lastIndexOf(open)).slice(0, 16384),
    error: `unterminated tool block: '${open}' opened without a matching '${close}'`,
  };
}

/** The cookbook's `parse_think_blocks`: `<think>…</think>` into parts, whitespace kept; undefined when none. */
export function parseThinkBlocks(content: string): ContentPart[] | undefined {
  if (!content.includes('<think>')) return undefined;
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

/** Python's str.strip() of whitespace. */
export function pyStrip(s: string): string {
  return s.replace(/^\s+|\s+$/g, '');
}

/** Python's str.strip(ch) of one character. */
export function stripChar(s: string, ch: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s[a] === ch) a++;
  while (b > a && s[b - 1] === ch) b--;
  return s.slice(a, b);
}
