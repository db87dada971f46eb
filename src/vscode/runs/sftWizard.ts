// The guided flow behind "Tinker: Start SFT Run" when no spec is at hand: the model (the server's
// list), the chats (JSONL), the validation set, batch size and steps, then a new *.sft.json written
// through an undoable WorkspaceEdit. Answers given up front (tests, other commands) skip their question.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ResolvedBackend } from '../../core/config/backendKinds';
import { TinkerConnection } from '../connection/connection';
import { readBackend } from '../common/settings';
import { askInt, askSpecFile, pickFile, pickModel, writeSpecFile } from './specWizard';

export interface SftAnswers {
  backend: ResolvedBackend;
  model: string;
  /** start from these weights (a tinker:// state path), e.g. picked in the Checkpoints view */
  loadCheckpointPath?: string;
  /** JSONL of chats ({"messages": […]} or {"prompt", "completion"}) */
  dataset: string;
  validation: { path: string } | { fraction: number } | 'none';
  batchSize: number;
  maxSteps: number;
  /** absolute, ends in .sft.json */
  specFile: string;
}

export function sftSpecText(a: SftAnswers): string {
  const dir = path.dirname(a.specFile);
  const rel = (p: string) => path.relative(dir, p).split(path.sep).join('/');
  const spec = {
    backend: a.backend.kind,
    ...(a.backend.kind === 'custom' ? { base_url: a.backend.baseUrl } : {}),
    model: a.model,
    ...(a.loadCheckpointPath ? { load_checkpoint_path: a.loadCheckpointPath } : {}),
    batch_size: a.batchSize,
    max_steps: a.maxSteps,
    eval_every: a.validation === 'none' ? 0 : Math.max(1, Math.min(10, Math.floor(a.maxSteps / 4))),
    save_every: Math.max(1, Math.floor(a.maxSteps / 2)),
    dataset: {
      path: rel(a.dataset),
      ...(a.validation === 'none' ? {} : { validation: 'path' in a.validation ? { path: rel(a.validation.path) } : { fraction: a.validation.fraction } }),
    },
  };
  return `${JSON.stringify(spec, null, 2)}\n`;
}

export async function askSftSpec(connection: TinkerConnection, given: Partial<SftAnswers>): Promise<SftAnswers | undefined> {
  const title = 'New SFT run';
  const backend = given.backend ?? (await readBackend());
  const model = given.model ?? (await pickModel(connection, title, '1/4'));
  if (!model) return undefined;
  const dataset = given.dataset ?? (await pickFile(`${title} (2/4): chats`, '**/*.jsonl', 'JSONL chats: {"messages": [...]} or {"prompt", "completion"} per line', { JSONL: ['jsonl'] }));
  if (!dataset) return undefined;
  const validation = given.validation ?? (await pickValidation(title, dataset));
  if (!validation) return undefined;
  const local = model.startsWith('tinker-studio/');
  const batchSize = given.batchSize ?? (await askInt(`${title} (4/4): batch size`, 'Chats per optimizer step', local ? 32 : 128, 1));
  if (batchSize === undefined) return undefined;
  const maxSteps = given.maxSteps ?? (await askInt(`${title} (4/4): steps`, 'Optimizer steps to run', 20, 1));
  if (maxSteps === undefined) return undefined;
  const specFile = given.specFile ?? (await askSpecFile('sft', title, model, dataset));
  if (!specFile) return undefined;
  return { backend, model, ...(given.loadCheckpointPath ? { loadCheckpointPath: given.loadCheckpointPath } : {}), dataset, validation, batchSize, maxSteps, specFile };
}

async function pickValidation(title: string, dataset: string): Promise<SftAnswers['validation'] | undefined> {
  const siblings = (await vscode.workspace.findFiles(new vscode.RelativePattern(vscode.Uri.file(path.dirname(dataset)), '*.jsonl'), null, 50)).map((u) => u.fsPath).filter((f) => f !== dataset);
  type Item = vscode.QuickPickItem & { value: SftAnswers['validation'] };
  const items: Item[] = [
    { label: '10% of the chats', description: 'split off by the seed', value: { fraction: 0.1 } },
    ...siblings.map((f) => ({ label: path.basename(f), description: 'validation file', value: { path: f } })),
    { label: 'No validation', description: 'no test/nll', value: 'none' },
  ];
  return (await vscode.window.showQuickPick(items, { title: `${title} (3/4): validation`, placeHolder: 'Chats kept out of training for the validation NLL', ignoreFocusOut: true }))?.value;
}

export function writeSftSpec(a: SftAnswers): Promise<vscode.Uri> {
  return writeSpecFile(a.specFile, sftSpecText(a));
}
