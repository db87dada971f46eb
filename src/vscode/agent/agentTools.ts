// The agent tools (src/core/agent) in VS Code: language-model tools for agent mode, each asking the
// person before it spends compute or changes saved state, and an MCP server definition so agents
// outside agent mode reach the same tools through `tinker-studio mcp`. The extension host owns the
// session and its loop: the run an agent trains shows in the Runs tree, the status bar and the metrics
// panel like any other, and "Cancel Run" stops it; a sweep an agent starts runs in the window's sweep
// runner (its node in the Runs view, Cancel Sweep), without a progress notification.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TrainingSession } from '../../core/agent/session';
import type { SweepProgress } from '../../core/experiments/runSweep';
import type { AgentTool } from '../../core/agent/tools';
import type { TinkerConnection } from '../connection/connection';
import type { Log } from '../common/log';
import { resolvePython } from '../common/pythonInterpreter';
import type { RunRegistry } from '../runs/runRegistry';
import type { RunsModel } from '../runs/runsModel';
import type { ApiKeyStore } from '../connection/secrets';
import { readBackendFor } from '../common/settings';
import { mcpApi, NEWER_API_SINCE } from '../common/newerApis';
import { errorMessage } from '../../core/errors';

export interface AgentToolServices {
  log: Log;
  apiKeys: ApiKeyStore;
  /** the Hugging Face token store (publish_to_hub) */
  hubToken?: { get(): Promise<string | undefined> };
  runs: RunsModel;
  connection: TinkerConnection;
  registry: RunRegistry;
  cacheDir: string;
  extensionPath: string;
  /** the extension's package.json: the tool names it contributes (languageModelTools) */
  packageJSON: unknown;
  /** the window's sweep runner (experiments/sweepRunner.ts, by shape): an agent's start_sweep runs there, its runs in the Runs view and Cancel Sweep on its node */
  sweeps: {
    start(file: string, o: { maxConcurrent?: number; notify?: boolean; onProgress?: (p: SweepProgress) => void; budget?: { max_cost_usd?: number; max_tokens_total?: number } }): Promise<{ cancelled: boolean } | undefined>;
    byDir(dir: string): { progress: SweepProgress } | undefined;
    cancel(dir: string): boolean;
  };
}

const field = (v: unknown, k: string): unknown => (typeof v === 'object' && v !== null && k in v ? (v as { [key: string]: unknown })[k] : undefined);

/** The agent tool names package.json contributes (a unit test checks them against the core's table). */
export function contributedToolNames(packageJSON: unknown): string[] {
  const tools = field(field(packageJSON, 'contributes'), 'languageModelTools');
  return Array.isArray(tools) ? tools.map((t: unknown) => field(t, 'name')).filter((n): n is string => typeof n === 'string') : [];
}

const MCP_PROVIDER_ID = 'tinker-studio.agent';

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function registerAgentTools(s: AgentToolServices): vscode.Disposable[] {
  let session: Promise<TrainingSession> | undefined;
  const sessionFor = (root: string): Promise<TrainingSession> =>
    (session ??= (async () => {
      const { TrainingSession } = await import('../../core/agent/session');
      const python = await resolvePython(vscode.Uri.file(root), s.log);
      return new TrainingSession({
        runsDir: s.runs.runsFolder,
        cacheDir: s.cacheDir,
        baseDir: root,
        python: python.path,
        ...(s.hubToken ? { hubToken: () => s.hubToken!.get() } : {}),
        connect: async (spec) => {
          const backend = await readBackendFor(spec.backend, spec.base_url);
          if (backend.kind === 'cloud' && !(await s.apiKeys.get())) throw new Error('the Tinker cloud needs an API key: run "Tinker: Set API Key" first');
          return s.connection.open(backend);
        },
        idleMs: Math.max(0, vscode.workspace.getConfiguration('tinker').get<number>('agent.idleMinutes', 60)) * 60_000,
        watch: (runName, specFile, kind) => {
          const run = s.registry.begin(specFile, runName, kind);
          return {
            signal: run.abort.signal,
            onEvent: (e) => {
              s.registry.apply(run, e);
              if (e.type === 'started') void s.runs.refresh();
            },
            onEnd: (r) => {
              s.registry.finish(run, r);
              void s.runs.refresh();
            },
          };
        },
        sweeps: {
          start: (file, o) => s.sweeps.start(file, { ...o, notify: false }),
          running: (dir) => s.sweeps.byDir(dir)?.progress,
          cancel: (dir) => void s.sweeps.cancel(dir),
        },
        log: (line) => s.log.info(`[agent] ${line}`),
      });
    })());

  // registered by name at once; the table (and zod with it) loads on the first use
  const toolNamed = async (name: string): Promise<AgentTool> => {
    const { agentTool } = await import('../../core/agent/tools');
    const t = agentTool(name);
    if (!t) throw new Error(`package.json contributes a tool "${name}" that src/core/agent/tools.ts does not define`);
    return t;
  };
  const disposables: vscode.Disposable[] = [{ dispose: () => void session?.then((x) => x.close('the window closed')) }];
  disposables.push(...contributedToolNames(s.packageJSON).map((name) => vscode.lm.registerTool(name, languageModelTool(() => toolNamed(name), sessionFor, s.log))));
  const mcp = mcpApi();
  if (!mcp) {
    // VS Code before 1.101 has no MCP server definitions: the contribution stays inert, and agents reach
    // the same tools through `tinker-studio mcp` in their own MCP configuration (docs/vscode-versions.md)
    s.log.info(`MCP server definition: this VS Code (${vscode.version}) has no MCP server definition API (VS Code ${NEWER_API_SINCE.mcp} and later); add "tinker-studio mcp" to your MCP client's configuration instead (docs/vscode-versions.md)`);
    return disposables;
  }
  disposables.push(
    mcp.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      provideMcpServerDefinitions: () => {
        const root = workspaceRoot();
        if (!root || !vscode.workspace.isTrusted) return [];
        // the extension host's own executable runs the bundled CLI as plain Node (Electron honours
        // ELECTRON_RUN_AS_NODE; code-server's host is Node already)
        const cli = path.join(s.extensionPath, 'dist', 'cli.js');
        return [new mcp.McpStdioServerDefinition('Tinker Studio', process.execPath, [cli, 'mcp', '--workspace', root, '--runs-dir', s.runs.runsFolder], { ELECTRON_RUN_AS_NODE: '1' })];
      },
    }),
  );
  return disposables;
}

function languageModelTool(tool: () => Promise<AgentTool>, sessionFor: (root: string) => Promise<TrainingSession>, log: Log): vscode.LanguageModelTool<unknown> {
  return {
    prepareInvocation: async (options) => {
      const t = await tool();
      const summary = describeInput(options.input);
      return t.confirm
        ? {
            invocationMessage: `Tinker: ${t.title}${summary}`,
            confirmationMessages: { title: `Tinker: ${t.title}?`, message: new vscode.MarkdownString(`${t.description}${summary ? `\n\nInput: \`${summary.slice(3)}\`` : ''}`) },
          }
        : { invocationMessage: `Tinker: ${t.title}` };
    },
    invoke: async (options, token) => {
      const t = await tool();
      const root = workspaceRoot();
      if (!root) throw new Error('open a folder first: the tools resolve spec and prompt files against the workspace');
      // the tools run the reward function's code: never in a workspace the person has not trusted
      if (!vscode.workspace.isTrusted) throw new Error('the Tinker tools run reward code, so they are disabled in an untrusted workspace');
      const abort = new AbortController();
      const sub = token.onCancellationRequested(() => abort.abort());
      try {
        const r = await t.run(await sessionFor(root), options.input, abort.signal);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(r.text)]);
      } catch (err) {
        const message = errorMessage(err);
        log.warn(`agent tool ${t.name}: ${message}`);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`error: ${message}`)]);
      } finally {
        sub.dispose();
      }
    },
  };
}

function describeInput(input: unknown): string {
  if (typeof input !== 'object' || input === null || Object.keys(input).length === 0) return '';
  const text = JSON.stringify(input);
  return ` — ${text.length > 120 ? `${text.slice(0, 120)}…` : text}`;
}
