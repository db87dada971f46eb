// OpenAI-compatible inference on the engine, as the Tinker service offers it (its "OpenAI-Compatible
// API", beta): POST /v1/chat/completions and /v1/completions (also under /oai/api/v1/, the cloud's
// layout), non-streaming and streamed as server-sent events. `model` is a base model id (optionally
// with a `:peft:<context>` suffix), a sampler checkpoint's tinker:// path, or `<base model>;<path>`.
// Chat requests are rendered with the model's renderer, tool calls both ways as the training path
// renders them (chatPrompt; the mapping is core/openai/chatMessages.ts); the key, Host and Origin checks
// are the engine's own (server.ts admit), the key also accepted as `Authorization: Bearer`.
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { withTools } from '../../core/env/episode';
import { type ChatConversation, ChatRequestError, chatConversation, OpenAiMessageIn, OpenAiTool, OpenAiToolChoice, replyDeltas, replyMessage, tokenPieces } from '../../core/openai/chatMessages';
import { ByteTokenizer } from '../../core/render/byteTokenizer';
import { RendererError } from '../../core/render/errors';
import { parseJsonKeepingNumbers } from '../../core/render/pyJson';
import { getRenderer } from '../../core/render/registry';
import type { Renderer, Tokenizer } from '../../core/render/types';
import { parseTinkerPath } from '../../core/tinker/tinkerPath';
import type { SampledSequence, SamplingParams } from '../contract';
import { HttpError, OpenAiError, Request, Router } from './http';
import { MAX_NUM_SAMPLES, MAX_SAMPLING_TOKENS, useDirectSampler } from './samplingRoutes';
import type { EngineState } from './state';

const PREFIXES = ['/v1', '/oai/api/v1'];

const Stop = z.union([z.string(), z.array(z.string()).max(16)]).nullish();
const Common = {
  model: z.string().min(1),
  n: z.number().int().min(1).max(MAX_NUM_SAMPLES).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  stop: Stop,
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
};

export const ChatCompletionRequest = z.looseObject({
  ...Common,
  messages: z.array(OpenAiMessageIn).min(1),
  tools: z.array(OpenAiTool).nullish(),
  tool_choice: OpenAiToolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: z.looseObject({ type: z.string() }).nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
});

export const CompletionRequest = z.looseObject({
  ...Common,
  prompt: z.union([z.string(), z.array(z.string()).min(1), z.array(z.number().int().min(0)).min(1), z.array(z.array(z.number().int().min(0)).min(1)).min(1)]),
  logprobs: z.number().int().min(0).max(5).nullish(),
  echo: z.boolean().nullish(),
});

/**
 * A request body, or a 400 in OpenAI's shape naming the field. A chat body is read keeping the number
 * forms Python's json writes (5.0 in a tool declaration stays 5.0 when the renderer writes it, as in
 * training); a completion's needs no renderer, and JSON.parse reads its token arrays far faster.
 */
function parseBody<T extends z.ZodType>(req: Pick<Request, 'body'>, schema: T, read: (text: string) => unknown = JSON.parse): z.output<T> {
  let value: unknown;
  try {
    value = req.body.length ? read(req.body.toString('utf8')) : {};
  } catch (err) {
    throw new OpenAiError(400, `the body is not JSON: ${(err as Error).message}`, 'invalid_request_error');
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const param = issue.path.join('.') || null;
    throw new OpenAiError(400, `${param ?? '(body)'}: ${issue.message}`, 'invalid_request_error', param);
  }
  return r.data;
}

/** A chat completion request as the route reads it. */
export function parseChatBody(req: Pick<Request, 'body'>): z.output<typeof ChatCompletionRequest> {
  return parseBody(req, ChatCompletionRequest, parseJsonKeepingNumbers);
}

/**
 * A chat request's prompt: its messages, tool calls, tool results and `tools` rendered by the model's
 * renderer as the training path renders an episode (withTools, then buildGenerationPrompt), or a 400
 * naming the field.
 */
export function chatPrompt(renderer: Renderer, body: z.output<typeof ChatCompletionRequest>): { prompt: number[]; conversation: ChatConversation } {
  try {
    const conversation = chatConversation(body.messages, { ...body, supportsTools: renderer.supportsTools, rendererName: renderer.name });
    return { prompt: renderer.buildGenerationPrompt(withTools(renderer, conversation.messages, conversation.tools)), conversation };
  } catch (err) {
    if (err instanceof ChatRequestError) throw new OpenAiError(400, err.message, 'invalid_request_error', err.param);
    if (err instanceof RendererError) throw new OpenAiError(400, `messages: ${err.message}`, 'invalid_request_error', 'messages');
    throw err;
  }
}

interface ResolvedModel {
  source: { baseModel: string } | { modelPath: string };
  /** the base model the request must run on, when the model string names one */
  baseModel?: string;
  /** a context length asked for with `:peft:<n>` */
  context?: number;
}

const notFound = (model: string, why: string) =>
  new OpenAiError(404, `The model \`${model}\` does not exist on this engine: ${why}`, 'invalid_request_error', 'model', 'model_not_found');

/** The three forms of `model`: base model (`:peft:<context>` allowed), sampler path, `<base>;<path>`. */
export function resolveModel(model: string, served: ReadonlySet<string>): ResolvedModel {
  const base = (text: string): { name: string; context?: number } => {
    const m = /^(.*?)(?::peft(?::(\d+))?)?$/.exec(text.trim())!;
    if (!served.has(m[1]!)) throw notFound(text, `base models served here: ${[...served].join(', ')}`);
    return { name: m[1]!, ...(m[2] ? { context: Number(m[2]) } : {}) };
  };
  const samplerPath = (p: string): string => {
    let kind: string | undefined;
    try {
      kind = parseTinkerPath(p).kind;
    } catch {
      throw notFound(model, `"${p}" is not a tinker:// checkpoint path`);
    }
    if (kind !== 'sampler_weights') {
      throw new OpenAiError(400, `\`${p}\` is not a sampler checkpoint: use the path of weights saved for sampling (…/sampler_weights/…)`, 'invalid_request_error', 'model', 'model_not_sampler');
    }
    return p;
  };
  const semi = model.indexOf(';');
  if (semi >= 0) {
    const b = base(model.slice(0, semi));
    return { source: { modelPath: samplerPath(model.slice(semi + 1).trim()) }, baseModel: b.name, ...(b.context ? { context: b.context } : {}) };
  }
  if (model.startsWith('tinker://')) return { source: { modelPath: samplerPath(model) } };
  const b = base(model);
  return { source: { baseModel: b.name }, ...(b.context ? { context: b.context } : {}) };
}

/** The pieces of `text` a stream sends, one per token where the tokens decode to a prefix of it. */
export function streamPieces(tokens: readonly number[], text: string, decode: (ids: readonly number[]) => string): string[] {
  const pieces: string[] = [];
  let sent = 0;
  for (let i = 1; i <= tokens.length && sent < text.length; i++) {
    const prefix = decode(tokens.slice(0, i));
    // a token ending inside a multi-byte character decodes to a replacement character: wait for the rest
    if (prefix.length > sent && prefix.length <= text.length && text.startsWith(prefix)) {
      pieces.push(prefix.slice(sent));
      sent = prefix.length;
    }
  }
  if (sent < text.length) pieces.push(text.slice(sent));
  return pieces;
}

function stopStrings(stop: z.infer<typeof Stop>): string[] {
  return stop == null ? [] : (Array.isArray(stop) ? stop : [stop]).filter((s) => s.length > 0);
}

/** The text without the stop string it ended on (OpenAI leaves stop sequences out). */
function withoutStop(text: string, stops: readonly string[]): string {
  for (const s of stops) if (text.endsWith(s)) return text.slice(0, -s.length);
  return text;
}

const finishReason = (s: SampledSequence) => (s.stopReason === 'length' ? 'length' : 'stop');
const newId = (prefix: string) => `${prefix}-${randomBytes(12).toString('hex')}`;

interface Prepared {
  samplerId: string;
  release(): void;
  baseModel: string;
  tokenizer: Tokenizer;
  renderer: Renderer;
  limit: number;
}

export function addOpenAiRoutes(r: Router, st: EngineState): void {
  const served = () => new Set(st.baseModels.keys());

  async function prepare(model: string): Promise<Prepared> {
    const resolved = resolveModel(model, served());
    let sampler: Awaited<ReturnType<typeof useDirectSampler>>;
    try {
      sampler = await useDirectSampler(st, resolved.source);
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) throw notFound(model, err.message);
      throw err;
    }
    try {
      if (resolved.baseModel && resolved.baseModel !== sampler.baseModel) {
        throw new OpenAiError(400, `the checkpoint was trained on ${sampler.baseModel}, not ${resolved.baseModel}: name its own base model before the ";"`, 'invalid_request_error', 'model');
      }
      const info = st.baseModels.get(sampler.baseModel);
      if (!info) throw notFound(model, `its base model ${sampler.baseModel} is not served here`);
      // every model the engine serves has the byte-level tokenizer (src/engine/model/models.ts)
      const tokenizer = new ByteTokenizer();
      const limit = Math.min(info.maxContextLength, resolved.context ?? Infinity);
      return { samplerId: sampler.id, release: sampler.release, baseModel: sampler.baseModel, tokenizer, renderer: getRenderer(info.renderer, tokenizer), limit };
    } catch (err) {
      sampler.release();
      throw err;
    }
  }

  /** `promptParam`: the field that holds the prompt (`messages` for chat, `prompt` for text completions) */
  function params(p: Prepared, body: { temperature?: number | null; top_p?: number | null; seed?: number | null; stop?: z.infer<typeof Stop> }, promptLength: number, maxTokens: number | null | undefined, extraStops: { strings: string[]; tokens: number[] }, promptParam: 'messages' | 'prompt'): SamplingParams {
    const left = p.limit - promptLength;
    if (left <= 0) {
      throw new OpenAiError(400, `This model's maximum context length is ${p.limit} tokens; the prompt has ${promptLength}, leaving none to generate.`, 'invalid_request_error', promptParam, 'context_length_exceeded');
    }
    if (maxTokens != null && maxTokens > left) {
      throw new OpenAiError(
        400,
        `This model's maximum context length is ${p.limit} tokens. However, you requested ${promptLength + maxTokens} tokens (${promptLength} in the prompt, ${maxTokens} for the completion).`,
        'invalid_request_error',
        'max_tokens',
        'context_length_exceeded',
      );
    }
    // a stop string that is a special token's text (e.g. "<|im_end|>") stops on that token
    const user = stopStrings(body.stop);
    const specialIds = user.map((s) => p.tokenizer.specialTokenId(s)).filter((id): id is number => id !== undefined);
    return {
      maxTokens: Math.min(maxTokens ?? left, MAX_SAMPLING_TOKENS),
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      topK: -1,
      stopStrings: [...user.filter((s) => p.tokenizer.specialTokenId(s) === undefined), ...extraStops.strings],
      stopTokens: [...new Set([...extraStops.tokens, ...specialIds])],
      ...(body.seed != null ? { seed: body.seed } : {}),
    };
  }

  async function sample(p: Prepared, prompt: number[], n: number, sp: SamplingParams): Promise<SampledSequence[]> {
    const res = await st.background(st.backend.sample(p.samplerId, { prompt: Int32Array.from(prompt), numSamples: n, params: sp, promptLogprobs: false, topkPromptLogprobs: 0 }));
    return res.sequences;
  }

  const chat = async (req: Request) => {
    const body = parseChatBody(req);
    if (body.top_logprobs) throw new OpenAiError(400, 'top_logprobs: the local engine reports the log-prob of each sampled token only (logprobs: true), not alternatives', 'invalid_request_error', 'top_logprobs');
    const p = await prepare(body.model);
    let released = false;
    const release = () => {
      if (!released) p.release();
      released = true;
    };
    try {
      const { prompt, conversation } = chatPrompt(p.renderer, body);
      const rs = p.renderer.stopSequences();
      const sp = params(p, body, prompt.length, body.max_completion_tokens ?? body.max_tokens, rs.kind === 'tokens' ? { strings: [], tokens: rs.tokens } : { strings: rs.strings, tokens: [] }, 'messages');
      const userStops = stopStrings(body.stop);
      const seqs = await sample(p, prompt, body.n ?? 1, sp);
      release();
      const id = newId('chatcmpl');
      const created = Math.floor(Date.now() / 1000);
      const choices = seqs.map((s, index) => {
        const tokens = Array.from(s.tokens);
        // the tokens of the reply itself: without the renderer's stop token it ended on
        const replyTokens = s.stopReason === 'stop' && rs.kind === 'tokens' && rs.tokens.includes(tokens[tokens.length - 1]!) ? tokens.slice(0, -1) : tokens;
        const reply = replyMessage(p.renderer.parseResponse(tokens), {
          rawText: p.tokenizer.decode(replyTokens),
          callsAsText: conversation.callsAsText,
          newCallId: () => `call_${randomBytes(12).toString('hex')}`,
          trim: (text) => withoutStop(text, userStops),
        });
        const finish = s.stopReason === 'length' ? 'length' : reply.finish_reason;
        return { index, reply, finish, tokens, replyTokens, seq: s };
      });
      const completionTokens = seqs.reduce((a, s) => a + s.tokens.length, 0);
      const usage = { prompt_tokens: prompt.length, completion_tokens: completionTokens, total_tokens: prompt.length + completionTokens };
      const logprobsOf = (c: (typeof choices)[number]) =>
        body.logprobs
          ? {
              content: c.replyTokens.map((t, i) => {
                const token = p.tokenizer.decode([t]);
                return { token, logprob: c.seq.logprobs[i] ?? 0, bytes: [...Buffer.from(token, 'utf8')], top_logprobs: [] };
              }),
              refusal: null,
            }
          : null;
      if (!body.stream) {
        return {
          json: {
            id,
            object: 'chat.completion',
            created,
            model: body.model,
            choices: choices.map((c) => {
              const { finish_reason: _, ...message } = c.reply;
              return { index: c.index, message: { role: 'assistant', ...message, refusal: null }, logprobs: logprobsOf(c), finish_reason: c.finish };
            }),
            usage,
          },
        };
      }
      const chunk = (choicesOut: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: choicesOut, ...extra });
      async function* events() {
        for (const c of choices) {
          for (const delta of replyDeltas(c.reply, tokenPieces(c.replyTokens, (ids) => p.tokenizer.decode(ids)))) {
            yield chunk([{ index: c.index, delta, logprobs: null, finish_reason: null }]);
          }
          yield chunk([{ index: c.index, delta: {}, logprobs: logprobsOf(c), finish_reason: c.finish }]);
        }
        if (body.stream_options?.include_usage) yield chunk([], { usage });
      }
      return { events: events() };
    } finally {
      release();
    }
  };

  const completions = async (req: Request) => {
    const body = parseBody(req, CompletionRequest);
    if (body.echo) throw new OpenAiError(400, 'echo: not supported by the local engine', 'invalid_request_error', 'echo');
    if ((body.logprobs ?? 0) > 1) throw new OpenAiError(400, 'logprobs: the local engine reports the log-prob of each sampled token only (0 or 1), not alternatives', 'invalid_request_error', 'logprobs');
    const p = await prepare(body.model);
    try {
      const pr = body.prompt;
      const prompts: number[][] =
        typeof pr === 'string'
          ? [p.tokenizer.encodeWithSpecialTokens(pr)]
          : typeof pr[0] === 'string'
            ? (pr as string[]).map((t) => p.tokenizer.encodeWithSpecialTokens(t))
            : typeof pr[0] === 'number'
              ? [pr as number[]]
              : (pr as number[][]);
      for (const t of prompts) if (t.some((id) => id >= p.tokenizer.vocabSize)) throw new OpenAiError(400, `prompt: token ids must be below ${p.tokenizer.vocabSize}`, 'invalid_request_error', 'prompt');
      const n = body.n ?? 1;
      if (prompts.length * n > MAX_NUM_SAMPLES) throw new OpenAiError(400, `at most ${MAX_NUM_SAMPLES} completions a request on the local engine`, 'invalid_request_error', 'n');
      const userStops = stopStrings(body.stop);
      const results = [];
      for (const prompt of prompts) {
        if (prompt.length === 0) throw new OpenAiError(400, 'prompt: empty', 'invalid_request_error', 'prompt');
        const sp = params(p, body, prompt.length, body.max_tokens, { strings: [], tokens: [] }, 'prompt');
        results.push({ prompt, seqs: await sample(p, prompt, n, sp) });
      }
      p.release();
      const id = newId('cmpl');
      const created = Math.floor(Date.now() / 1000);
      const choices = results.flatMap((r, pi) =>
        r.seqs.map((s, j) => {
          let tokens = Array.from(s.tokens);
          // the model's end-of-sequence token is not text
          if (s.stopReason === 'stop' && tokens.length && p.tokenizer.isSpecial(tokens[tokens.length - 1]!)) tokens = tokens.slice(0, -1);
          const text = withoutStop(p.tokenizer.decode(tokens), userStops);
          return { index: pi * n + j, text, tokens, seq: s };
        }),
      );
      const promptTokens = results.reduce((a, r) => a + r.prompt.length, 0);
      const completionTokens = results.reduce((a, r) => a + r.seqs.reduce((b, s) => b + s.tokens.length, 0), 0);
      const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
      const logprobsOf = (c: (typeof choices)[number]) => {
        if (body.logprobs == null) return null;
        const texts = c.tokens.map((t) => p.tokenizer.decode([t]));
        const offsets: number[] = [];
        let at = 0;
        for (const t of texts) {
          offsets.push(at);
          at += t.length;
        }
        return {
          tokens: texts,
          token_logprobs: c.tokens.map((_, i) => c.seq.logprobs[i] ?? 0),
          top_logprobs: body.logprobs ? texts.map((t, i) => ({ [t]: c.seq.logprobs[i] ?? 0 })) : null,
          text_offset: offsets,
        };
      };
      if (!body.stream) {
        return {
          json: { id, object: 'text_completion', created, model: body.model, choices: choices.map((c) => ({ index: c.index, text: c.text, logprobs: logprobsOf(c), finish_reason: finishReason(c.seq) })), usage },
        };
      }
      const chunk = (choicesOut: unknown[], extra: Record<string, unknown> = {}) => ({ id, object: 'text_completion', created, model: body.model, choices: choicesOut, ...extra });
      async function* events() {
        for (const c of choices) {
          for (const piece of streamPieces(c.tokens, c.text, (ids) => p.tokenizer.decode(ids))) yield chunk([{ index: c.index, text: piece, logprobs: null, finish_reason: null }]);
          yield chunk([{ index: c.index, text: '', logprobs: logprobsOf(c), finish_reason: finishReason(c.seq) }]);
        }
        if (body.stream_options?.include_usage) yield chunk([], { usage });
      }
      return { events: events() };
    } finally {
      p.release();
    }
  };

  const models = () => ({
    json: { object: 'list', data: [...st.baseModels.keys()].map((id) => ({ id, object: 'model', created: 0, owned_by: 'tinker-studio' })) },
  });

  for (const prefix of PREFIXES) {
    r.add('POST', `${prefix}/chat/completions`, chat);
    r.add('POST', `${prefix}/completions`, completions);
    r.add('GET', `${prefix}/models`, models);
  }
}
