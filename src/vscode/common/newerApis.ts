// The VS Code APIs the extension uses that are newer than its floor (package.json engines.vscode,
// ^1.96.0; @types/vscode is pinned to the floor, so the compiler knows none of them). Each is declared
// here with its signature as VS Code publishes it (vscode.d.ts of the release that finalized it) and
// looked up on the running host's `vscode` namespace: where the host lacks it, the accessor returns
// undefined and the feature that uses it stays inert. docs/vscode-versions.md lists them with the way
// to reach the same thing on an older host.
//
// Every other API the extension calls is in the floor's vscode.d.ts (checked by the compiler): the
// language-model tools (vscode.lm.registerTool) were finalized in 1.95. The built-in commands it runs
// exist in 1.96 too: the UI layer on the floor host opens What Changed (vscode.changes) and the sample
// diffs (vscode.diff).
import * as vscode from 'vscode';

// ---- VS Code 1.101: MCP server definitions (vscode.lm.registerMcpServerDefinitionProvider) ----

/** `vscode.McpStdioServerDefinition` (1.101): an MCP server VS Code starts as a local process. */
export interface McpStdioServerDefinition {
  readonly label: string;
  cwd?: vscode.Uri;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
}

/** `vscode.McpHttpServerDefinition` (1.101): an MCP server VS Code reaches over HTTP. */
export interface McpHttpServerDefinition {
  readonly label: string;
  uri: vscode.Uri;
  headers: Record<string, string>;
  version?: string;
}

/** `vscode.McpServerDefinition` (1.101) */
export type McpServerDefinition = McpStdioServerDefinition | McpHttpServerDefinition;

/** `vscode.McpServerDefinitionProvider` (1.101) */
export interface McpServerDefinitionProvider<T extends McpServerDefinition = McpServerDefinition> {
  readonly onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<T[]>;
  resolveMcpServerDefinition?(server: T, token: vscode.CancellationToken): vscode.ProviderResult<T>;
}

/** The constructor `new vscode.McpStdioServerDefinition(...)` (1.101) */
export type McpStdioServerDefinitionConstructor = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => McpStdioServerDefinition;

/** `vscode.lm.registerMcpServerDefinitionProvider` (1.101) */
export type RegisterMcpServerDefinitionProvider = (id: string, provider: McpServerDefinitionProvider) => vscode.Disposable;

/** The MCP part of the API, as one unit: the provider is only of use with the definition class. */
export interface McpApi {
  McpStdioServerDefinition: McpStdioServerDefinitionConstructor;
  registerMcpServerDefinitionProvider: RegisterMcpServerDefinitionProvider;
}

// ---- VS Code 1.104: language-model chat providers (vscode.lm.registerLanguageModelChatProvider) ----

/** `vscode.LanguageModelChatCapabilities` (1.104) */
export interface LanguageModelChatCapabilities {
  readonly imageInput?: boolean;
  readonly toolCalling?: boolean | number;
}

/** `vscode.LanguageModelChatInformation` (1.104): a model a provider offers. */
export interface LanguageModelChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly tooltip?: string;
  readonly detail?: string;
  readonly version: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly capabilities: LanguageModelChatCapabilities;
}

/** `vscode.LanguageModelChatRequestMessage` (1.104): a message as the provider receives it. */
export interface LanguageModelChatRequestMessage {
  readonly role: vscode.LanguageModelChatMessageRole;
  readonly content: ReadonlyArray<unknown>;
  readonly name: string | undefined;
}

/** `vscode.ProvideLanguageModelChatResponseOptions` (1.104) */
export interface ProvideLanguageModelChatResponseOptions {
  readonly modelOptions?: { readonly [name: string]: unknown };
  readonly tools?: readonly vscode.LanguageModelChatTool[];
  readonly toolMode: vscode.LanguageModelChatToolMode;
}

/** `vscode.PrepareLanguageModelChatModelOptions` (1.104) */
export interface PrepareLanguageModelChatModelOptions {
  readonly silent: boolean;
}

/** `vscode.LanguageModelResponsePart` (1.104), the parts this extension emits (1.95 classes) */
export type LanguageModelResponsePart = vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart | vscode.LanguageModelToolResultPart;

/** `vscode.LanguageModelChatProvider` (1.104) */
export interface LanguageModelChatProvider<T extends LanguageModelChatInformation = LanguageModelChatInformation> {
  readonly onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
  provideLanguageModelChatInformation(options: PrepareLanguageModelChatModelOptions, token: vscode.CancellationToken): vscode.ProviderResult<T[]>;
  provideLanguageModelChatResponse(
    model: T,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Thenable<void>;
  provideTokenCount(model: T, text: string | LanguageModelChatRequestMessage, token: vscode.CancellationToken): Thenable<number>;
}

/** `vscode.lm.registerLanguageModelChatProvider` (1.104); the vendor is declared in package.json `languageModelChatProviders`. */
export type RegisterLanguageModelChatProvider = (vendor: string, provider: LanguageModelChatProvider) => vscode.Disposable;

/** First VS Code release with each API here, for messages and docs. */
export const NEWER_API_SINCE = { mcp: '1.101', chatProvider: '1.104' } as const;

/** A function-valued member of an API object, if the running host has it (classes are functions too). */
function hostFunction<T>(owner: object, name: string): T | undefined {
  const value: unknown = Reflect.get(owner, name);
  return typeof value === 'function' ? (value as T) : undefined;
}

/** The MCP server definition API if the running host has it (VS Code 1.101 and later), else undefined. */
export function mcpApi(): McpApi | undefined {
  const definition = hostFunction<McpStdioServerDefinitionConstructor>(vscode, 'McpStdioServerDefinition');
  const register = hostFunction<RegisterMcpServerDefinitionProvider>(vscode.lm, 'registerMcpServerDefinitionProvider');
  if (!definition || !register) return undefined;
  return {
    McpStdioServerDefinition: definition,
    registerMcpServerDefinitionProvider: (id, provider) => register.call(vscode.lm, id, provider),
  };
}

/** The language-model chat provider API if the running host has it (VS Code 1.104 and later), else undefined. */
export function chatProviderApi(): { registerLanguageModelChatProvider: RegisterLanguageModelChatProvider } | undefined {
  const register = hostFunction<RegisterLanguageModelChatProvider>(vscode.lm, 'registerLanguageModelChatProvider');
  if (!register) return undefined;
  return { registerLanguageModelChatProvider: (vendor, provider) => register.call(vscode.lm, vendor, provider) };
}
