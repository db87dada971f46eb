// "Export Engine Model for transformers…" on a checkpoint row of the local engine, or from the palette
// (a tinker:// path or an engine model's name asked for): the engine's own weights (the base model with
// the checkpoint's LoRA merged) written as a transformers folder by the engine's exporter — the same
// code as `tinker-studio export engine`. The engine code lives in the extension's bundle already (it
// runs the local engine); src/core stays free of it.
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

async function sourceOf(node: unknown): Promise<string | undefined> {
  if (isCheckpointRow(node)) {
    const t = targetOf(node);
    if (t) return t.tinkerPath;
  }
  return windowUi.showInputBox({
    title: 'Engine model to export',
    prompt: 'A tinker:// path of a local-engine checkpoint, or an engine model (tinker-studio/arith-chat)',
    placeHolder: 'tinker://…/sampler_weights/final',
    validateInput: (v) => (v.trim() ? undefined : 'Paste a tinker:// path (copy one from the Checkpoints view) or an engine model name'),
  });
}

export function registerEngineExportCommand(s: CheckpointCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.checkpointsExportEngineModel]: async (n?: unknown, _sel?: unknown, a?: unknown) => {
      const given = await commandArg(COMMAND.checkpointsExportEngineModel, 'answers', a, ({ z }) => z.strictObject({ output: z.string().optional() }).optional());
      return exportEngineFlow(s, n, given?.output);
    },
  };
  return registerTable(table, s.log);
}

async function exportEngineFlow(s: CheckpointCommandServices, node: unknown, givenOutput: string | undefined) {
  const source = (await sourceOf(node))?.trim();
  if (!source) return undefined;
  const { downloadFolderName } = await import('../../core/checkpoints/download');
  let output = givenOutput;
  if (!output) {
    const picked = await windowUi.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Export here', title: `Export ${source} for transformers into…` });
    if (!picked?.[0]) return undefined;
    output = path.join(picked[0].fsPath, `${source.startsWith('tinker://') ? downloadFolderName(source) : path.basename(source)}-transformers`);
  }
  const out = output;
  const result = await withCancellableWork(`Exporting ${source} for transformers`, 'engine-export', async ({ progress, signal, scratch }) => {
    let from = source;
    if (source.startsWith('tinker://')) {
      progress.report({ message: 'downloading the checkpoint' });
      const { downloadCheckpoint } = await import('../../core/checkpoints/download');
      from = (await downloadCheckpoint(await s.connection.get(), source, await scratch(), { signal, network: readNetworkSettings() })).dir;
    }
    if (signal.aborted) return undefined;
    progress.report({ message: 'merging the LoRA into the base weights and writing model.safetensors' });
    const { exportEngineModel } = await import('../../engine/model/hfExport');
    return await exportEngineModel({ source: from, outDir: out });
  });
  if (!result) {
    void vscode.window.setStatusBarMessage('Tinker: export cancelled; nothing was written', 5000);
    return undefined;
  }
  s.log.info(`exported ${source} (engine, ${result.architecture}) into ${result.dir}: ${result.files.join(', ')}`);
  void vscode.window.showInformationMessage(`${result.architecture} of ${result.baseModel} for transformers written to ${result.dir}`, 'Reveal').then((x) => {
    if (x === 'Reveal') void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(result.dir));
  });
  return result;
}
