// Checkpoints as VS Code language models: a language-model chat provider of vendor "tinker" (VS Code
// 1.104 and later; src/vscode/common/newerApis.ts) whose models are the backend's base models and the
// sampler checkpoints pinned with "Chat with This Checkpoint". Requests go to the backend's
// OpenAI-compatible endpoint (the engine's /v1, the service's /oai/api/v1), streamed as they arrive,
// cancelled with the request's token; token counts come from the model's own tokenizer. Models whose
// renderer has tool calling declare it: VS Code's tool-call and tool-result parts go as OpenAI's
// tool_calls and tool messages, and the calls the model makes come back as tool-call parts. The pins are
// kept in the extension's global state (paths and names only, never a key); the key is read from
// SecretStorage / TINKER_API_KEY (or the engine's per-launch key) for each request.
import * as vscode from 'vscode';
import { errorMessage } from '../../core/errors';
import type { ChatMessageIn, ChatTool } from '../../core/openai/chatCompletions';
import { modelHasToolCalling } from '../../core/render/modelInfo';
import type { Tokenizer } from '../../core/render/types';
import type { TinkerConnection } from '../connection/connection';
import { Disposable } from '../common/lifecycle';
import type { Log } from '../common/log';
import { readNetworkSettings } from '../common/networkSettings';
import { readBackend } from '../common/settings';
import {
  chatProviderApi,
  type LanguageModelChatInformation,
  type LanguageModelChatProvider,
  type LanguageModelChatRequestMessage,
  type LanguageModelResponsePart,
  type PrepareLanguageModelChatModelOptions,
  type ProvideLanguageModelChatResponseOptions,
} from '../common/newerApis';

/** The vendor of the models (package.json `languageModelChatProviders`). */
export const CHAT_VENDOR = 'tinker';
const PINS_KEY = 'tinker.chat.pinnedCheckpoints';
/** used when the server gives no context length */
const DEFAULT_CONTEXT = 4096;

/** A sampler checkpoint pinned as a chat model. */
export interface PinnedCheckpoint {
  /** its tinker:// sampler path: the OpenAI `model` string and the model's id */
  path: string;
  /** what the model list shows */
  label: string;
  baseModel: string;
  /** the base model's context length, when the server said */
  contextLength?: number;
}

/** A model of the provider: the OpenAI `model` string is its id. */
export interface TinkerChatModel extends LanguageModelChatInformation {
  readonly baseModel: string;
  readonly checkpoint: boolean;
}

export interface ChatModelServices {
  log: Log;
  connection: Pick<TinkerConnection, 'get' | 'openAiEndpoint'>;
  /** where the pins are kept (the extension's global state) */
  state: vscode.Memento;
  /** tokenizer files' cache */
  cacheDir: string;
  /** whether the local engine runs now (a silent model listing does not start it) */
  engineRunning(): boolean;
}

export class TinkerChatModels extends Disposable implements LanguageModelChatProvider<TinkerChatModel> {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private readonly tokenizers = new Map<string, Promise<Tokenizer | undefined>>();
  /** whether the provider is registered with VS Code (false on hosts without the API) */
  readonly registered: boolean;

  constructor(private readonly s: ChatModelServices) {
    super();
    const api = chatProviderApi();
    this.registered = api !== undefined;
    if (api) this._register(api.registerLanguageModelChatProvider(CHAT_VENDOR, this));
  }

  /** The backend or key changed: the base models may differ. */
  refresh(): void {
    this.changed.fire();
  }

  /** The pinned checkpoints, as stored (anything malformed in the stored list is dropped). */
  pinned(): PinnedCheckpoint[] {
    const raw: unknown = this.s.state.get(PINS_KEY);
    if (!Array.isArray(raw)) return [];
    return raw.flatMap((p: unknown): PinnedCheckpoint[] => {
      if (typeof p !== 'object' || p === null) return [];
      const r = p as Record<string, unknown>;
      if (typeof r.path !== 'string' || !r.path.startsWith('tinker://') || typeof r.label !== 'string' || typeof r.baseModel !== 'string') return [];
      return [{ path: r.path, label: r.label, baseModel: r.baseModel, ...(typeof r.contextLength === 'number' && r.contextLength > 0 ? { contextLength: r.contextLength } : {}) }];
    });
  }

  async pin(p: PinnedCheckpoint): Promise<void> {
    await this.s.state.update(PINS_KEY, [...this.pinned().filter((x) => x.path !== p.path), p]);
    this.changed.fire();
  }

  async unpin(paths: readonly string[]): Promise<void> {
    await this.s.state.update(
      PINS_KEY,
      this.pinned().filter((x) => !paths.includes(x.path)),
    );
    this.changed.fire();
  }

  // ---- the provider ----

  async provideLanguageModelChatInformation(options: PrepareLanguageModelChatModelOptions, _token: vscode.CancellationToken): Promise<TinkerChatModel[]> {
    const models: TinkerChatModel[] = this.pinned().map((p) => modelInfo(p.path, p.label, p.baseModel, p.contextLength, true));
    // the base models: asked of the server, but a silent listing neither starts the engine nor prompts
    try {
      const backend = await readBackend();
      if (options.silent && backend.kind === 'local' && !this.s.engineRunning()) return models;
      const service = await this.s.connection.get();
      const caps = await service.capabilities();
      for (const m of caps.supported_models) {
        if (m.model_name) models.push(modelInfo(m.model_name, m.model_name, m.model_name, m.max_context_length ?? undefined, false));
      }
    } catch (err) {
      this.s.log.warn(`chat models: the backend's base models are not listed: ${errorMessage(err)}`);
    }
    return models;
  }

  async provideLanguageModelChatResponse(
    model: TinkerChatModel,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const { streamChatCompletion } = await import('../../core/openai/chatCompletions');
    const endpoint = await this.s.connection.openAiEndpoint({ withKey: true });
    const abort = new AbortController();
    const sub = token.onCancellationRequested(() => abort.abort());
    try {
      const tools = (options.tools ?? []).map(toChatTool);
      const toolOptions = tools.length ? { tools, ...(options.toolMode === vscode.LanguageModelChatToolMode.Required ? { tool_choice: 'required' as const } : {}) } : {};
      const stream = streamChatCompletion(endpoint, model.id, toChatMessages(messages), { ...(await chatOptions(options.modelOptions)), ...toolOptions }, {
        signal: abort.signal,
        network: readNetworkSettings(),
      });
      for await (const part of stream) {
        if (part.kind === 'text') progress.report(new vscode.LanguageModelTextPart(part.text));
        else progress.report(new vscode.LanguageModelToolCallPart(part.call.id, part.call.function.name, callInput(part.call.function.name, part.call.function.arguments)));
      }
    } catch (err) {
      if (abort.signal.aborted) return; // cancelled: what was streamed stands
      throw new Error(this.s.log.redactor.redact(`${model.name}: ${errorMessage(err)}`));
    } finally {
      sub.dispose();
    }
  }

  async provideTokenCount(model: TinkerChatModel, text: string | LanguageModelChatRequestMessage, _token: vscode.CancellationToken): Promise<number> {
    const s = typeof text === 'string' ? text : partsText(text.content);
    const tokenizer = await this.tokenizer(model.baseModel);
    // without the model's tokenizer (not cached, hub unreachable): about four characters a token
    return tokenizer ? tokenizer.encode(s).length : Math.ceil(s.length / 4);
  }

  private tokenizer(baseModel: string): Promise<Tokenizer | undefined> {
    let t = this.tokenizers.get(baseModel);
    if (!t) {
      t = import('../../core/render')
        .then(({ loadTokenizer }) => loadTokenizer({ model: baseModel, cacheDir: this.s.cacheDir, network: readNetworkSettings() }))
        .catch((err: unknown) => {
          this.s.log.warn(`chat models: no tokenizer for ${baseModel} (token counts are estimated): ${errorMessage(err)}`);
          return undefined;
        });
      this.tokenizers.set(baseModel, t);
    }
    return t;
  }
}

function modelInfo(id: string, name: string, baseModel: string, contextLength: number | undefined, checkpoint: boolean): TinkerChatModel {
  const context = contextLength ?? DEFAULT_CONTEXT;
  return {
    id,
    name,
    family: baseModel,
    version: checkpoint ? 'checkpoint' : 'base',
    detail: checkpoint ? `Tinker checkpoint of ${baseModel}` : 'Tinker base model',
    tooltip: checkpoint ? `${id}\nbase model ${baseModel}` : `${id} (base model)`,
    maxInputTokens: context,
    maxOutputTokens: context,
    capabilities: { toolCalling: modelHasToolCalling(baseModel), imageInput: false },
    baseModel,
    checkpoint,
  };
}

/** The text of a message's parts: text parts, and the text inside tool results; other parts are left out. */
function partsText(parts: ReadonlyArray<unknown>): string {
  const out: string[] = [];
  for (const p of parts) {
    if (p instanceof vscode.LanguageModelTextPart) out.push(p.value);
    else if (p instanceof vscode.LanguageModelToolResultPart) out.push(partsText(p.content));
    else if (typeof p === 'object' && p !== null && typeof (p as { value?: unknown }).value === 'string') out.push((p as { value: string }).value);
  }
  return out.join('');
}

/**
 * VS Code's messages as OpenAI's: an assistant's tool-call parts become its tool_calls; each
 * tool-result part (VS Code puts them in user messages) becomes a tool message, in the order of the
 * parts, with the text around it in user messages of its own.
 */
export function toChatMessages(messages: readonly LanguageModelChatRequestMessage[]): ChatMessageIn[] {
  return messages.flatMap((m): ChatMessageIn[] => {
    if (m.role === vscode.LanguageModelChatMessageRole.Assistant) {
      const calls = m.content.filter((p): p is vscode.LanguageModelToolCallPart => p instanceof vscode.LanguageModelToolCallPart);
      const content = partsText(m.content.filter((p) => !(p instanceof vscode.LanguageModelToolCallPart)));
      if (calls.length === 0) return [{ role: 'assistant', content }];
      return [{ role: 'assistant', content: content || null, tool_calls: calls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) }];
    }
    const role = m.role === vscode.LanguageModelChatMessageRole.User ? 'user' : 'system';
    const out: ChatMessageIn[] = [];
    let text: unknown[] = [];
    const flush = () => {
      const content = partsText(text);
      if (content) out.push({ role, content });
      text = [];
    };
    for (const p of m.content) {
      if (p instanceof vscode.LanguageModelToolResultPart) {
        flush();
        out.push({ role: 'tool', tool_call_id: p.callId, content: partsText(p.content) });
      } else text.push(p);
    }
    flush();
    if (out.length === 0) out.push({ role, content: '' });
    return out;
  });
}

/** A tool VS Code offers, as OpenAI's function declaration. */
function toChatTool(t: vscode.LanguageModelChatTool): ChatTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} } } };
}

/** A call's arguments as the object VS Code's tool-call part carries (the endpoint sends a JSON text). */
function callInput(name: string, args: string): object {
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch (err) {
    throw new Error(`the model called ${name} with arguments that are not JSON (${errorMessage(err)}): ${args.slice(0, 200)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`the model called ${name} with arguments that are not a JSON object: ${args.slice(0, 200)}`);
  return value;
}

/** The request's model options this provider honours (temperature, top_p, max_tokens, seed, stop); others are ignored. */
async function chatOptions(given: { readonly [name: string]: unknown } | undefined) {
  const { ChatOptions } = await import('../../core/openai/chatCompletions');
  const out: Record<string, unknown> = {};
  for (const key of ['temperature', 'top_p', 'max_tokens', 'seed', 'stop'] as const) {
    if (given?.[key] !== undefined) out[key] = given[key];
  }
  const r = ChatOptions.safeParse(out);
  if (!r.success) throw new Error(`unusable model options: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}
