// Public benchmarks from the editor: "Run Benchmark on Checkpoint…" (a benchmark → a *.eval.json run
// with progress and cancel; a template by use case → a suite file, run on the checkpoint once its
// product layer is the user's), "Copy Inspect Command" (Inspect Evals through the backend's
// OpenAI-compatible API) and "Import Inspect Log…" (an Inspect log into the eval panel, or into a
// suite entry's result). Files are written under the workspace's `benchmarks/` folder, each spec as one
// undoable edit; a template's product placeholder that exists is reused, never overwritten.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import { windowUi } from '../common/windowUi';
import { readBackend } from '../common/settings';
import type { EvalOutcome, EvalRunnerServices } from './evalRunner';
import type { SuiteOutcome, SuiteRunnerServices } from './suiteRunner';

export type BenchmarkCommandServices = EvalRunnerServices & SuiteRunnerServices;

/** What "Run Benchmark on Checkpoint" did: an eval run, or a suite written (and run when it had no placeholder). */
export type BenchmarkOutcome =
  | { kind: 'eval'; specFile: string; outcome?: EvalOutcome }
  | { kind: 'suite'; suiteFile: string; placeholders: string[]; outcome?: SuiteOutcome };

export const BENCHMARKS_FOLDER = 'benchmarks';

export function registerBenchmarkCommands(s: BenchmarkCommandServices): vscode.Disposable[] {
  return registerTable(
    {
      [COMMAND.runBenchmarkOnCheckpoint]: (arg?: unknown) => runBenchmark(s, arg),
      [COMMAND.copyInspectCommand]: (arg?: unknown, _sel?: unknown, answers?: unknown) => copyInspectCommand(s, arg, answers),
      [COMMAND.importInspectLog]: (arg?: unknown) => importInspectLog(s, arg),
    },
    s.log,
  );
}

/** A checkpoint from the argument: a tinker:// path or model name, {checkpoint}, or a sampler row of the Checkpoints view. */
async function checkpointOfArg(arg: unknown, title: string): Promise<{ checkpoint?: string; rest: Record<string, unknown> }> {
  if (arg === undefined) return { rest: {} };
  if (typeof arg === 'string') return { checkpoint: arg.trim(), rest: {} };
  const { z } = await import('zod');
  const localRow = z.object({ kind: z.literal('path'), which: z.literal('sampler'), tinkerPath: z.string().min(1) }).transform((n) => ({ checkpoint: n.tinkerPath, rest: {} }));
  const serverRow = z.object({ kind: z.literal('serverCheckpoint'), checkpoint: z.object({ kind: z.literal('sampler'), tinkerPath: z.string().min(1) }) }).transform((n) => ({ checkpoint: n.checkpoint.tinkerPath, rest: {} }));
  const given = z.looseObject({ checkpoint: z.string().min(1).optional() }).transform(({ checkpoint, ...rest }) => ({ ...(checkpoint ? { checkpoint } : {}), rest: rest as Record<string, unknown> }));
  const parsed = z.union([localRow, serverRow, given]).safeParse(arg);
  if (!parsed.success) throw new Error(`${title}: unexpected argument (a sampler checkpoint of the Checkpoints view, a tinker:// path, or {checkpoint, …}): ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

function benchmarksDir(): string {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!root) throw new Error('Open a folder first: the benchmark files are written into its benchmarks/ folder.');
  return path.join(root, BENCHMARKS_FOLDER);
}

/** The checkpoint's base model: its run's, else the server's answer (a tinker:// eval target needs it). */
async function baseModelOf(s: BenchmarkCommandServices, checkpoint: string): Promise<string | undefined> {
  if (!checkpoint.startsWith('tinker://')) return undefined;
  for (const r of await s.runs.list().catch(() => [])) if (r.model && r.checkpoints.some((c) => c.sampler_path === checkpoint)) return r.model;
  const service = await s.connection.get();
  return (await service.weightsInfo(checkpoint)).base_model;
}

async function runBenchmark(s: BenchmarkCommandServices, arg: unknown): Promise<BenchmarkOutcome | undefined> {
  const title = 'Tinker: Run Benchmark on Checkpoint';
  const { BENCHMARK_LABELS, BENCHMARK_TEMPLATES, benchmarkEvalSpec, benchmarkTemplate, isBenchmarkName, templateSuite } = await import('../../core/evals/benchmarks/templates');
  const { z } = await import('zod');
  const given = await checkpointOfArg(arg, title);
  const answers = z
    .strictObject({ benchmark: z.string().refine(isBenchmarkName, 'not a benchmark').optional(), template: z.enum(['chat', 'math', 'tools']).optional(), max_problems: z.number().int().positive().nullable().optional(), productEval: z.string().min(1).nullable().optional() })
    .safeParse(given.rest);
  if (!answers.success) throw new Error(`${title}: unexpected answers: ${answers.error.issues[0]?.path.join('.')}: ${answers.error.issues[0]?.message}`);
  const a = answers.data;
  const { pickCheckpoint } = await import('./suiteCommands');
  const checkpoint = given.checkpoint ?? (await pickCheckpoint(s, title));
  if (!checkpoint) return undefined;
  let choice: { benchmark: string } | { template: string } | undefined = a.benchmark ? { benchmark: a.benchmark } : a.template ? { template: a.template } : undefined;
  if (!choice) {
    type Item = vscode.QuickPickItem & { pick?: { benchmark: string } | { template: string } };
    const items: Item[] = [
      { label: 'Benchmarks', kind: vscode.QuickPickItemKind.Separator },
      ...Object.entries(BENCHMARK_LABELS).map(([b, l]) => ({ label: l.label, description: l.what, pick: { benchmark: b } })),
      { label: 'Templates by use case (a suite file)', kind: vscode.QuickPickItemKind.Separator },
      ...BENCHMARK_TEMPLATES.map((t) => ({ label: `$(checklist) ${t.label}`, description: t.detail, pick: { template: t.id } })),
    ];
    choice = (await vscode.window.showQuickPick(items, { title: `${title}: ${checkpoint}`, placeHolder: 'A benchmark, or a template of benchmarks for your use case' }))?.pick;
    if (!choice) return undefined;
  }
  let maxProblems = a.max_problems === null ? undefined : a.max_problems;
  if (a.max_problems === undefined) {
    const text = await windowUi.showInputBox({ title, prompt: 'Problems per benchmark: a seeded subset of this many (empty: every problem)', value: '50', validateInput: (v) => (v.trim() === '' || /^[1-9]\d{0,5}$/.test(v.trim()) ? undefined : 'a whole number, or empty for all') });
    if (text === undefined) return undefined;
    maxProblems = text.trim() === '' ? undefined : Number(text.trim());
  }
  const backend = (await readBackend()).kind;
  const dir = benchmarksDir();
  fs.mkdirSync(dir, { recursive: true });
  const c = { backend, ...(maxProblems !== undefined ? { max_problems: maxProblems } : {}) };
  const { runEvalSpec, writeSpecUndoable } = await import('./evalRunner');
  if ('benchmark' in choice) {
    const b = choice.benchmark as Parameters<typeof benchmarkEvalSpec>[0];
    const model = await baseModelOf(s, checkpoint);
    const specFile = path.join(dir, `${b}.eval.json`);
    await writeSpecUndoable(specFile, { ...benchmarkEvalSpec(b, [checkpoint], c), ...(model ? { model } : {}) });
    return { kind: 'eval', specFile, outcome: await runEvalSpec(s, specFile) };
  }
  const t = benchmarkTemplate(choice.template)!;
  let productEval = a.productEval === null ? undefined : a.productEval;
  if (a.productEval === undefined) {
    const specs = await vscode.workspace.findFiles('**/*.eval.json', '**/node_modules/**', 200);
    const picked = await vscode.window.showQuickPick(
      [{ label: '$(new-file) Leave a placeholder to fill in', file: undefined as string | undefined }, ...specs.map((u) => ({ label: vscode.workspace.asRelativePath(u), file: u.fsPath }))],
      { title: `${title}: the product layer`, placeHolder: t.product === 'env' ? 'An eval spec of your tool environment ("env"), or a placeholder' : 'An eval spec of your own data, or a placeholder' },
    );
    if (!picked) return undefined;
    productEval = picked.file;
  }
  const rel = productEval ? path.relative(dir, productEval).split(path.sep).join('/') : undefined;
  const w = templateSuite(t, { ...c, ...(rel ? { productEval: rel } : {}) });
  const suiteFile = path.join(dir, w.suiteFile);
  const written: string[] = [];
  for (const p of w.placeholders) {
    const file = path.join(dir, p.file);
    if (fs.existsSync(file)) continue;
    await writeSpecUndoable(file, p.value);
    written.push(file);
  }
  await writeSpecUndoable(suiteFile, w.suite);
  await vscode.window.showTextDocument(vscode.Uri.file(suiteFile), { preview: false });
  if (w.placeholders.length) {
    const file = path.join(dir, w.placeholders[0]!.file);
    void vscode.window.showInformationMessage(`${w.suiteFile} is written. Its product entry is ${path.basename(file)}: give it your ${t.product === 'env' ? 'tool environment and its tasks' : 'data and grader'}, then Run Suite on ${checkpoint}.`, 'Open Product Eval').then((x) => {
      if (x) void vscode.window.showTextDocument(vscode.Uri.file(file));
    });
    return { kind: 'suite', suiteFile, placeholders: written };
  }
  const { runSuiteWithProgress } = await import('./suiteRunner');
  return { kind: 'suite', suiteFile, placeholders: [], outcome: await runSuiteWithProgress(s, suiteFile, checkpoint) };
}

/** What "Copy Inspect Command" copied. */
export interface CopiedInspectCommand {
  command: string;
  baseUrl: string;
  model: string;
}

async function copyInspectCommand(s: BenchmarkCommandServices, arg: unknown, answers: unknown): Promise<CopiedInspectCommand | undefined> {
  const title = 'Tinker: Copy Inspect Command';
  const { inspectEvalCommand, INSPECT_TASK_SUGGESTIONS, isInspectTaskName } = await import('../../core/evals/inspectCommand');
  const given = await checkpointOfArg(arg, title);
  const { z } = await import('zod');
  const a = z.strictObject({ task: z.string().min(1).optional() }).safeParse({ ...given.rest, ...(answers && typeof answers === 'object' ? answers : {}) });
  if (!a.success) throw new Error(`${title}: unexpected answers (expected {task}): ${a.error.issues[0]?.message}`);
  const { pickCheckpoint } = await import('./suiteCommands');
  const model = given.checkpoint ?? (await pickCheckpoint(s, title));
  if (!model) return undefined;
  let task = a.data.task;
  if (!task) {
    const items: Array<vscode.QuickPickItem & { task?: string }> = [...INSPECT_TASK_SUGGESTIONS.map((t) => ({ label: t.task, description: t.what, task: t.task })), { label: '$(edit) Another Inspect Evals task…' }];
    const picked = await vscode.window.showQuickPick(items, { title, placeHolder: 'Which Inspect Evals task?' });
    if (!picked) return undefined;
    task = picked.task ?? (await windowUi.showInputBox({ title, prompt: 'An Inspect Evals task (inspect_evals/<task>)', validateInput: (v) => (isInspectTaskName(v) ? undefined : 'letters, digits, "_", "." or "-"') }));
    if (!task) return undefined;
  }
  // never the key: Inspect reads OPENAI_API_KEY from the environment
  const endpoint = await s.connection.openAiEndpoint({ withKey: false });
  const command = inspectEvalCommand({ task, model, baseUrl: endpoint.baseUrl });
  const keyLine = endpoint.backend === 'local' ? '# OPENAI_API_KEY: the local engine’s key (Copy OpenAI-Compatible Endpoint can copy it)' : '# OPENAI_API_KEY: your Tinker API key';
  await vscode.env.clipboard.writeText(`${keyLine}\n${command}\n`);
  void vscode.window.setStatusBarMessage(`Copied the Inspect command for ${task} on ${model}`, 5000);
  s.log.info(`copied the Inspect command: ${command}`);
  return { command, baseUrl: endpoint.baseUrl, model };
}

/** What "Import Inspect Log" wrote: an eval results folder, or a suite entry's result. */
export type ImportedInspect = { kind: 'eval'; dir: string } | { kind: 'suite'; suiteFile: string; entry: string; checkpoint: string };

async function importInspectLog(s: BenchmarkCommandServices, arg: unknown): Promise<ImportedInspect | undefined> {
  const title = 'Tinker: Import Inspect Log';
  const { z } = await import('zod');
  const given =
    arg instanceof vscode.Uri
      ? { files: [arg.fsPath] }
      : z.strictObject({ files: z.array(z.string().min(1)).min(1).optional(), suiteFile: z.string().min(1).optional(), entry: z.string().min(1).optional(), score: z.string().min(1).optional() }).parse(arg ?? {});
  const files =
    given.files ??
    (await vscode.window.showOpenDialog({ title: `${title} (one log per model: several become the targets of one eval)`, canSelectMany: true, filters: { 'Inspect logs': ['eval', 'json'] } }))?.map((u) => u.fsPath);
  if (!files?.length) return undefined;
  const score = 'score' in given ? given.score : undefined;
  if ('suiteFile' in given && given.suiteFile) {
    if (!given.entry) throw new Error(`${title}: give the suite entry the log stands for ({suiteFile, entry})`);
    if (files.length !== 1) throw new Error(`${title}: a suite entry takes one log (of one checkpoint); ${files.length} were given`);
    const { importInspectIntoSuite } = await import('../../core/suite/importInspect');
    const r = await importInspectIntoSuite({ suiteFile: given.suiteFile, entry: given.entry, file: files[0]!, ...(score ? { score } : {}) });
    await s.suites.open({ suiteFile: given.suiteFile, checkpoints: [r.checkpoint.path] });
    return { kind: 'suite', suiteFile: given.suiteFile, entry: given.entry, checkpoint: r.checkpoint.path };
  }
  const { importInspectLogs, readInspectLog } = await import('../../core/evals/inspectImport');
  const task = readInspectLog(files[0]!).header.eval.task.replace(/^.*\//, '').replace(/[^A-Za-z0-9._-]+/g, '_');
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? path.dirname(files[0]!);
  const dir = path.join(root, BENCHMARKS_FOLDER, 'evals', `inspect-${task}`);
  importInspectLogs({ files, outDir: dir, ...(score ? { score } : {}) });
  const panel = await s.evals.open({ dir });
  await panel.refresh();
  return { kind: 'eval', dir };
}
