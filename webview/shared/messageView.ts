// A chat message as the panels show it (the playground's samples and conversation, the group
// breakdown's sample detail, and any panel showing transcripts): reasoning folded in a <details>
// (a native disclosure: Tab reaches its summary, Enter or Space opens it), the text, each tool call as
// its function name and pretty-printed JSON arguments, and a malformed call flagged with why, shown as
// the model wrote it. The formatting rules are src/protocol/messageFormat.ts (the host's text
// documents follow them too); this module only builds the DOM, with text only (never HTML from data).
import './message.css';
import { el } from './dom';
import { messageDisplay, thinkingSummary, toolCallTitle, type FormattedToolCall, type MessageLike } from '../../src/protocol/messageFormat';
import type { UnparsedToolCall } from '../../src/protocol/chatMessage';

export interface MessageViewOptions {
  /** a heading with the role (transcripts); none for a single reply */
  showRole?: boolean;
  /** the reasoning starts unfolded */
  thinkingOpen?: boolean;
  /** shown instead of an empty text when the message has nothing else */
  emptyText?: string;
}

/** The reasoning, folded: a <details> whose summary says how long it is. */
export function thinkingView(thinking: string, open = false): HTMLDetailsElement {
  const d = el('details', 'msg-thinking');
  d.open = open;
  const summary = el('summary', '', thinkingSummary(thinking));
  summary.title = 'Show or hide the model’s reasoning (Enter or Space)';
  d.append(summary, el('pre', 'msg-thinking-text', thinking));
  return d;
}

/** One tool call: its function name (and id) and its arguments as pretty JSON; a problem is flagged. */
export function toolCallView(call: FormattedToolCall): HTMLElement {
  const box = el('div', `msg-tool-call${call.problem ? ' malformed' : ''}`);
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', `Tool call ${call.name}`);
  const head = el('div', 'msg-tool-head');
  head.append(el('span', 'msg-tool-label', 'Tool call'), el('code', 'msg-tool-name', call.name));
  if (call.id) head.append(el('span', 'msg-tool-id muted', `id ${call.id}`));
  box.append(head);
  if (call.problem) box.append(el('div', 'msg-flag', `⚠ ${call.problem}`));
  box.append(el('pre', 'msg-tool-args', call.arguments));
  box.title = toolCallTitle(call);
  return box;
}

/** A call the renderer could not parse: flagged with why, the text as the model wrote it. */
export function unparsedCallView(u: UnparsedToolCall): HTMLElement {
  const box = el('div', 'msg-tool-call malformed');
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', 'Malformed tool call');
  const head = el('div', 'msg-tool-head');
  head.append(el('span', 'msg-tool-label', 'Malformed tool call'));
  box.append(head, el('div', 'msg-flag', `⚠ ${u.error}`), el('pre', 'msg-tool-args', u.raw_text));
  return box;
}

/** The whole message: [role], [tool result heading], reasoning (folded), text, tool calls, malformed calls. */
export function messageView(m: MessageLike, o: MessageViewOptions = {}): HTMLElement {
  const d = messageDisplay(m);
  const box = el('div', `msg msg-${d.role}`);
  if (o.showRole) box.append(el('div', 'msg-role', d.role));
  if (d.toolResult) box.append(el('div', 'msg-tool-result muted', d.toolResult));
  if (d.thinking !== undefined) box.append(thinkingView(d.thinking, o.thinkingOpen));
  const nothingElse = d.thinking === undefined && d.toolCalls.length === 0 && d.unparsed.length === 0;
  if (d.content !== '' || nothingElse) box.append(el('pre', `msg-content${d.content === '' ? ' muted' : ''}`, d.content === '' ? (o.emptyText ?? '(empty)') : d.content));
  for (const c of d.toolCalls) box.append(toolCallView(c));
  for (const u of d.unparsed) box.append(unparsedCallView(u));
  return box;
}
