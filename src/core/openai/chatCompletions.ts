// A small client of the OpenAI-compatible chat completions endpoint the Tinker service offers (its base
// URL plus /oai/api/v1, beta) and the embedded engine serves (its URL plus /v1): one request, whole
// (completeChat) or streamed (server-sent events), each chunk's text handed out as it arrives and each
// tool call once its arguments are complete (OpenAI streams them in pieces). Every chunk and error body is parsed with
// zod; the key goes only in the Authorization header and never into error text. Used by the VS Code
// language-model provider ("Chat with This Checkpoint"); no `vscode` here.
import * as z from 'zod';
import type { Dispatcher } from 'undici';
import { createDispatcher, type NetworkOptions } from '../tinker/proxy';
import { errorMessage } from '../errors';
export type { OpenAiEndpoint } from './endpoint';
import type { OpenAiEndpoint } from './endpoint';

/** A tool call as OpenAI writes it: the arguments are a JSON object's text. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessageIn =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

/** A function the model may call (OpenAI's `tools` entry). */
export const ChatTool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});
export type ChatTool = z.infer<typeof ChatTool>;

/** The sampling parameters a chat request may carry (the ones the engine and the service docs list), and its tools. */
export const ChatOptions = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  stop: z.union([z.string(), z.array(z.string())]).optional(),
  tools: z.array(ChatTool).optional(),
  tool_choice: z.enum(['none', 'auto', 'required']).optional(),
});
export type ChatOptions = z.infer<typeof ChatOptions>;

const ToolCallDelta = z.looseObject({
  index: z.number().int().min(0),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const Chunk = z.looseObject({
  choices: z.array(
    z.looseObject({
      index: z.number().int().optional(),
      delta: z.looseObject({ content: z.string().nullish(), tool_calls: z.array(ToolCallDelta).nullish() }).nullish(),
      finish_reason: z.string().nullish(),
    }),
  ),
});

/** What a stream hands out: a piece of text, or a whole tool call. */
export type ChatStreamPart = { kind: 'text'; text: string } | { kind: 'tool_call'; call: ChatToolCall };

const ErrorBody = z.looseObject({ error: z.looseObject({ message: z.string(), type: z.string().nullish(), code: z.union([z.string(), z.number()]).nullish() }) });

/** An HTTP error of the endpoint, with OpenAI's message and code when the body has them. */
export class OpenAiEndpointError extends Error {
  override name = 'OpenAiEndpointError';
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface StreamChatOptions {
  signal?: AbortSignal;
  network?: NetworkOptions;
  /** for tests: a dispatcher of their own */
  dispatcher?: Dispatcher;
}

/** What a finished stream reports. */
export interface ChatStreamEnd {
  finishReason: string | undefined;
}

/**
 * POSTs `{model, messages, …options, stream}` to `<baseUrl>/chat/completions` with the key as Bearer,
 * and hands the response (status below 400) to `read`; an HTTP error becomes an OpenAiEndpointError
 * with the body's message and code, never the key.
 */
async function* postChat<T, R>(
  endpoint: OpenAiEndpoint,
  body: Record<string, unknown>,
  o: StreamChatOptions,
  read: (res: Dispatcher.ResponseData, url: string) => AsyncGenerator<T, R>,
): AsyncGenerator<T, R> {
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const secret = endpoint.apiKey;
  const redact = (s: string) => (secret ? s.split(secret).join('<key>') : s);
  const { request } = await import('undici');
  const own = o.dispatcher ? undefined : createDispatcher(url, o.network ?? {});
  const dispatcher = o.dispatcher ?? own!.dispatcher;
  try {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'POST',
        dispatcher,
        signal: o.signal,
        headers: {
          'content-type': 'application/json',
          accept: body.stream ? 'text/event-stream' : 'application/json',
          ...(secret ? { authorization: `Bearer ${secret}` } : {}),
        },
        body: JSON.stringify(body),
      });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      throw new OpenAiEndpointError(redact(`could not reach ${url}: ${errorMessage(err)}`), 0);
    }
    if (res.statusCode >= 400) {
      const text = await res.body.text().catch(() => '');
      let parsed: z.infer<typeof ErrorBody> | undefined;
      try {
        parsed = ErrorBody.parse(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      const code = parsed?.error.code != null ? String(parsed.error.code) : undefined;
      const detail = parsed ? parsed.error.message : text.slice(0, 300) || 'no body';
      throw new OpenAiEndpointError(redact(`${url} answered ${res.statusCode}: ${detail}`), res.statusCode, code);
    }
    try {
      return yield* read(res, url);
    } catch (err) {
      if (err instanceof OpenAiEndpointError) throw new OpenAiEndpointError(redact(err.message), err.status, err.code);
      throw err;
    }
  } finally {
    if (own) await own.dispatcher.destroy().catch(() => undefined);
  }
}

const Completion = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({ content: z.string().nullish(), tool_calls: z.array(z.looseObject({ id: z.string().min(1), type: z.literal('function'), function: z.looseObject({ name: z.string().min(1), arguments: z.string() }) })).nullish() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
});

/** A whole reply: its text, its tool calls and why it ended. */
export interface ChatReply {
  content: string | null;
  toolCalls: ChatToolCall[];
  finishReason: string | undefined;
}

/** The same request not streamed: the first choice's reply, parsed. Errors as streamChatCompletion's. */
export async function completeChat(endpoint: OpenAiEndpoint, model: string, messages: readonly ChatMessageIn[], options: ChatOptions = {}, o: StreamChatOptions = {}): Promise<ChatReply> {
  const gen = postChat(endpoint, { model, messages, ...ChatOptions.parse(options), stream: false }, o, async function* (res, url): AsyncGenerator<never, ChatReply> {
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new OpenAiEndpointError(`${url} answered with a body that is not JSON: ${text.slice(0, 120)}`, res.statusCode);
    }
    const r = Completion.safeParse(json);
    if (!r.success) throw new OpenAiEndpointError(`${url} answered with a completion of an unexpected shape: ${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message ?? ''}`, res.statusCode);
    const c = r.data.choices[0]!;
    return { content: c.message.content ?? null, toolCalls: (c.message.tool_calls ?? []).map((t) => ({ id: t.id, type: 'function', function: { name: t.function.name, arguments: t.function.arguments } })), finishReason: c.finish_reason ?? undefined };
  });
  const end = await gen.next();
  if (!end.done) throw new Error('unreachable: a whole reply yields nothing');
  return end.value;
}

/**
 * POSTs `{model, messages, stream: true, …options}` to `<baseUrl>/chat/completions` and yields the
 * text of each chunk of the first choice as it arrives, and each tool call when its arguments are
 * whole (when the next call starts, or at the end); returns the finish reason. Aborting `signal` ends
 * the request. Throws OpenAiEndpointError on an HTTP error (its message from the body), or on a call
 * that arrives without its id or name.
 */
export async function* streamChatCompletion(
  endpoint: OpenAiEndpoint,
  model: string,
  messages: readonly ChatMessageIn[],
  options: ChatOptions = {},
  o: StreamChatOptions = {},
): AsyncGenerator<ChatStreamPart, ChatStreamEnd> {
  // options are checked when the caller starts reading, as for every other error
  return yield* postChat(endpoint, { model, messages, ...ChatOptions.parse(options), stream: true }, o, (res, url) => readStream(res, url, o.signal));
}

async function* readStream(res: Dispatcher.ResponseData, url: string, signal: AbortSignal | undefined): AsyncGenerator<ChatStreamPart, ChatStreamEnd> {
  const type = String(res.headers['content-type'] ?? '');
  if (!type.includes('text/event-stream')) {
    await res.body.text().catch(() => '');
    throw new OpenAiEndpointError(`${url} did not stream (content-type "${type}"): it may not be an OpenAI-compatible endpoint`, res.statusCode);
  }
  let finishReason: string | undefined;
  // the call being streamed: its arguments arrive in pieces
  let call: { index: number; id?: string; name?: string; arguments: string } | undefined;
  const whole = (): ChatStreamPart[] => {
    if (!call) return [];
    const c = call;
    call = undefined;
    if (!c.id || !c.name) throw new OpenAiEndpointError(`${url} streamed a tool call without its ${c.id ? 'name' : 'id'} (index ${c.index})`, res.statusCode);
    return [{ kind: 'tool_call', call: { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } } }];
  };
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const piece of res.body) {
    buffer += decoder.decode(piece as Uint8Array, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, cut).replace(/\r$/, '');
      buffer = buffer.slice(cut + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') {
        yield* whole();
        return { finishReason };
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw new OpenAiEndpointError(`${url} sent an event that is not JSON: ${data.slice(0, 120)}`, res.statusCode);
      }
      const err = ErrorBody.safeParse(json);
      if (err.success) throw new OpenAiEndpointError(`${url} stopped the stream: ${err.data.error.message}`, res.statusCode);
      const chunk = Chunk.safeParse(json);
      if (!chunk.success) throw new OpenAiEndpointError(`${url} sent a chunk of an unexpected shape: ${chunk.error.issues[0]?.message ?? ''}`, res.statusCode);
      const first = chunk.data.choices.find((c) => (c.index ?? 0) === 0);
      if (first?.finish_reason) finishReason = first.finish_reason;
      const text = first?.delta?.content;
      // a cancel ends the stream at once, also among pieces that arrived together
      signal?.throwIfAborted();
      if (text) yield { kind: 'text', text };
      for (const d of first?.delta?.tool_calls ?? []) {
        if (call && call.index !== d.index) yield* whole();
        call ??= { index: d.index, arguments: '' };
        if (d.id) call.id = d.id;
        if (d.function?.name) call.name = d.function.name;
        if (d.function?.arguments) call.arguments += d.function.arguments;
      }
    }
  }
  yield* whole();
  return { finishReason };
}
