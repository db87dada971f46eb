// The chatml tool format: Tinker Studio's own, compact enough for a byte-level model (the engine's
// `tinker-studio/arith-chat` was pretrained on it). Defined once, here: the chatml renderer, the
// pretraining script (scripts/pretrain-arith-chat.mjs) and the tests all use these functions.
//
//   system     Tools: add(a, b) - Add two integers.            (one line, after the system prompt)
//   assistant  <tool_call>{"name": "add", "arguments": {"a": 123, "b": 456}}</tool_call>
//   tool       579
//
// Several tools share the line, separated by "; ". Several calls in one turn are separated by a
// newline; text the assistant writes before its calls comes first, followed by a newline. JSON is
// written as Python's json.dumps writes it (", " and ": " separators), so a parsed call renders back
// to the same bytes.
import type { ChatMessage, ToolCall, ToolSpec, UnparsedToolCall } from '../../protocol/chatMessage';
import { numberFormAt, parseJsonKeepingNumbers } from './pyJson';

export const TOOL_LINE_PREFIX = 'Tools: ';
export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';

/**
 * Python json.dumps(value) (default separators, ensure_ascii off): `{"a": 1, "b": [1, 2]}`; a number
 * read from JSON keeps the form it was written in (100.0 stays 100.0).
 */
export function dumpsJson(value: unknown, numberForm?: string): string {
  if (typeof value === 'number' && numberForm !== undefined) return numberForm;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v, i) => dumpsJson(v, numberFormAt(value, i))).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}: ${dumpsJson(v, numberFormAt(value, k))}`)
    .join(', ')}}`;
}

/** The parameter names of a tool, in the order its JSON schema lists them. */
function parameterNames(tool: ToolSpec): string[] {
  const props = tool.parameters['properties'];
  return props !== null && typeof props === 'object' && !Array.isArray(props) ? Object.keys(props) : [];
}

/** `add(a, b) - Add two integers.`: a tool's signature and, when it has one, its description. */
export function toolSignature(tool: ToolSpec): string {
  const desc = tool.description.replace(/\s+/g, ' ').trim();
  return `${tool.name}(${parameterNames(tool).join(', ')})${desc ? ` - ${desc}` : ''}`;
}

/** The one line that declares `tools`: `Tools: add(a, b) - Add two integers.` */
export function toolDeclarationLine(tools: readonly ToolSpec[]): string {
  return TOOL_LINE_PREFIX + tools.map(toolSignature).join('; ');
}

/** The system message that declares `tools`: the system prompt (if any), then the tool line. */
export function toolSystemMessage(tools: readonly ToolSpec[], systemPrompt?: string): ChatMessage {
  const line = toolDeclarationLine(tools);
  return { role: 'system', content: systemPrompt ? `${systemPrompt}\n${line}` : line };
}

/** The arguments of a call as an object (its JSON text parsed), or an error. */
function argumentsObject(call: ToolCall): Record<string, unknown> {
  let args: unknown;
  try {
    args = parseJsonKeepingNumbers(call.function.arguments);
  } catch {
    throw new Error(`tool call ${call.function.name}: its arguments are not JSON: ${call.function.arguments.slice(0, 80)}`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new Error(`tool call ${call.function.name}: its arguments must be a JSON object`);
  return args as Record<string, unknown>;
}

/** `<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>` */
export function renderToolCall(call: ToolCall): string {
  return `${TOOL_CALL_OPEN}${dumpsJson({ name: call.function.name, arguments: argumentsObject(call) })}${TOOL_CALL_CLOSE}`;
}

/** The text of an assistant turn: its content, then its tool calls, one per line. */
export function renderAssistantText(message: Pick<ChatMessage, 'content' | 'tool_calls'>): string {
  const calls = (message.tool_calls ?? []).map(renderToolCall);
  if (calls.length === 0) return message.content;
  return [...(message.content ? [message.content] : []), ...calls].join('\n');
}

/** A call as the model would write it: name and arguments (an object). */
export function toolCall(name: string, args: Record<string, unknown>): ToolCall {
  return { type: 'function', function: { name, arguments: dumpsJson(args) } };
}

export interface ParsedToolCalls {
  /** the text outside the calls (trailing newline before the first call removed) */
  content: string;
  tool_calls: ToolCall[];
  unparsed_tool_calls: UnparsedToolCall[];
}

/**
 * Splits an assistant text into its content and its calls. A block that is not
 * `{"name": string, "arguments": object}` JSON, or an opening tag without its closing one, is kept
 * as an unparsed call with the reason.
 */
export function parseToolCalls(text: string): ParsedToolCalls {
  const tool_calls: ToolCall[] = [];
  const unparsed_tool_calls: UnparsedToolCall[] = [];
  let content = '';
  let rest = text;
  for (;;) {
    const open = rest.indexOf(TOOL_CALL_OPEN);
    if (open < 0) {
      content += rest;
      break;
    }
    content += rest.slice(0, open);
    const close = rest.indexOf(TOOL_CALL_CLOSE, open + TOOL_CALL_OPEN.length);
    if (close < 0) {
      unparsed_tool_calls.push({ raw_text: rest.slice(open), error: `${TOOL_CALL_OPEN} without ${TOOL_CALL_CLOSE}` });
      break;
    }
    const raw = rest.slice(open, close + TOOL_CALL_CLOSE.length);
    const body = rest.slice(open + TOOL_CALL_OPEN.length, close);
    rest = rest.slice(close + TOOL_CALL_CLOSE.length);
    if (rest.startsWith('\n')) rest = rest.slice(1);
    let parsed: unknown;
    try {
      parsed = parseJsonKeepingNumbers(body);
    } catch (e) {
      unparsed_tool_calls.push({ raw_text: raw, error: `not JSON: ${e instanceof Error ? e.message : String(e)}` });
      continue;
    }
    const obj = parsed as { name?: unknown; arguments?: unknown } | null;
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj) || typeof obj.name !== 'string' || obj.name === '') {
      unparsed_tool_calls.push({ raw_text: raw, error: 'expected {"name": string, "arguments": object}' });
      continue;
    }
    const args = obj.arguments ?? {};
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      unparsed_tool_calls.push({ raw_text: raw, error: `the arguments of ${obj.name} are not a JSON object` });
      continue;
    }
    tool_calls.push(toolCall(obj.name, args as Record<string, unknown>));
  }
  if (tool_calls.length + unparsed_tool_calls.length > 0 && content.endsWith('\n')) content = content.slice(0, -1);
  return { content, tool_calls, unparsed_tool_calls };
}
