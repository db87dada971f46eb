// Running an eval spec from the extension: "Tinker: Run Eval" (a *.eval.json file, its CodeLens) and
// "Tinker: Evaluate Checkpoints…" (pick checkpoints → dataset → grader → n; the spec is written next
// to the dataset through a WorkspaceEdit, so Undo removes it, then run). Runs evalcore's runEval with
// a cancellable progress notification; a cancelled eval keeps what it graded and the next run of the
// spec samples only what is missing. The results panel opens at the end.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EvalSummary } from '../../core/evals/results';
import type { RunSummary } from '../../core/runs/runDirectory';
import { errorMessage } from '../../core/errors';
import { gradingField } from '../../core/env/files';
import type { TinkerConnection } from '../connection/connection';
import type { ApiKeyStore } from '../connection/secrets';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import { readBackendFor } from '../common/settings';
import type { Log } from '../common/log';
import type { RunsModel } from '../runs/runsModel';
import { resolvePython } from '../common/pythonInterpreter';
import type { EvalPanels } from './evalPanels';
import { resultsDirOf } from './evalFolders';
import { reportEvalActivity } from './evalActivity';

export interface EvalRunnerServices {
  log: Log;
  evals: EvalPanels;
  runs: RunsModel;
  connection: TinkerConnection;
  apiKeys: ApiKeyStore;
  cacheDir: string;
}

/** What an eval run from the extension ended with. */
export interface EvalOutcome {
  dir: string;
  summary?: EvalSummary;
  cancelled: boolean;
}

/** Runs a spec with progress; opens the results panel at the end (also after a cancel, with what was graded). */
export async function runEvalSpec(s: EvalRunnerServices, specFile: string, opts: { openPanel?: boolean } = {}): Promise<EvalOutcome | undefined> {
  const { evalGraderFile, parseEvalSpecFile } = await import('../../core/evals/spec');
  const { runEval } = await import('../../core/evals/runEval');
  const loaded = await parseEvalSpecFile(specFile);
  const backend = await readBackendFor(loaded.spec.backend, loaded.spec.base_url);
  if (!(await haveKeyFor(backend, s.apiKeys, 'This eval'))) {
    void vscode.window.showInformationMessage('The eval was not started: no Tinker API key is set.');
    return undefined;
  }
  // the reward file or the environment file: the Python interpreter of the one that grades (an NLL eval runs no Python)
  const grader = loaded.spec.nll ? undefined : evalGraderFile(loaded.spec);
  const graderFile = grader === undefined ? undefined : path.resolve(path.dirname(specFile), grader);
  const python = graderFile && /\.py$/i.test(graderFile) ? (await resolvePython(vscode.Uri.file(graderFile), s.log)).path : undefined;
  const dir = resultsDirOf(specFile);
  const abort = new AbortController();
  let cancelled = false;
  const summary = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Eval ${path.basename(specFile)}`, cancellable: true },
    async (progress, token) => {
      token.onCancellationRequested(() => {
        cancelled = true;
        abort.abort();
      });
      let last = 0;
      reportEvalActivity(dir, { done: 0, total: 0 });
      try {
        return await runEval({
          specFile,
          cacheDir: s.cacheDir,
          ...(python ? { python } : {}),
          connect: async (sp) => s.connection.open(await readBackendFor(sp.backend, sp.base_url)),
          signal: abort.signal,
          log: (line) => s.log.info(`eval ${path.basename(specFile)}: ${line}`),
          onProgress: (p) => {
            const pct = p.total ? (100 * p.done) / p.total : 0;
            progress.report({ message: `${p.done} / ${p.total} ${p.unit ?? 'samples'}${p.target ? ` · ${p.target}` : ''}`, increment: pct - last });
            last = pct;
            reportEvalActivity(dir, { done: p.done, total: p.total });
          },
        });
      } catch (err) {
        if (cancelled) return undefined;
        throw err;
      } finally {
        reportEvalActivity(dir, undefined);
      }
    },
  );
  if (cancelled) void vscode.window.showInformationMessage(`Eval ${path.basename(specFile)} cancelled: the graded samples are kept; run the spec again to resume.`);
  if (opts.openPanel !== false && fs.existsSync(path.join(dir, 'targets'))) {
    const panel = await s.evals.open({ dir });
    await panel.refresh();
  }
  return { dir, ...(summary ? { summary } : {}), cancelled };
}

/** A sampler checkpoint of a run, as picked. */
export interface PickedCheckpoint {
  runDir: string;
  model?: string;
  name: string;
}

const PROMPT_FIELDS = ['question', 'prompt', 'problem', 'input', 'query'];
const ANSWER_FIELDS = ['answer', 'ground_truth', 'solution', 'target', 'output'];

/** The dataset fields of a JSONL file's first line (messages, or a prompt and an answer field). */
export async function datasetFields(file: string): Promise<{ prompt_field?: string; ground_truth_field?: string }> {
  const first = (await fs.promises.readFile(file, 'utf8')).split('\n').find((l) => l.trim());
  if (!first) throw new Error(`${file} is empty`);
  const { z } = await import('zod');
  let row: Record<string, unknown>;
  try {
    row = z.record(z.string(), z.unknown()).parse(JSON.parse(first));
  } catch (err) {
    throw new Error(`${file}:1: not a JSON object (${errorMessage(err)})`);
  }
  const keys = Object.keys(row);
  const pick = async (known: string[], what: string, exclude?: string) => {
    const hit = known.find((k) => keys.includes(k));
    if (hit) return hit;
    const picked = await vscode.window.showQuickPick(keys.filter((k) => k !== exclude), { title: 'Tinker: Evaluate Checkpoints', placeHolder: `Which field holds the ${what}?` });
    if (!picked) throw new vscode.CancellationError();
    return picked;
  };
  const ground = await pick(ANSWER_FIELDS, 'ground truth');
  if (keys.includes('messages') && !PROMPT_FIELDS.some((k) => keys.includes(k))) return { ground_truth_field: ground };
  return { prompt_field: await pick(PROMPT_FIELDS, 'question', ground), ground_truth_field: ground };
}

/** The eval spec "Evaluate Checkpoints" writes: the runs' base model first (the baseline), then the checkpoints by run. */
export function evaluateSpec(a: { specFile: string; dataset: string; fields: { prompt_field?: string; ground_truth_field?: string }; grader: string; n: number; checkpoints: readonly PickedCheckpoint[]; backend: string }): Record<string, unknown> {
  const rel = (p: string) => {
    const r = path.relative(path.dirname(a.specFile), p).split(path.sep).join('/');
    return r.startsWith('.') ? r : r || '.';
  };
  const byRun = new Map<string, string[]>();
  for (const c of a.checkpoints) byRun.set(c.runDir, [...(byRun.get(c.runDir) ?? []), c.name]);
  const models = [...new Set(a.checkpoints.flatMap((c) => (c.model ? [c.model] : [])))];
  return {
    dataset: { path: rel(a.dataset), ...a.fields },
    // a reward file grades as `grader`, an environment file (`*.env.py`, …) as `env`
    ...gradingField(rel(a.grader)),
    n: a.n,
    temperature: 1,
    max_tokens: 256,
    seed: 0,
    backend: a.backend,
    targets: [...models, ...[...byRun].map(([run, names]) => ({ run: rel(run), checkpoints: names }))],
  };
}

/** Writes a new file through a WorkspaceEdit (Undo in the editor removes it) and saves it. */
export async function writeSpecUndoable(file: string, value: unknown): Promise<void> {
  const uri = vscode.Uri.file(file);
  const edit = new vscode.WorkspaceEdit();
  edit.createFile(uri, { overwrite: true, contents: Buffer.from(JSON.stringify(value, null, 2) + '\n') });
  if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`could not write ${file}`);
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === uri.fsPath);
  if (doc?.isDirty) await doc.save();
}

/** The checkpoints a command argument names: a run node (its sampler checkpoints), checkpoint nodes (the multi-selection), or none (pick). */
export async function checkpointsOf(s: EvalRunnerServices, arg: unknown, selection: unknown): Promise<PickedCheckpoint[] | undefined> {
  const { z } = await import('zod');
  const run = z.object({ dir: z.string().min(1), model: z.string().optional(), checkpoints: z.array(z.object({ name: z.string(), sampler_path: z.string().optional() }).passthrough()) }).passthrough();
  const node = z.union([
    z.object({ kind: z.literal('checkpoint'), checkpoint: z.object({ name: z.string(), sampler_path: z.string().optional() }).passthrough(), run }),
    z.object({ kind: z.literal('run'), run }),
    z.object({ run }).transform((n) => ({ kind: 'run' as const, run: n.run })),
    z.object({ runDir: z.string().min(1), checkpoints: z.array(z.string().min(1)).min(1), model: z.string().optional() }),
  ]);
  const nodes = Array.isArray(selection) && selection.length > 1 ? selection : arg === undefined ? [] : [arg];
  const out: PickedCheckpoint[] = [];
  for (const raw of nodes) {
    const parsed = node.safeParse(raw);
    if (!parsed.success) throw new Error(`Tinker: Evaluate Checkpoints: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    const n = parsed.data;
    if ('runDir' in n) out.push(...n.checkpoints.map((name) => ({ runDir: n.runDir, ...(n.model ? { model: n.model } : {}), name })));
    else if (n.kind === 'checkpoint') {
      if (!n.checkpoint.sampler_path) throw new Error(`checkpoint ${n.checkpoint.name} has no sampler weights to evaluate (only a training state)`);
      out.push({ runDir: n.run.dir, ...(n.run.model ? { model: n.run.model } : {}), name: n.checkpoint.name });
    } else {
      const sampler = n.run.checkpoints.filter((c) => c.sampler_path);
      if (!sampler.length) throw new Error(`the run ${n.run.dir} has no sampler checkpoint yet`);
      out.push(...sampler.map((c) => ({ runDir: n.run.dir, ...(n.run.model ? { model: n.run.model } : {}), name: c.name })));
    }
  }
  if (out.length) return out;
  const runs: RunSummary[] = await s.runs.list();
  const items = runs.flatMap((r) => r.checkpoints.filter((c) => c.sampler_path).map((c) => ({ label: `${r.name} · ${c.name}`, description: r.model, picked: false, c: { runDir: r.dir, ...(r.model ? { model: r.model } : {}), name: c.name } })));
  if (!items.length) {
    void vscode.window.showInformationMessage('Tinker: no run has a sampler checkpoint to evaluate yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, { title: 'Tinker: Evaluate Checkpoints (1/4)', placeHolder: 'Which checkpoints? (the runs’ base model is evaluated too, as the baseline)', canPickMany: true });
  return picked?.length ? picked.map((p) => p.c) : undefined;
}
