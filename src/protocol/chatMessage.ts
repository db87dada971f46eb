// One chat message, as data files, sample records, the playground, environments and the webviews
// carry it: the cookbook's `Message` (tinker_cookbook/renderers/base.py) in JSON. Only zod here: the
// webviews import it too. Renderers (src/core/render) read and produce these.
//
// Mapping to the cookbook: `content` is the text parts joined (the cookbook also allows a list of
// parts; its ThinkingPart is our `thinking`); `tool_calls[].function.arguments` is a JSON string, as
// in the cookbook and OpenAI; `tool_call_id` and `name` identify a tool result (role "tool").
import * as z from 'zod';

/**
 * The roles of a conversation. Beyond the usual four, the messages some renderers' tool prefixes
 * start with (createConversationPrefixWithTools, as in the cookbook): `developer` (gpt-oss: the
 * instructions and tool declarations), `tool_declare` (Kimi: the tool declarations) and
 * `_gptoss_internal_system` (gpt-oss: a message rendered under Harmony's own `system` role, where a
 * `system` message of the data is rendered as developer instructions).
 */
export const ROLES = ['system', 'user', 'assistant', 'tool', 'developer', 'tool_declare', '_gptoss_internal_system'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

export const ToolCall = z.object({
  type: z.literal('function').optional(),
  /** the call's id, when the model's format has one (Kimi's `functions.add:0`) or the data gives one */
  id: z.string().optional(),
  function: z.object({
    name: z.string(),
    /** the arguments as a JSON text (not parsed), exactly as the model wrote or the data gave them */
    arguments: z.string(),
  }),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** A tool call the model wrote that could not be parsed: kept as written, with why. */
export const UnparsedToolCall = z.object({ raw_text: z.string(), error: z.string() });
export type UnparsedToolCall = z.infer<typeof UnparsedToolCall>;

/** A tool a conversation declares (OpenAI function format, as the cookbook's ToolSpec). */
export const ToolSpec = z.object({
  name: z.string().min(1),
  description: z.string(),
  /**
   * a JSON schema object for the arguments; taken as it is, not copied, so that the number forms
   * recorded for it when it was read (src/core/render/pyJson.ts: 5.0, not 5) reach the renderer
   */
  parameters: z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { message: 'Invalid input: expected a JSON schema object' }),
});
export type ToolSpec = z.infer<typeof ToolSpec>;

/** Why a content part list with an image (or audio) part is refused: the renderers' limit. */
export const NON_TEXT_CONTENT_ERROR =
  'content parts other than text (images, audio) are not supported: Tinker Studio renders text only, also for the vision models (qwen3_vl, qwen3_vl_instruct); training on images is out of scope because renderers return token lists and SFT weights would need the image token counts';

/**
 * A message's text: a string, or the cookbook's / OpenAI's list of text parts (joined). Any other
 * part is refused with NON_TEXT_CONTENT_ERROR.
 */
const Content = z.preprocess((v, ctx) => {
  if (!Array.isArray(v)) return v;
  const parts = v as unknown[];
  const isText = (p: unknown): p is { type: 'text'; text: string } => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string';
  if (parts.every(isText)) return parts.map((p) => p.text).join('');
  ctx.addIssue({ code: 'custom', message: NON_TEXT_CONTENT_ERROR, input: v });
  return z.NEVER;
}, z.string());

export const ChatMessage = z.object({
  role: Role,
  /** the visible text of the message (a list of text parts is accepted and joined) */
  content: Content,
  /** reasoning text (the cookbook's ThinkingPart: `<think>…</think>` for Qwen3), when the family has it */
  thinking: z.string().optional(),
  /** the calls an assistant message makes */
  tool_calls: z.array(ToolCall).optional(),
  /** calls the model wrote that did not parse (set by parsing, never rendered back as calls) */
  unparsed_tool_calls: z.array(UnparsedToolCall).optional(),
  /** a tool result: the id of the call it answers */
  tool_call_id: z.string().optional(),
  /** a tool result: the name of the function that was called */
  name: z.string().optional(),
  /** per-message training flag for the cookbook's `customized` train-on-what mode */
  trainable: z.boolean().optional(),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A message with only the fields it has (no `undefined` values), as a plain JSON object. */
export function cleanMessage(m: ChatMessage): ChatMessage {
  const out: ChatMessage = { role: m.role, content: m.content };
  if (m.thinking !== undefined) out.thinking = m.thinking;
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
  if (m.unparsed_tool_calls !== undefined) out.unparsed_tool_calls = m.unparsed_tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  if (m.trainable !== undefined) out.trainable = m.trainable;
  return out;
}
