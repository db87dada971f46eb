// How a chat message with reasoning and tool calls is shown: the one set of formatting rules the
// webviews (webview/shared/messageView.ts builds the DOM from them) and the host's text documents
// (sample documents, diffs, the playground's sample documents) follow. Pure and zod-free: the webviews
// import it. A tool call whose arguments are not a JSON object is shown as written and flagged, never
// thrown; a call the renderer could not parse at all (`unparsed_tool_calls`) is shown with why.
import type { ChatMessage, ToolCall, UnparsedToolCall } from './chatMessage';

/** The parts of a message the formatting reads (sample records and playground samples carry these). */
export type MessageLike = Pick<ChatMessage, 'role' | 'content'> & Partial<Pick<ChatMessage, 'thinking' | 'tool_calls' | 'unparsed_tool_calls' | 'tool_call_id' | 'name'>>;

export interface FormattedToolCall {
  /** the function's name */
  name: string;
  /** the call's id, when the model's format or the data has one */
  id?: string;
  /** the arguments pretty-printed (2-space JSON), or as written when they are not JSON */
  arguments: string;
  /** why the arguments are shown as written: not JSON, or JSON that is not an object */
  problem?: string;
}

/** The arguments of a call pretty-printed, or as written with the reason they could not be. */
export function formatArguments(text: string): { text: string; problem?: string } {
  if (text.trim() === '') return { text: '{}' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { text, problem: `the arguments are not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  const pretty = JSON.stringify(value, null, 2);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { text: pretty, problem: 'the arguments are not a JSON object' };
  return { text: pretty };
}

export function formatToolCall(call: ToolCall): FormattedToolCall {
  const args = formatArguments(call.function.arguments);
  return {
    name: call.function.name,
    ...(call.id ? { id: call.id } : {}),
    arguments: args.text,
    ...(args.problem ? { problem: args.problem } : {}),
  };
}

/** The one-line heading of a call: `add(…)` with its id, as the views title it. */
export function toolCallTitle(call: Pick<FormattedToolCall, 'name' | 'id'>): string {
  return `${call.name}${call.id ? `  · id ${call.id}` : ''}`;
}

/** The folded summary line of a reasoning block: how long it is, so its size shows while folded. */
export function thinkingSummary(thinking: string): string {
  const words = thinking.trim() === '' ? 0 : thinking.trim().split(/\s+/).length;
  return `Thinking · ${words} word${words === 1 ? '' : 's'}`;
}

/** What a tool result answers: `Result of add · id call_1`. */
export function toolResultTitle(m: Pick<MessageLike, 'name' | 'tool_call_id'>): string {
  const of = m.name ? ` of ${m.name}` : '';
  return `Tool result${of}${m.tool_call_id ? ` · id ${m.tool_call_id}` : ''}`;
}

/** A message's display: its parts in the order they are shown (reasoning, text, calls, malformed calls). */
export interface MessageDisplay {
  role: string;
  thinking?: string;
  content: string;
  toolCalls: FormattedToolCall[];
  unparsed: UnparsedToolCall[];
  /** set for a tool result */
  toolResult?: string;
}

export function messageDisplay(m: MessageLike): MessageDisplay {
  return {
    role: m.role,
    ...(m.thinking !== undefined && m.thinking !== '' ? { thinking: m.thinking } : {}),
    content: m.content,
    toolCalls: (m.tool_calls ?? []).map(formatToolCall),
    unparsed: m.unparsed_tool_calls ?? [],
    ...(m.role === 'tool' ? { toolResult: toolResultTitle(m) } : {}),
  };
}

/** Whether a message has more than its text: reasoning, tool calls (parsed or not), or is a tool result. */
export function hasStructure(m: MessageLike): boolean {
  return (m.thinking !== undefined && m.thinking !== '') || !!m.tool_calls?.length || !!m.unparsed_tool_calls?.length || m.role === 'tool';
}

/** `  ` before every line of `text`. */
function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? l : by + l))
    .join('\n');
}

/**
 * A message as plain text for the read-only documents and diffs: the reasoning under its own heading
 * (diffs line up section by section), the text, then each call as `name` and its pretty JSON, each
 * malformed call flagged with why. `level` is the heading level of the sections (`###` under a
 * document's `##`).
 */
export function messageText(m: MessageLike, level = 3): string {
  const d = messageDisplay(m);
  const h = '#'.repeat(level);
  const out: string[] = [];
  if (d.toolResult) out.push(`${h} ${d.toolResult.toLowerCase()}`);
  if (d.thinking !== undefined) out.push(`${h} thinking`, d.thinking, `${h} answer`);
  out.push(d.content);
  d.toolCalls.forEach((c, i) => {
    out.push(`${h} tool call ${i + 1}: ${toolCallTitle(c)}${c.problem ? `  ⚠ ${c.problem}` : ''}`, indent(c.arguments));
  });
  d.unparsed.forEach((u, i) => {
    out.push(`${h} ⚠ malformed tool call ${i + 1}: ${u.error}`, indent(u.raw_text));
  });
  return out.join('\n');
}
