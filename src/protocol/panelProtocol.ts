// The envelope every panel's messages travel in, shared by the host (src/vscode/common/webview) and the
// webview client (webview/shared/client.ts). A webview says `ready` when it has loaded (first load,
// re-shown after being hidden, restored after a reload) and the host answers with a snapshot.
// Requests carry an id and get exactly one reply; a pending request can be cancelled. Everything
// else is a notification, typed per panel by its own schemas.
import * as z from 'zod';

export const RequestId = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const Ready = z.object({ type: z.literal('ready') });

export const Request = z.object({
  type: z.literal('request'),
  id: RequestId,
  method: z.string().min(1).max(100),
  params: z.unknown(),
});
export type Request = z.infer<typeof Request>;

export const Cancel = z.object({ type: z.literal('cancel'), id: RequestId });

/** The webview's side of the envelope: anything else is a panel notification. */
export const Envelope = z.discriminatedUnion('type', [Ready, Request, Cancel]);
export type Envelope = z.infer<typeof Envelope>;

export const Reply = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('reply'), id: RequestId, ok: z.literal(true), value: z.unknown() }),
  z.object({ type: z.literal('reply'), id: RequestId, ok: z.literal(false), error: z.string() }),
]);
export type Reply = z.infer<typeof Reply>;

/** One request a panel's host answers: what the webview sends, what it gets back. */
export interface RequestSpec<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  params: P;
  result: R;
}
export type RequestMap = Record<string, RequestSpec>;

/** A panel's whole protocol: notifications each way, requests, and the state it saves for a reload. */
export interface PanelProtocol<
  ToWebview extends z.ZodType = z.ZodType,
  FromWebview extends z.ZodType = z.ZodType,
  Requests extends RequestMap = RequestMap,
  State extends z.ZodType = z.ZodType,
> {
  /** notifications the host sends */
  toWebview: ToWebview;
  /** notifications the webview sends */
  fromWebview: FromWebview;
  requests: Requests;
  /** what the webview keeps with setState and the serializer receives after a window reload */
  state: State;
}

/** The text of a failed reply: an error's message, never its stack. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.slice(0, 4000);
}
