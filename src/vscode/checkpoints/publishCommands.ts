// "Publish to Hugging Face Hub…" on a checkpoint row, a Models view version row, or from the palette
// (an exported folder, or a tinker:// path): the repo name asked and confirmed, private unless chosen
// otherwise; a checkpoint is exported as a PEFT adapter first (as push-hf does). One cancellable
// progress; a link to the repo when done; the publish recorded on the registry's version.
// "Tinker: Set Hugging Face Token" keeps the token in SecretStorage (HF_TOKEN is the fallback).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { withCancellableWork } from './cancellableWork';
import { isCheckpointRow, targetOf } from './checkpointsTree';
import type { CheckpointCommandServices } from './checkpointCommands';
import { COMMAND } from '../common/commandIds';
import { type Handler, registerTable } from '../common/commandTable';
import { commandArg } from '../common/commandArgs';
import { readNetworkSettings } from '../common/networkSettings';
import { windowUi } from '../common/windowUi';

export interface PublishServices extends CheckpointCommandServices {
  /** the Hugging Face token: stored, else HF_TOKEN */
  hubToken: { get(): Promise<string | undefined>; set(token: string): Promise<void>; clear(): Promise<void>; readonly fromEnvironment: boolean };
}

/** Answers given up front skip their prompt (tests, the agent). */
export interface PublishAnswers {
  folder?: string;
  tinkerPath?: string;
  repo?: string;
  public?: boolean;
  /** true: the confirmation is answered "Publish" */
  confirm?: boolean;
  hubEndpoint?: string;
}

async function answers(a: unknown): Promise<PublishAnswers> {
  const given = await commandArg(COMMAND.checkpointsPublishToHub, 'answers', a, ({ z }) =>
    z.strictObject({ folder: z.string().optional(), tinkerPath: z.string().optional(), repo: z.string().optional(), public: z.boolean().optional(), confirm: z.boolean().optional(), hubEndpoint: z.string().optional() }).optional(),
  );
  return given ?? {};
}

/** A Models view version row, read structurally (the models feature sits above this one). */
function versionRow(node: unknown): { id: string; samplerPath?: string } | undefined {
  if (typeof node !== 'object' || node === null || (node as { kind?: unknown }).kind !== 'version') return undefined;
  const v = (node as { version?: { id?: unknown; sampler_path?: unknown } }).version;
  if (typeof v?.id !== 'string') return undefined;
  return { id: v.id, ...(typeof v.sampler_path === 'string' ? { samplerPath: v.sampler_path } : {}) };
}

type Source = { folder: string } | { tinkerPath: string; version?: string };

async function sourceOf(node: unknown, a: PublishAnswers): Promise<Source | undefined> {
  if (a.folder) return { folder: a.folder };
  if (a.tinkerPath) return { tinkerPath: a.tinkerPath };
  if (isCheckpointRow(node)) {
    const t = targetOf(node);
    if (t) return { tinkerPath: t.tinkerPath };
  }
  const row = versionRow(node);
  if (row) {
    if (!row.samplerPath) throw new Error(`${row.id} has no sampler checkpoint to publish`);
    return { tinkerPath: row.samplerPath, version: row.id };
  }
  const pick = await vscode.window.showQuickPick(
    [
      { label: 'An exported folder…', detail: 'A PEFT adapter or merged model folder (Export as PEFT Adapter…, Merge into Hugging Face Model…)', id: 'folder' },
      { label: 'A tinker:// checkpoint…', detail: 'Downloaded and exported as a PEFT adapter, then published', id: 'path' },
    ],
    { title: 'Publish to Hugging Face Hub: what to publish' },
  );
  if (!pick) return undefined;
  if (pick.id === 'folder') {
    const f = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Publish this folder', title: 'The exported folder to publish' });
    return f?.[0] ? { folder: f[0].fsPath } : undefined;
  }
  const p = await windowUi.showInputBox({
    title: 'Checkpoint to publish',
    prompt: 'A tinker:// path of a sampler checkpoint',
    placeHolder: 'tinker://…/sampler_weights/final',
    validateInput: (v) => (v.trim().startsWith('tinker://') ? undefined : 'Paste a tinker:// path (copy one from the Checkpoints view)'),
  });
  return p?.trim() ? { tinkerPath: p.trim() } : undefined;
}

export function registerPublishCommands(s: PublishServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.checkpointsPublishToHub]: async (n?: unknown, _sel?: unknown, a?: unknown) => publishFlow(s, n, await answers(a)),
    [COMMAND.setHuggingFaceToken]: async () => {
      const t = await windowUi.showInputBox({ title: 'Hugging Face token', prompt: 'A token with write access (huggingface.co/settings/tokens); kept in SecretStorage', password: true, ignoreFocusOut: true });
      if (!t) return false;
      await s.hubToken.set(t);
      void vscode.window.setStatusBarMessage('Tinker: Hugging Face token saved', 5000);
      return true;
    },
    [COMMAND.clearHuggingFaceToken]: async () => {
      await s.hubToken.clear();
      void vscode.window.showInformationMessage(`Hugging Face token removed from VS Code secret storage.${s.hubToken.fromEnvironment ? ' HF_TOKEN in the environment is still used until it is unset.' : ''}`);
      return true;
    },
  };
  return registerTable(table, s.log);
}

async function publishFlow(s: PublishServices, node: unknown, a: PublishAnswers) {
  const { repoIdProblem, HUB_URL_DEFAULT } = await import('../../core/export/publish');
  const token = await s.hubToken.get();
  if (!token) {
    const x = await windowUi.showWarningMessage('Publishing needs a Hugging Face token with write access (or HF_TOKEN in the environment).', 'Set Hugging Face Token');
    if (x) await vscode.commands.executeCommand(COMMAND.setHuggingFaceToken);
    return undefined;
  }
  const source = await sourceOf(node, a);
  if (!source) return undefined;
  const repo = (
    a.repo ??
    (await windowUi.showInputBox({ title: 'Hugging Face repo', prompt: 'owner/name of the model repo to create (or update, when it holds this checkpoint)', placeHolder: 'alice/qwen3-8b-math-lora', validateInput: (v) => repoIdProblem(v.trim()) }))
  )?.trim();
  if (!repo) return undefined;
  const problem = repoIdProblem(repo);
  if (problem) throw new Error(problem);
  let isPublic = a.public;
  if (isPublic === undefined) {
    const v = await vscode.window.showQuickPick([{ label: 'Private', description: 'only you (and your organisation) can see it', pub: false }, { label: 'Public', description: 'anyone can see and download it', pub: true }], { title: `Visibility of ${repo}` });
    if (!v) return undefined;
    isPublic = v.pub;
  }
  const hubUrl = a.hubEndpoint ?? (process.env.HF_ENDPOINT?.trim() || HUB_URL_DEFAULT);
  const what = 'folder' in source ? source.folder : source.tinkerPath;
  if (a.confirm !== true) {
    const ok = await vscode.window.showWarningMessage(`Publish ${what} to ${repo}, a ${isPublic ? 'PUBLIC' : 'private'} repo on ${new URL(hubUrl).host}?`, { modal: true }, 'Publish');
    if (ok !== 'Publish') return undefined;
  }
  const { publishAndRecord } = await import('../../core/models/exports');
  const { registryFileIn } = await import('../../core/models/store');
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const result = await withCancellableWork(`Publishing to ${repo}`, 'publish', async ({ progress, signal, scratch, advance }) => {
    let temporary = false;
    let folder: string;
    if ('folder' in source) folder = source.folder;
    else {
      const work = await scratch();
      temporary = true;
      progress.report({ message: 'downloading the checkpoint' });
      const { downloadCheckpoint } = await import('../../core/checkpoints/download');
      const ckpt = await downloadCheckpoint(await s.connection.get(), source.tinkerPath, path.join(work, 'checkpoint'), { signal, network: readNetworkSettings() });
      const { exportCheckpoint } = await import('../../core/export/exportCheckpoint');
      folder = (await exportCheckpoint({ kind: 'adapter', checkpointDir: ckpt.dir, outDir: path.join(work, 'adapter'), tinkerPath: source.tinkerPath, signal })).dir;
    }
    return await publishAndRecord({
      folder,
      repo,
      public: isPublic,
      token,
      hubUrl,
      signal,
      ...('tinkerPath' in source ? { tinkerPath: source.tinkerPath, ...(source.version ? { version: source.version } : {}) } : {}),
      ...(root ? { registryFile: registryFileIn(root), temporaryFolder: temporary } : {}),
      onProgress: (p) => {
        if (p.phase === 'retrying') progress.report({ message: `the Hub failed on the way; trying again (attempt ${p.attempt})` });
        if (p.phase !== 'uploading') return;
        advance(`uploading ${p.file ?? ''}`, p.done, p.total);
      },
    });
  });
  if (!result) {
    void vscode.window.setStatusBarMessage(`Tinker: publishing to ${repo} cancelled; nothing was committed`, 5000);
    return undefined;
  }
  const { published, version } = result;
  s.log.info(`published ${what} to ${published.url} (${published.private ? 'private' : 'public'}, ${published.files.length} files, sha256 ${published.sha256})${version ? `; recorded on ${version}` : ''}`);
  void vscode.window.showInformationMessage(`Published to ${published.url}${published.private ? ' (private)' : ''}`, 'Open on the Hub').then((x) => {
    if (x === 'Open on the Hub') void vscode.env.openExternal(vscode.Uri.parse(published.url));
  });
  return { url: published.url, created: published.created, private: published.private, sha256: published.sha256, ...(version ? { version } : {}) };
}
