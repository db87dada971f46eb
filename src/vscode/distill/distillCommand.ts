// "Tinker: Distill Dataset…": off-policy distillation data from the editor. The teacher (a base model
// or a tinker:// sampler path), the prompts (JSONL), samples per prompt, an optional reward filter and
// the output file are asked in turn (or given as the command's argument, as tests and other commands
// do); the teacher is sampled on the configured backend under a cancellable progress notification;
// the chats file (and its provenance file) is opened at the end, ready for an SFT spec's dataset.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import { readBackend } from '../common/settings';
import type { TinkerConnection } from '../connection/connection';
import type { ApiKeyStore } from '../connection/secrets';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import { resolvePython } from '../common/pythonInterpreter';
import type { DistillDataResult } from '../../core/distill/distillData';

export interface DistillCommandServices {
  log: Log;
  connection: TinkerConnection;
  apiKeys: ApiKeyStore;
  cacheDir: string;
}

export function registerDistillCommands(s: DistillCommandServices): vscode.Disposable[] {
  return registerTable({ [COMMAND.distillDataset]: (arg?: unknown) => distillDataset(s, arg) }, s.log);
}

const TITLE = 'Tinker: Distill Dataset';

/** The command's argument (all optional: what is missing is asked); `reward: null` means no filter. */
interface DistillArg {
  teacher?: string;
  prompts?: string;
  out?: string;
  n?: number;
  reward?: string | null;
  max_tokens?: number;
  temperature?: number;
  seed?: number;
  open?: boolean;
}

async function distillDataset(s: DistillCommandServices, arg: unknown): Promise<DistillDataResult | undefined> {
  const { z } = await import('zod');
  const Given = z
    .object({
      teacher: z.string().min(1).optional(),
      prompts: z.string().min(1).optional(),
      out: z.string().min(1).optional(),
      n: z.number().int().positive().optional(),
      reward: z.string().min(1).nullable().optional(),
      max_tokens: z.number().int().positive().optional(),
      temperature: z.number().min(0).optional(),
      seed: z.number().int().min(0).optional(),
      open: z.boolean().optional(),
    })
    .strict();
  const parsed = arg === undefined || arg instanceof vscode.Uri ? { success: true as const, data: {} } : Given.safeParse(arg);
  if (!parsed.success) throw new Error(`${TITLE}: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
  const g: DistillArg = parsed.data;
  const here = vscode.workspace.workspaceFolders?.[0]?.uri;

  const teacher =
    g.teacher ??
    (await vscode.window.showInputBox({
      title: `${TITLE} (1/5): the teacher`,
      prompt: 'A base model, or a tinker:// sampler checkpoint (copy one from the Checkpoints view)',
      placeHolder: 'tinker://<run id>/sampler_weights/final  or  Qwen/Qwen3-8B',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'give a model name or a tinker:// path' : undefined),
    }))?.trim();
  if (!teacher) return undefined;
  const promptsFile =
    g.prompts ??
    (arg instanceof vscode.Uri ? arg.fsPath : undefined) ??
    (await vscode.window.showOpenDialog({ title: `${TITLE} (2/5): the prompts (JSONL: "question" or "messages")`, canSelectMany: false, filters: { 'JSON Lines': ['jsonl'] }, ...(here ? { defaultUri: here } : {}) }))?.[0]?.fsPath;
  if (!promptsFile) return undefined;
  let n = g.n;
  if (n === undefined) {
    const v = await vscode.window.showInputBox({
      title: `${TITLE} (3/5): samples per prompt`,
      value: '4',
      ignoreFocusOut: true,
      validateInput: (x) => (/^[1-9]\d*$/.test(x.trim()) ? undefined : 'a whole number ≥ 1'),
    });
    if (v === undefined) return undefined;
    n = Number(v.trim());
  }
  let reward = g.reward === null ? undefined : g.reward;
  if (g.reward === undefined) {
    const choice = await vscode.window.showQuickPick(
      [
        { label: 'Keep every sample', keep: false },
        { label: 'Keep only the samples a reward file accepts…', description: 'reward ≥ 0.5', keep: true },
      ],
      { title: `${TITLE} (4/5): filter`, ignoreFocusOut: true },
    );
    if (!choice) return undefined;
    if (choice.keep) {
      reward = (await vscode.window.showOpenDialog({ title: `${TITLE}: the reward file`, canSelectMany: false, filters: { 'Reward file': ['py', 'mjs', 'js', 'cjs', 'ts'] }, defaultUri: vscode.Uri.file(path.dirname(promptsFile)) }))?.[0]?.fsPath;
      if (!reward) return undefined;
    }
  }
  const out =
    g.out ??
    (await vscode.window.showSaveDialog({
      title: `${TITLE} (5/5): the chats file to write`,
      defaultUri: vscode.Uri.file(path.join(path.dirname(promptsFile), `${path.basename(promptsFile, '.jsonl')}.distilled.jsonl`)),
      filters: { 'JSON Lines': ['jsonl'] },
    }))?.fsPath;
  if (!out) return undefined;

  const backend = await readBackend();
  if (!(await haveKeyFor(backend, s.apiKeys, 'Distilling a dataset'))) return undefined;
  const python = reward && /\.py$/i.test(reward) ? (await resolvePython(vscode.Uri.file(reward), s.log)).path : undefined;
  const { distillData } = await import('../../core/distill/distillData');
  const abort = new AbortController();
  let cancelled = false;
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Distilling ${path.basename(promptsFile)} from ${teacher}`, cancellable: true }, async (progress, token) => {
    token.onCancellationRequested(() => {
      cancelled = true;
      abort.abort();
    });
    let last = 0;
    try {
      return await distillData({
        teacher,
        prompts: promptsFile,
        out,
        n,
        ...(reward ? { reward } : {}),
        ...(g.max_tokens ? { maxTokens: g.max_tokens } : {}),
        ...(g.temperature !== undefined ? { temperature: g.temperature } : {}),
        ...(g.seed !== undefined ? { seed: g.seed } : {}),
        ...(python ? { python } : {}),
        connect: () => s.connection.open(backend),
        cacheDir: s.cacheDir,
        signal: abort.signal,
        log: (line) => s.log.info(`distill: ${line}`),
        onProgress: (done, total) => {
          const pct = total ? (100 * done) / total : 0;
          progress.report({ message: `${done} / ${total} samples`, increment: pct - last });
          last = pct;
        },
      });
    } catch (err) {
      if (cancelled) return undefined;
      throw err;
    }
  });
  if (!result) {
    if (cancelled) void vscode.window.showInformationMessage(`${TITLE}: cancelled; ${path.basename(out)} was not written.`);
    return undefined;
  }
  if (g.open !== false) await vscode.window.showTextDocument(vscode.Uri.file(result.out), { preview: false });
  void vscode.window.showInformationMessage(`${result.kept} of ${result.sampled} samples kept in ${path.basename(result.out)} (provenance: ${path.basename(result.provenanceFile)}). Use it as an SFT spec's dataset.`);
  return result;
}
