// "Copy OpenAI-Compatible Endpoint" and "Chat with This Checkpoint" (on a sampler checkpoint of the
// Checkpoints view, or from the palette, which asks for one), and "Remove Checkpoints from Chat
// Models…". The endpoint is the backend's OpenAI-compatible base URL and the checkpoint's model string
// (its tinker:// path); the local engine's key is copied only after a warning that it is a secret, the
// cloud's never. Chatting pins the checkpoint as a model of the "tinker" vendor (chatModels.ts); on a
// VS Code without the language-model chat provider API the command says why it cannot.
import * as vscode from 'vscode';
import { errorMessage } from '../../core/errors';
import { COMMAND } from '../common/commandIds';
import { CommandArgumentError } from '../common/commandArgs';
import { Handler, registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import { NEWER_API_SINCE } from '../common/newerApis';
import { windowUi } from '../common/windowUi';
import { isCheckpointRow, targetOf, type CheckpointNode } from '../checkpoints/checkpointsTree';
import type { TinkerConnection } from '../connection/connection';
import type { RunsModel } from '../runs/runsModel';
import type { PinnedCheckpoint, TinkerChatModels } from './chatModels';
import { CHAT_VENDOR } from './chatModels';

export interface ChatCommandServices {
  log: Log;
  connection: Pick<TinkerConnection, 'get' | 'openAiEndpoint'>;
  models: TinkerChatModels;
  runs: Pick<RunsModel, 'list'>;
}

/** What "Copy OpenAI-Compatible Endpoint" copied (the key itself is never returned). */
export interface CopiedEndpoint {
  baseUrl: string;
  model: string;
  keyCopied: boolean;
}

/** What "Chat with This Checkpoint" did. */
export type ChatWithCheckpointResult = { available: false; reason: string } | { available: true; id: string; name: string; baseModel: string };

/** The answers a test (or another command) gives instead of the prompts. */
interface EndpointAnswers {
  /** true: copy the local engine's key too (the warning answered "Copy with Key") */
  copyKey?: boolean;
}

const COPY_WITH_KEY = 'Copy with Key';
const COPY_WITHOUT_KEY = 'Copy without Key';

export function registerChatCommands(s: ChatCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.copyOpenAiEndpoint]: async (node?: unknown, _sel?: unknown, a?: unknown) => copyEndpoint(s, await samplerTarget(s, node, 'Copy OpenAI-Compatible Endpoint'), endpointAnswers(a)),
    [COMMAND.chatWithCheckpoint]: async (node?: unknown) => chatWith(s, node),
    [COMMAND.chatRemoveCheckpoints]: async (paths?: unknown) => removePins(s, paths),
  };
  return registerTable(table, s.log);
}

function endpointAnswers(a: unknown): EndpointAnswers {
  if (a === undefined) return {};
  if (typeof a !== 'object' || a === null || Object.keys(a).some((k) => k !== 'copyKey') || !['boolean', 'undefined'].includes(typeof (a as EndpointAnswers).copyKey)) {
    throw new CommandArgumentError(`${COMMAND.copyOpenAiEndpoint} was called with an unusable answers argument: expected { copyKey?: boolean }`);
  }
  return a as EndpointAnswers;
}

/** A sampler checkpoint: the clicked row, a tinker:// path given as the argument, or one the person picks. */
interface SamplerTarget {
  path: string;
  label: string;
}

async function samplerTarget(s: ChatCommandServices, node: unknown, title: string): Promise<SamplerTarget | undefined> {
  if (typeof node === 'string') return checkSampler({ path: node.trim(), label: labelOfPath(node.trim()) });
  if (node !== undefined && node !== null) {
    if (!isCheckpointRow(node)) throw new CommandArgumentError(`${title}: the argument is neither a row of the Checkpoints view nor a tinker:// path`);
    const t = targetOf(node);
    if (!t) throw new Error('Select a sampler checkpoint (…/sampler_weights/…) in the Checkpoints view.');
    if (t.kind !== 'sampler') throw new Error(`${t.tinkerPath} is ${t.kind === 'state' ? 'a training state' : `a checkpoint of type "${t.kind}"`}; only sampler weights (…/sampler_weights/…) are served for inference.`);
    return { path: t.tinkerPath, label: labelOfRow(node, t.tinkerPath) };
  }
  return pickSampler(s, title);
}

function checkSampler(t: SamplerTarget): SamplerTarget {
  if (!/^tinker:\/\/[^/]+\/sampler_weights\/.+/.test(t.path)) throw new Error(`"${t.path}" is not a sampler checkpoint path (tinker://<run>/sampler_weights/<name>).`);
  return t;
}

function labelOfPath(p: string): string {
  const m = /^tinker:\/\/([^/]+)\/sampler_weights\/(.+)$/.exec(p);
  return m ? `${m[1]} · ${m[2]}` : p;
}

function labelOfRow(node: CheckpointNode, p: string): string {
  if (node.kind === 'path') return `${node.run.name} · ${node.checkpoint.name}`;
  return labelOfPath(p);
}

/** The palette's question: the runs' sampler checkpoints, the pinned ones, or a path typed in. */
async function pickSampler(s: ChatCommandServices, title: string): Promise<SamplerTarget | undefined> {
  type Item = vscode.QuickPickItem & { target?: SamplerTarget; typed?: true };
  const items: Item[] = [];
  const seen = new Set<string>();
  for (const p of s.models.pinned()) {
    seen.add(p.path);
    items.push({ label: p.label, description: 'chat model', detail: p.path, target: { path: p.path, label: p.label } });
  }
  try {
    for (const r of await s.runs.list()) {
      for (const c of [...r.checkpoints].reverse()) {
        if (!c.sampler_path || seen.has(c.sampler_path)) continue;
        seen.add(c.sampler_path);
        items.push({ label: `${r.name} · ${c.name}`, detail: c.sampler_path, target: { path: c.sampler_path, label: `${r.name} · ${c.name}` } });
      }
    }
  } catch (err) {
    s.log.warn(`${title}: the runs folder could not be listed: ${errorMessage(err)}`);
  }
  items.push({ label: '$(edit) Enter a tinker:// sampler path…', typed: true, alwaysShow: true });
  const picked = await vscode.window.showQuickPick(items, { title, placeHolder: 'A sampler checkpoint', matchOnDetail: true });
  if (!picked) return undefined;
  if (picked.target) return picked.target;
  const typed = await windowUi.showInputBox({
    title,
    prompt: 'A sampler checkpoint path',
    placeHolder: 'tinker://<run>/sampler_weights/<name>',
    validateInput: (v) => (/^tinker:\/\/[^/]+\/sampler_weights\/.+/.test(v.trim()) ? undefined : 'tinker://<run>/sampler_weights/<name>'),
  });
  return typed === undefined ? undefined : checkSampler({ path: typed.trim(), label: labelOfPath(typed.trim()) });
}

async function copyEndpoint(s: ChatCommandServices, t: SamplerTarget | undefined, a: EndpointAnswers): Promise<CopiedEndpoint | undefined> {
  if (!t) return undefined;
  const plain = await s.connection.openAiEndpoint({ withKey: false });
  let withKey = false;
  if (plain.backend === 'local') {
    const answer =
      a.copyKey === undefined
        ? await windowUi.showWarningMessage(
            'The local engine’s key is a secret: anyone who has it can use the engine while it runs (it changes when the engine restarts). Copy it with the endpoint?',
            COPY_WITH_KEY,
            COPY_WITHOUT_KEY,
          )
        : a.copyKey
          ? COPY_WITH_KEY
          : COPY_WITHOUT_KEY;
    if (answer === undefined) return undefined;
    withKey = answer === COPY_WITH_KEY;
  }
  const endpoint = withKey ? await s.connection.openAiEndpoint({ withKey: true }) : plain;
  const lines = [`OPENAI_BASE_URL=${endpoint.baseUrl}`];
  if (withKey && endpoint.apiKey) lines.push(`OPENAI_API_KEY=${endpoint.apiKey}`);
  else if (plain.backend === 'local') lines.push('# OPENAI_API_KEY: the local engine’s key (not copied)');
  else lines.push('# OPENAI_API_KEY: your Tinker API key (not copied)');
  lines.push(`# model: ${t.path}`);
  await vscode.env.clipboard.writeText(lines.join('\n') + '\n');
  void vscode.window.setStatusBarMessage(`Copied the OpenAI-compatible endpoint of ${t.label}${withKey ? ' (with the engine’s key)' : ''}`, 5000);
  s.log.info(`copied the OpenAI-compatible endpoint ${endpoint.baseUrl} and model ${t.path}${withKey ? ' with the engine’s key' : ''}`);
  return { baseUrl: endpoint.baseUrl, model: t.path, keyCopied: withKey && endpoint.apiKey !== undefined };
}

async function chatWith(s: ChatCommandServices, node: unknown): Promise<ChatWithCheckpointResult | undefined> {
  if (!s.models.registered) {
    const reason = `Chatting with a checkpoint needs VS Code ${NEWER_API_SINCE.chatProvider} or later (the language-model chat provider API); this is VS Code ${vscode.version}. Use "Open in Playground" or "Copy OpenAI-Compatible Endpoint" instead.`;
    void vscode.window.showInformationMessage(reason);
    return { available: false, reason };
  }
  const t = await samplerTarget(s, node, 'Chat with This Checkpoint');
  if (!t) return undefined;
  const pin = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Looking up ${t.path}…`, cancellable: true }, async (_p, token) => {
    const abort = new AbortController();
    const sub = token.onCancellationRequested(() => abort.abort());
    try {
      const service = await s.connection.get();
      const info = await service.weightsInfo(t.path, abort.signal);
      const contextLength = await service.contextLength(info.base_model, abort.signal).catch(() => undefined);
      return { path: t.path, label: t.label, baseModel: info.base_model, ...(contextLength ? { contextLength } : {}) } satisfies PinnedCheckpoint;
    } catch (err) {
      if (abort.signal.aborted) return undefined;
      throw new Error(`${t.path} cannot be served: ${errorMessage(err)}`);
    } finally {
      sub.dispose();
    }
  });
  if (!pin) return undefined;
  await s.models.pin(pin);
  s.log.info(`chat model pinned: ${pin.label} (${pin.path}, base ${pin.baseModel})`);
  void vscode.window
    .showInformationMessage(`"${pin.label}" is a chat model now (vendor "${CHAT_VENDOR}"): choose it in the chat view’s model picker.`, 'Open Chat')
    .then((x) => {
      if (x === 'Open Chat') void vscode.commands.executeCommand('workbench.action.chat.open');
    });
  return { available: true, id: pin.path, name: pin.label, baseModel: pin.baseModel };
}

async function removePins(s: ChatCommandServices, given: unknown): Promise<string[] | undefined> {
  let paths: string[];
  if (given !== undefined) {
    if (!Array.isArray(given) || !given.every((p): p is string => typeof p === 'string')) throw new CommandArgumentError(`${COMMAND.chatRemoveCheckpoints} was called with an unusable argument: expected a list of tinker:// paths`);
    paths = given;
  } else {
    const pinned = s.models.pinned();
    if (!pinned.length) {
      void vscode.window.showInformationMessage('No checkpoint is a chat model: use "Chat with This Checkpoint" on a sampler checkpoint.');
      return [];
    }
    const picked = await vscode.window.showQuickPick(
      pinned.map((p) => ({ label: p.label, detail: p.path, path: p.path })),
      { title: 'Remove Checkpoints from Chat Models', canPickMany: true },
    );
    if (!picked?.length) return undefined;
    paths = picked.map((p) => p.path);
  }
  await s.models.unpin(paths);
  return paths;
}
