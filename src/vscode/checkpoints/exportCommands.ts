// "Export as PEFT Adapter…" and "Merge into Hugging Face Model…" on a checkpoint row (state or sampler)
// or from the palette (a tinker:// path asked for): the archive is downloaded into a temporary folder,
// then exported with src/core/export; for a merge the base model's folder is chosen, or fetched from
// the hub. All of it runs in one cancellable progress notification; the output appears only complete.
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

/** Answers given up front skip their prompt (tests, other commands). */
export interface ExportAnswers {
  /** the folder the export is written into (must not exist) */
  output?: string;
  /** the base model's Hugging Face folder (merge) */
  base?: string;
  /** fetch the base from the hub instead, into this folder */
  hubInto?: string;
  /** the hub's address (default $HF_ENDPOINT, else huggingface.co) */
  hubEndpoint?: string;
}

async function answers(command: string, a: unknown): Promise<ExportAnswers> {
  const given = await commandArg(command, 'answers', a, ({ z }) =>
    z.strictObject({ output: z.string().optional(), base: z.string().optional(), hubInto: z.string().optional(), hubEndpoint: z.string().optional() }).optional(),
  );
  return given ?? {};
}

async function tinkerPathOf(node: unknown): Promise<string | undefined> {
  if (isCheckpointRow(node)) {
    const t = targetOf(node);
    if (t) return t.tinkerPath;
  }
  return windowUi.showInputBox({
    title: 'Checkpoint to export',
    prompt: 'A tinker:// path of a sampler or state checkpoint',
    placeHolder: 'tinker://…/sampler_weights/final',
    validateInput: (v) => (v.trim().startsWith('tinker://') ? undefined : 'Paste a tinker:// path (copy one from the Checkpoints view)'),
  });
}

async function pickFolder(title: string, openLabel: string): Promise<string | undefined> {
  const picked = await windowUi.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel, title });
  return picked?.[0]?.fsPath;
}

export function registerExportCommands(s: CheckpointCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.checkpointsExportAdapter]: async (n?: unknown, _sel?: unknown, a?: unknown) => exportFlow(s, 'adapter', n, await answers(COMMAND.checkpointsExportAdapter, a)),
    [COMMAND.checkpointsMergeModel]: async (n?: unknown, _sel?: unknown, a?: unknown) => exportFlow(s, 'merge', n, await answers(COMMAND.checkpointsMergeModel, a)),
  };
  return registerTable(table, s.log);
}

async function exportFlow(s: CheckpointCommandServices, kind: 'adapter' | 'merge', node: unknown, a: ExportAnswers) {
  const tinkerPath = (await tinkerPathOf(node))?.trim();
  if (!tinkerPath) return undefined;
  const { downloadCheckpoint, downloadFolderName } = await import('../../core/checkpoints/download');
  let output = a.output;
  if (!output) {
    const parent = await pickFolder(`${kind === 'adapter' ? 'Export' : 'Merge'} ${tinkerPath} into…`, kind === 'adapter' ? 'Export here' : 'Merge here');
    if (!parent) return undefined;
    output = path.join(parent, `${downloadFolderName(tinkerPath)}-${kind === 'adapter' ? 'peft' : 'merged'}`);
  }
  let base = a.base;
  let hubInto = a.hubInto;
  if (kind === 'merge' && !base && !hubInto) {
    const choice = await vscode.window.showQuickPick(
      [
        { label: 'Choose the base model\'s folder…', detail: 'A Hugging Face folder: config.json, *.safetensors, tokenizer files', id: 'folder' },
        { label: 'Download the base model from the Hugging Face hub…', detail: 'Its config, tokenizer and safetensors files, into a folder you choose', id: 'hub' },
      ],
      { title: 'The base model to merge into' },
    );
    if (!choice) return undefined;
    if (choice.id === 'folder') base = await pickFolder('The base model\'s Hugging Face folder', 'Use this base');
    else hubInto = await pickFolder('Download the base model into…', 'Download here');
    if (!base && !hubInto) return undefined;
  }
  const client = await s.connection.get();
  const { exportCheckpoint } = await import('../../core/export/exportCheckpoint');
  const out = output;
  const result = await withCancellableWork(kind === 'adapter' ? `Exporting ${tinkerPath} as a PEFT adapter` : `Merging ${tinkerPath} into a Hugging Face model`, 'export', async ({ progress, signal, scratch, advance }) => {
    progress.report({ message: 'downloading the checkpoint' });
    const ckpt = await downloadCheckpoint(client, tinkerPath, await scratch(), { signal, network: readNetworkSettings() });
    let baseDir = base;
    if (kind === 'merge' && !baseDir && hubInto) {
      const { openTinkerAdapter } = await import('../../core/export/adapter');
      const adapter = await openTinkerAdapter(ckpt.dir);
      await adapter.reader.close();
      if (!adapter.baseModel) throw new Error(`${tinkerPath}: its adapter_config.json names no base model; choose the base model's folder instead`);
      const { downloadHubModel } = await import('../../core/export/hubModel');
      const hub = await downloadHubModel({
        repo: adapter.baseModel,
        destDir: hubInto,
        network: readNetworkSettings(),
        signal,
        ...(a.hubEndpoint ? { endpoint: a.hubEndpoint } : {}),
        onProgress: (p) => progress.report({ message: `base model: ${p.file} (${p.index + 1} of ${p.files}), ${(p.received / 1e6).toFixed(0)} MB` }),
      });
      baseDir = hub.dir;
    }
    return await exportCheckpoint({
      kind,
      checkpointDir: ckpt.dir,
      outDir: out,
      tinkerPath,
      signal,
      ...(baseDir ? { baseDir } : {}),
      onProgress: (p) => advance(`merging ${p.tensor}`, p.done, p.total),
    });
  });
  if (!result) {
    void vscode.window.setStatusBarMessage('Tinker: export cancelled; nothing was written', 5000);
    return undefined;
  }
  s.log.info(`exported ${tinkerPath} (${kind}) into ${result.dir}: ${result.files.join(', ')}`);
  void vscode.window.showInformationMessage(`${kind === 'adapter' ? 'PEFT adapter' : 'Merged model'} of ${tinkerPath} written to ${result.dir}`, 'Reveal').then((x) => {
    if (x === 'Reveal') void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(result.dir));
  });
  return result;
}
