// The guided flow behind "Tinker: Start GRPO Run" when no spec is at hand: quick picks for the
// model (the server's list), renderer (defaulted from the model), dataset, holdout, reward file or
// environment file (`*.env.py`, …: the spec then takes `env` instead of `reward`) and the main numbers, then a new *.grpo.json written through a WorkspaceEdit (so it can be
// undone) and saved. Answers given up front (tests, other commands) skip their question.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ResolvedBackend } from '../../core/config/backendKinds';
import { TinkerConnection } from '../connection/connection';
import { readBackend } from '../common/settings';
import { isSpecFileOf, type SpecKind, specKind } from '../../core/spec/kinds';
import { ENV_FILE_SUFFIXES, isEnvFile } from '../../core/env/files';

export interface SpecAnswers {
  /** where the models were listed from: the backend the settings select */
  backend: ResolvedBackend;
  model: string;
  /** start from these weights (a tinker:// state path), e.g. picked in the Checkpoints view */
  loadCheckpointPath?: string;
  renderer: string;
  dataset: string;
  /** a JSONL file, a fraction of the dataset, or none */
  holdout: { path: string } | { fraction: number } | 'none';
  /** the reward function, or an environment file (named `*.env.py`, `*.env.ts`, …): the spec's `env` instead of `reward` */
  reward: string;
  groupSize: number;
  groupsPerBatch: number;
  iterations: number;
  maxTokens: number;
  /** where the spec is written (absolute, ends in .grpo.json) */
  specFile: string;
}

export const EXCLUDE = '{**/node_modules/**,**/runs/**,**/.git/**,**/out/**,**/dist/**}';

/** The spec file's text: paths relative to its folder, keys in the order people read them. */
export function specText(a: SpecAnswers): string {
  const dir = path.dirname(a.specFile);
  const rel = (p: string) => path.relative(dir, p).split(path.sep).join('/');
  const evalEvery = Math.max(1, Math.min(5, Math.floor(a.iterations / 2)));
  const spec = {
    backend: a.backend.kind,
    ...(a.backend.kind === 'custom' ? { base_url: a.backend.baseUrl } : {}),
    model: a.model,
    ...(a.loadCheckpointPath ? { load_checkpoint_path: a.loadCheckpointPath } : {}),
    renderer: a.renderer,
    group_size: a.groupSize,
    groups_per_batch: a.groupsPerBatch,
    max_tokens: a.maxTokens,
    iterations: a.iterations,
    eval_every: a.holdout === 'none' ? 0 : evalEvery,
    save_every: Math.max(1, Math.floor(a.iterations / 2)),
    dataset: {
      path: rel(a.dataset),
      // evaluations sample at most 200 holdout problems, so they stay quick next to training
      ...(a.holdout === 'none' ? {} : { holdout: 'path' in a.holdout ? { path: rel(a.holdout.path) } : { fraction: a.holdout.fraction }, holdout_max: 200 }),
    },
    // an environment file runs episodes instead of scoring single replies (the GRPO spec's env)
    ...(isEnvFile(a.reward) ? { env: { file: rel(a.reward) } } : { reward: { file: rel(a.reward) } }),
  };
  return `${JSON.stringify(spec, null, 2)}\n`;
}

/** Asks what is missing from `given`; undefined when the user backs out. */
export async function askSpec(connection: TinkerConnection, given: Partial<SpecAnswers>): Promise<SpecAnswers | undefined> {
  const title = 'New GRPO run';
  const backend = given.backend ?? (await readBackend());
  const model = given.model ?? (await pickModel(connection, title));
  if (!model) return undefined;

  const { modelInfo, rendererChoices } = await import('../../core/render');
  let recommended: readonly string[] = [];
  try {
    recommended = modelInfo(model).renderers;
  } catch {
    recommended = [];
  }
  const renderer =
    given.renderer ??
    (
      await vscode.window.showQuickPick(
        rendererChoices(recommended).map((r, i) => ({ label: r.name, description: r.recommended ? (i === 0 ? `recommended for ${model}` : `also recommended for ${model}`) : undefined })),
        { title: `${title} (2/6): renderer`, placeHolder: 'How conversations become tokens for this model', ignoreFocusOut: true },
      )
    )?.label;
  if (!renderer) return undefined;

  const dataset = given.dataset ?? (await pickFile(`${title} (3/6): dataset`, '**/*.jsonl', 'JSONL problems: one {"question", "answer"} object per line', { JSONL: ['jsonl'] }));
  if (!dataset) return undefined;

  const holdout = given.holdout ?? (await pickHoldout(title, dataset));
  if (!holdout) return undefined;

  const reward =
    given.reward ??
    (await pickFile(
      `${title} (5/6): reward function or environment`,
      '**/*.{py,js,mjs,cjs,ts}',
      `compute_reward(completion, ground_truth) -> float, or an environment (${ENV_FILE_SUFFIXES.map((e) => `*${e}`).join(', ')}) for multi-turn episodes`,
      { 'Reward function or environment': ['py', 'js', 'mjs', 'cjs', 'ts'] },
      path.dirname(dataset),
    ));
  if (!reward) return undefined;

  const local = model.startsWith('tinker-studio/');
  const groupSize = given.groupSize ?? (await askInt(`${title} (6/6): group size`, 'Samples per problem (advantages are centred within a group)', local ? 8 : 16, 2));
  if (groupSize === undefined) return undefined;
  const groupsPerBatch = given.groupsPerBatch ?? (await askInt(`${title} (6/6): groups per batch`, 'Problems per iteration', local ? 16 : 64, 1));
  if (groupsPerBatch === undefined) return undefined;
  const iterations = given.iterations ?? (await askInt(`${title} (6/6): iterations`, 'Training iterations to run', 20, 1));
  if (iterations === undefined) return undefined;
  const maxTokens = given.maxTokens ?? (await askInt(`${title} (6/6): max tokens`, 'Most tokens sampled per completion', local ? 6 : 256, 1));
  if (maxTokens === undefined) return undefined;

  const specFile = given.specFile ?? (await askSpecFile('grpo', title, model, dataset));
  if (!specFile) return undefined;
  return { backend, model, ...(given.loadCheckpointPath ? { loadCheckpointPath: given.loadCheckpointPath } : {}), renderer, dataset, holdout, reward, groupSize, groupsPerBatch, iterations, maxTokens, specFile };
}

/** Writes the spec through a WorkspaceEdit (undoable), saves it and shows it. */
export function writeSpec(a: SpecAnswers): Promise<vscode.Uri> {
  return writeSpecFile(a.specFile, specText(a));
}

/** Creates `file` with `text` through a WorkspaceEdit (undoable), saves it and shows it. */
export async function writeSpecFile(file: string, text: string): Promise<vscode.Uri> {
  const uri = vscode.Uri.file(file);
  const edit = new vscode.WorkspaceEdit();
  edit.createFile(uri, { ignoreIfExists: false, overwrite: false });
  edit.insert(uri, new vscode.Position(0, 0), text);
  if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`Could not create ${file} (does it exist already?).`);
  const doc = await vscode.workspace.openTextDocument(uri);
  await doc.save();
  await vscode.window.showTextDocument(doc, { preview: false });
  return uri;
}

export async function pickModel(connection: TinkerConnection, title: string, step = '1/6'): Promise<string | undefined> {
  const items = (async () => {
    const caps = await (await connection.get()).capabilities();
    return caps.supported_models.flatMap((m) =>
      m.model_name ? [{ label: m.model_name, description: m.max_context_length ? `context ${m.max_context_length} tokens` : undefined }] : [],
    );
  })();
  const picked = await vscode.window.showQuickPick(items, { title: `${title} (${step}): model`, placeHolder: 'Base model (the models this backend serves)', ignoreFocusOut: true });
  return picked?.label;
}

type FileItem = vscode.QuickPickItem & { file?: string };

export async function pickFile(title: string, glob: string, placeHolder: string, filters: Record<string, string[]>, near?: string): Promise<string | undefined> {
  const files = await vscode.workspace.findFiles(glob, EXCLUDE, 300);
  const sorted = files
    .map((u) => u.fsPath)
    .sort((a, b) => {
      const an = near && path.dirname(a) === near ? 0 : 1;
      const bn = near && path.dirname(b) === near ? 0 : 1;
      return an - bn || a.localeCompare(b);
    });
  const items: FileItem[] = [
    ...sorted.map((f) => ({ label: path.basename(f), description: vscode.workspace.asRelativePath(path.dirname(f)), file: f })),
    { label: '$(folder-opened) Browse…', alwaysShow: true },
  ];
  const picked = await vscode.window.showQuickPick(items, { title, placeHolder, matchOnDescription: true, ignoreFocusOut: true });
  if (!picked) return undefined;
  if (picked.file) return picked.file;
  const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, filters, title });
  return chosen?.[0]?.fsPath;
}

async function pickHoldout(title: string, dataset: string): Promise<SpecAnswers['holdout'] | undefined> {
  const dir = path.dirname(dataset);
  const siblings = (await vscode.workspace.findFiles(new vscode.RelativePattern(vscode.Uri.file(dir), '*.jsonl'), null, 50))
    .map((u) => u.fsPath)
    .filter((f) => f !== dataset)
    .sort((a, b) => Number(/holdout|test|eval/i.test(path.basename(b))) - Number(/holdout|test|eval/i.test(path.basename(a))));
  type Item = vscode.QuickPickItem & { value: SpecAnswers['holdout'] };
  const items: Item[] = [
    ...siblings.map((f) => ({ label: path.basename(f), description: 'holdout file', value: { path: f } })),
    { label: '10% of the dataset', description: 'split off by the seed', value: { fraction: 0.1 } },
    { label: 'No holdout', description: 'no test/ evaluations', value: 'none' },
  ];
  return (await vscode.window.showQuickPick(items, { title: `${title} (4/6): holdout`, placeHolder: 'Problems kept out of training for the test/ reward', ignoreFocusOut: true }))?.value;
}

export async function askInt(title: string, prompt: string, value: number, min: number): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title,
    prompt,
    value: String(value),
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= min ? undefined : `A whole number, at least ${min}`),
  });
  return text === undefined ? undefined : Number(text.trim());
}

/** Where to write a new spec of `kind`: a name next to the dataset, ending in the kind's extension. */
export async function askSpecFile(kind: SpecKind, title: string, model: string, dataset: string): Promise<string | undefined> {
  const { extension } = specKind(kind);
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(dataset))?.uri.fsPath ?? path.dirname(dataset);
  const base = `${model.split('/').pop()?.replace(/[^A-Za-z0-9_.-]+/g, '-') ?? 'run'}-${kind}`;
  const suggested = path.join(path.dirname(dataset), `${base}${extension}`);
  const text = await vscode.window.showInputBox({
    title: `${title}: spec file`,
    prompt: `Where to write the run spec (relative to ${folder})`,
    value: path.relative(folder, suggested),
    ignoreFocusOut: true,
    validateInput: (v) => (isSpecFileOf(v.trim(), kind) ? undefined : `The name must end in ${extension}`),
  });
  if (text === undefined) return undefined;
  return path.resolve(folder, text.trim());
}
