// OpenAI chat messages ↔ the renderers' ChatMessage, both ways, for the engine's
// /v1/chat/completions: a request's messages, tool calls, tool results and `tools` become the
// conversation the training path renders (withTools, then buildGenerationPrompt: one code path), and a
// renderer's parsed reply becomes OpenAI's assistant message (tool_calls, reasoning_content) and the
// deltas OpenAI streams it as. No HTTP here: the route turns a ChatRequestError into a 400.
import * as z from 'zod';
import { type ChatMessage, type ToolCall, ToolSpec } from '../../protocol/chatMessage';
import { parseJsonKeepingNumbers } from '../render/pyJson';
import type { ParsedResponse } from '../render/types';

/** A request the engine cannot honour, with the body field it concerns (OpenAI's `param`). */
export class ChatRequestError extends Error {
  override name = 'ChatRequestError';
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(`${param}: ${message}`);
  }
}

export const OpenAiToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});
export type OpenAiToolCall = z.infer<typeof OpenAiToolCall>;

export const OpenAiTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    // the object as it was read (ToolSpec's check, not a copy): its recorded number forms reach the renderer
    parameters: ToolSpec.shape.parameters.nullish(),
    strict: z.boolean().nullish(),
  }),
});
export type OpenAiTool = z.infer<typeof OpenAiTool>;

export const OpenAiToolChoice = z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) })]);
export type OpenAiToolChoice = z.infer<typeof OpenAiToolChoice>;

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
export const OpenAiMessageIn = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(ContentPart)]).nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(OpenAiToolCall).nullish(),
  tool_call_id: z.string().nullish(),
  /** an earlier reply's reasoning, as this route returns it */
  reasoning_content: z.string().nullish(),
});
export type OpenAiMessageIn = z.infer<typeof OpenAiMessageIn>;

/** What a request says about tools and replies beyond the messages. */
export interface ChatToolOptions {
  tools?: readonly OpenAiTool[] | null;
  tool_choice?: OpenAiToolChoice | null;
  response_format?: { type: string } | null;
  /** whether the model's renderer has tool calling */
  supportsTools: boolean;
  rendererName: string;
}

export interface ChatConversation {
  messages: ChatMessage[];
  /** the tools to declare (none when tool_choice is "none") */
  tools: ToolSpec[] | undefined;
  /** tool_choice "none": a call the model writes anyway stays text */
  callsAsText: boolean;
}

function textOf(m: OpenAiMessageIn, i: number): string | null {
  if (m.content == null) return null;
  if (typeof m.content === 'string') return m.content;
  const other = m.content.find((p) => p.type !== 'text');
  if (other) throw new ChatRequestError(`the local engine's models take text only (got a "${other.type}" part)`, `messages.${i}.content`);
  return m.content.map((p) => p.text ?? '').join('');
}

/**
 * The arguments of a call must be a JSON object's text: every renderer writes them back as an object
 * (read as the renderers read them; the text itself is passed on verbatim).
 */
function checkArguments(call: OpenAiToolCall, param: string): void {
  let args: unknown;
  try {
    args = parseJsonKeepingNumbers(call.function.arguments);
  } catch (e) {
    throw new ChatRequestError(`the arguments of ${call.function.name} are not JSON (${(e as Error).message})`, param);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new ChatRequestError(`the arguments of ${call.function.name} must be a JSON object`, param);
}

/**
 * A request's messages and tools as the renderer's conversation, before the tool prefix (which
 * withTools adds, as in training). Throws a ChatRequestError naming the field for what the engine
 * cannot honour or render.
 */
export function chatConversation(messages: readonly OpenAiMessageIn[], o: ChatToolOptions): ChatConversation {
  const choice = o.tool_choice;
  if (choice === 'required') throw new ChatRequestError('"required" is not supported: the local engine cannot force a tool call; use "auto" or "none"', 'tool_choice');
  if (choice != null && typeof choice === 'object') throw new ChatRequestError(`a named function ("${choice.function.name}") is not supported: the local engine cannot force a tool call; use "auto" or "none"`, 'tool_choice');
  if (o.response_format && o.response_format.type !== 'text') throw new ChatRequestError(`"${o.response_format.type}" is not supported: the local engine cannot constrain a reply to JSON; leave response_format out`, 'response_format.type');
  const tools = o.tools ?? [];
  tools.forEach((t, i) => {
    if (t.function.strict) throw new ChatRequestError('strict schemas are not supported: the local engine cannot constrain arguments to the schema; leave strict out', `tools.${i}.function.strict`);
  });
  if (tools.length && !o.supportsTools) throw new ChatRequestError(`the model's renderer ${o.rendererName} has no tool calling`, 'tools');
  // a tool result names the function it answers, for the renderers that write the name
  const callNames = new Map<string, string>();
  const out = messages.map((m, i): ChatMessage => {
    const content = textOf(m, i);
    if (m.role === 'assistant') {
      const calls = m.tool_calls ?? [];
      if (content === null && calls.length === 0) throw new ChatRequestError('an assistant message needs content or tool_calls', `messages.${i}.content`);
      if (calls.length && !o.supportsTools) throw new ChatRequestError(`the model's renderer ${o.rendererName} has no tool calling`, `messages.${i}.tool_calls`);
      calls.forEach((c, j) => {
        checkArguments(c, `messages.${i}.tool_calls.${j}.function.arguments`);
        callNames.set(c.id, c.function.name);
      });
      const tool_calls: ToolCall[] = calls.map((c) => ({ type: 'function', id: c.id, function: { name: c.function.name, arguments: c.function.arguments } }));
      return { role: 'assistant', content: content ?? '', ...(m.reasoning_content != null ? { thinking: m.reasoning_content } : {}), ...(tool_calls.length ? { tool_calls } : {}) };
    }
    if (m.tool_calls?.length) throw new ChatRequestError(`only assistant messages carry tool_calls (this one is "${m.role}")`, `messages.${i}.tool_calls`);
    if (content === null) throw new ChatRequestError(`a ${m.role} message needs content (got null)`, `messages.${i}.content`);
    if (m.role === 'tool') {
      if (!m.tool_call_id) throw new ChatRequestError('a tool message needs the tool_call_id of the call it answers', `messages.${i}.tool_call_id`);
      const name = callNames.get(m.tool_call_id);
      if (name === undefined) throw new ChatRequestError(`no earlier assistant message has a tool call with id "${m.tool_call_id}"`, `messages.${i}.tool_call_id`);
      return { role: 'tool', content, tool_call_id: m.tool_call_id, name };
    }
    return { role: m.role === 'developer' ? 'system' : m.role, content, ...(m.name ? { name: m.name } : {}) };
  });
  const declared = choice === 'none' || tools.length === 0 ? undefined : tools.map((t): ToolSpec => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} }));
  return { messages: out, tools: declared, callsAsText: choice === 'none' };
}

/** An assistant reply in OpenAI's shape. */
export interface ReplyMessage {
  content: string | null;
  reasoning_content?: string;
  tool_calls?: OpenAiToolCall[];
  /** 'tool_calls' when the reply makes calls; the route says 'length' for a reply cut off */
  finish_reason: 'stop' | 'tool_calls';
}

export interface ReplyOptions {
  /** the reply's text as sampled (stop token and user stop string left out): a malformed call returns it */
  rawText: string;
  /** tool_choice "none": calls stay text */
  callsAsText: boolean;
  /** the id of the i-th call the model's format gives none */
  newCallId(i: number): string;
  /** the content without a user stop string it ended on */
  trim?(content: string): string;
}

/**
 * A renderer's parsed reply as OpenAI's message: its calls as tool_calls (finish_reason
 * "tool_calls"), its reasoning as reasoning_content, the rest as content. A reply with a call that
 * does not parse (or tool_choice "none") is the text as the model wrote it, finish_reason "stop".
 */
export function replyMessage(parsed: ParsedResponse, o: ReplyOptions): ReplyMessage {
  const m = parsed.message;
  const trim = o.trim ?? ((s: string) => s);
  if (m.unparsed_tool_calls?.length || (o.callsAsText && m.tool_calls?.length)) return { content: trim(o.rawText), finish_reason: 'stop' };
  const reasoning = m.thinking ? { reasoning_content: m.thinking } : {};
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) return { content: trim(m.content), ...reasoning, finish_reason: 'stop' };
  return {
    content: m.content === '' ? null : m.content,
    ...reasoning,
    tool_calls: calls.map((c, i) => ({ id: c.id ?? o.newCallId(i), type: 'function', function: { name: c.function.name, arguments: c.function.arguments } })),
    finish_reason: 'tool_calls',
  };
}

/**
 * The deltas OpenAI streams a reply as: the role, the reasoning and the text in pieces, then each
 * call (its id, type and name with empty arguments, then the arguments in pieces). `pieces` splits a
 * string where the sampled tokens end. Joined, they are the reply.
 */
export function replyDeltas(reply: ReplyMessage, pieces: (text: string) => string[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{ role: 'assistant', content: reply.content === null ? null : '' }];
  for (const p of reply.reasoning_content ? pieces(reply.reasoning_content) : []) out.push({ reasoning_content: p });
  for (const p of reply.content ? pieces(reply.content) : []) out.push({ content: p });
  (reply.tool_calls ?? []).forEach((c, index) => {
    out.push({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
    for (const p of pieces(c.function.arguments)) out.push({ tool_calls: [{ index, function: { arguments: p } }] });
  });
  return out;
}

/**
 * The places in the decoded reply where a token ends on a whole character (the lengths of the
 * decoded prefixes that are prefixes of the whole), then `pieces(text)`: `text`, found in the
 * decoded reply, cut at those places (one piece when it is not found there).
 */
export function tokenPieces(tokens: readonly number[], decode: (ids: readonly number[]) => string): (text: string) => string[] {
  const whole = decode(tokens);
  const ends: number[] = [];
  for (let i = 1; i <= tokens.length; i++) {
    const prefix = decode(tokens.slice(0, i));
    // a token ending inside a multi-byte character decodes to a replacement character: wait for the rest
    if (whole.startsWith(prefix) && prefix.length > (ends[ends.length - 1] ?? 0)) ends.push(prefix.length);
  }
  return (text: string) => {
    if (!text) return [];
    const at = whole.indexOf(text);
    if (at < 0) return [text];
    const end = at + text.length;
    const out: string[] = [];
    let sent = at;
    for (const e of ends) {
      if (e <= sent) continue;
      if (e > end) break;
      out.push(whole.slice(sent, e));
      sent = e;
    }
    if (sent < end) out.push(whole.slice(sent, end));
    return out;
  };
}
