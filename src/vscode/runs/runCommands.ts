// The commands of GRPO and SFT runs: Start GRPO Run / Start SFT Run (open spec, picked spec, or the
// guided flow), Resume Run, Cancel Run and Open Metrics. Arguments may come from the palette (none), a CodeLens or tree
// row, or tests and other extensions; unknown shapes fall back to asking.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunResultBase } from '../../core/runs/runEvents';
import type { RunSummary } from '../../core/runs/runDirectory';
import { isResumable } from '../../core/runs/runStatus';
import { Handler, registerTable } from '../common/commandTable';
import { TinkerConnection } from '../connection/connection';
import { RunRunner } from './runRunner';
import { Log } from '../common/log';
import { ActiveRun, RunRegistry } from './runRegistry';
import { RunsModel } from './runsModel';
import { describeProgress } from './runStatusBar';
import { SftAnswers, askSftSpec, writeSftSpec } from './sftWizard';
import { SpecAnswers, askSpec, writeSpec } from './specWizard';
import { COMMAND } from '../common/commandIds';
import { windowUi } from '../common/windowUi';
import { showRunUsage } from './usageCommand';
import { isSpecFileOf, type SpecKind, specFileMatch, specGlob, specKind } from '../../core/spec/kinds';


export interface RunCommandServices {
  log: Log;
  runs: RunsModel;
  registry: RunRegistry;
  runner: RunRunner;
  connection: TinkerConnection;
  /** the metrics panels (Open Metrics opens a run's) */
  metrics: { open(runDir: string): Promise<unknown> };
}

/** Argument schemas, built on first use (zod is not loaded at activation). */
async function buildSchemas() {
  const { z } = await import('zod');
  return {
    guided: z.object({
      guided: z
        .object({
          model: z.string(),
          loadCheckpointPath: z.string().startsWith('tinker://'),
          renderer: z.string(),
          dataset: z.string(),
          holdout: z.union([z.object({ path: z.string() }), z.object({ fraction: z.number() }), z.literal('none')]),
          reward: z.string(),
          groupSize: z.number().int(),
          groupsPerBatch: z.number().int(),
          iterations: z.number().int(),
          maxTokens: z.number().int(),
          specFile: z.string(),
        })
        .partial(),
    }),
    guidedSft: z.object({
      guided: z
        .object({
          model: z.string(),
          loadCheckpointPath: z.string().startsWith('tinker://'),
          dataset: z.string(),
          validation: z.union([z.object({ path: z.string() }), z.object({ fraction: z.number() }), z.literal('none')]),
          batchSize: z.number().int(),
          maxSteps: z.number().int(),
          specFile: z.string(),
        })
        .partial(),
    }),
    spec: z.object({ specFile: z.string(), resumeDir: z.string().optional() }),
    /** a run row of the Runs or Checkpoints view */
    runNode: z.object({ kind: z.literal('run'), run: z.object({ dir: z.string() }) }),
  };
}
let schemaCache: ReturnType<typeof buildSchemas> | undefined;
const schemas = () => (schemaCache ??= buildSchemas());

export function registerRunCommands(s: RunCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.startGrpoRun]: (arg?: unknown) => startRun(s, 'grpo', arg),
    [COMMAND.startSftRun]: (arg?: unknown) => startRun(s, 'sft', arg),
    [COMMAND.startDpoRun]: (arg?: unknown) => startRun(s, 'dpo', arg),
    [COMMAND.resumeRun]: (runDir?: unknown, spec?: unknown) => resumeRun(s, runDir, spec),
    [COMMAND.cancelRun]: (arg?: unknown) => cancelRun(s, arg),
    [COMMAND.openMetrics]: (arg?: unknown) => openMetrics(s, arg),
    [COMMAND.openInWandb]: (arg?: unknown) => openInWandb(s, arg),
    [COMMAND.makePreferencePairs]: (arg?: unknown, options?: unknown) => makePreferencePairs(s, arg, options),
    [COMMAND.reconcileRunUsage]: async (arg?: unknown) => {
      const runDir = (await runDirOf(arg)) ?? (await pickRunDir(s, "Reconcile which run's usage with the service's?", () => true, true));
      return runDir ? showRunUsage(s, runDir) : undefined;
    },
  };
  return registerTable(table, s.log);
}

async function startRun(s: RunCommandServices, kind: SpecKind, arg: unknown): Promise<RunResultBase | undefined> {
  if (arg instanceof vscode.Uri) return runSpec(s, arg.fsPath);
  if (typeof arg === 'string') return runSpec(s, arg);
  const spec = (await schemas()).spec.safeParse(arg);
  if (spec.success) return s.runner.run({ specFile: await saved(spec.data.specFile), resumeDir: spec.data.resumeDir });
  const guide = GUIDED[kind];
  const guided = await guide.flow?.(s, arg);
  if (guided) return guided();

  const active = vscode.window.activeTextEditor?.document;
  if (active && active.uri.scheme === 'file' && isSpecFileOf(active.uri.fsPath, kind)) return runSpec(s, active.uri.fsPath);

  const specs = await vscode.workspace.findFiles(specGlob(kind), '{**/node_modules/**,**/runs/**}', 200);
  type Item = vscode.QuickPickItem & { file?: string };
  const items: Item[] = [
    ...(!guide.flow ? [] : [{ label: '$(add) New run spec…', description: 'pick model, data and reward step by step', alwaysShow: true }]),
    ...specs.map((u) => ({ label: path.basename(u.fsPath), description: vscode.workspace.asRelativePath(path.dirname(u.fsPath)), file: u.fsPath })),
  ];
  const picked = await vscode.window.showQuickPick(items, { title: `Tinker: Start ${specKind(kind).label} Run`, placeHolder: 'Run which spec?', matchOnDescription: true });
  if (!picked) {
    if (guide.noSpec && specs.length === 0) void vscode.window.showInformationMessage(guide.noSpec);
    return undefined;
  }
  if (picked.file) return runSpec(s, picked.file);
  return (await guide.flow?.(s, { guided: {} }))?.();
}

/**
 * Each kind's guided flow, when `arg` holds answers for it (`{ guided: {…} }`; the rest are asked), or,
 * for a kind without one, what to say when the workspace has no spec of it.
 */
const GUIDED: {
  readonly [K in SpecKind]: { flow?: (s: RunCommandServices, arg: unknown) => Promise<(() => Promise<RunResultBase | undefined>) | undefined>; noSpec?: string };
} = {
  grpo: {
    flow: async (s, arg) => {
      const given = (await schemas()).guided.safeParse(arg);
      return given.success ? () => runGuided(s, given.data.guided) : undefined;
    },
  },
  sft: {
    flow: async (s, arg) => {
      const given = (await schemas()).guidedSft.safeParse(arg);
      return given.success ? () => runGuidedSft(s, given.data.guided) : undefined;
    },
  },
  // no guided flow yet: a DPO spec is written by hand (its JSON schema completes it) or from the example
  dpo: { noSpec: `No ${specFileMatch('dpo')} spec in the workspace: write one (its JSON schema completes the fields) or start from examples/dpo-arithmetic.` },
};

async function runGuidedSft(s: RunCommandServices, given: Partial<SftAnswers>): Promise<RunResultBase | undefined> {
  const answers = await askSftSpec(s.connection, given);
  if (!answers) return undefined;
  const uri = await writeSftSpec(answers);
  s.log.info(`wrote run spec ${uri.fsPath}`);
  return s.runner.run({ specFile: uri.fsPath });
}

async function runGuided(s: RunCommandServices, given: Partial<SpecAnswers>): Promise<RunResultBase | undefined> {
  const answers = await askSpec(s.connection, given);
  if (!answers) return undefined;
  const uri = await writeSpec(answers);
  s.log.info(`wrote run spec ${uri.fsPath}`);
  return s.runner.run({ specFile: uri.fsPath });
}

async function runSpec(s: RunCommandServices, file: string): Promise<RunResultBase | undefined> {
  return s.runner.run({ specFile: await saved(file) });
}

/** Saves an open, modified spec first: the run reads the file on disk. */
async function saved(file: string): Promise<string> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && path.resolve(d.uri.fsPath) === path.resolve(file));
  if (doc?.isDirty) await doc.save();
  return path.resolve(file);
}

async function resumeRun(s: RunCommandServices, runArg: unknown, specArg: unknown): Promise<RunResultBase | undefined> {
  const runDir = (await runDirOf(runArg)) ?? (await pickRunDir(s, 'Resume which run?', (r) => isResumable(r, s.registry.byDir(r.dir))));
  if (!runDir) return undefined;
  const specFile = specArg instanceof vscode.Uri ? specArg.fsPath : typeof specArg === 'string' ? specArg : undefined;
  return s.runner.run({ resumeDir: runDir, specFile: specFile ? await saved(specFile) : undefined });
}

async function cancelRun(s: RunCommandServices, arg: unknown): Promise<boolean> {
  const active = s.registry.cancellable();
  let run: ActiveRun | undefined;
  const dir = await runDirOf(arg);
  if (typeof arg === 'number') run = active.find((r) => r.id === arg);
  else if (dir) run = active.find((r) => r.runDir && path.resolve(r.runDir) === path.resolve(dir));
  else if (active.length === 1) run = active[0];
  else if (active.length > 1) {
    const picked = await vscode.window.showQuickPick(
      active.map((r) => ({ label: r.runName, description: describeProgress(r), run: r })),
      { title: 'Tinker: Cancel Run', placeHolder: 'Cancel which run?' },
    );
    run = picked?.run;
    if (!run) return false;
  }
  if (!run) {
    void vscode.window.showInformationMessage('No run is running in this window.');
    return false;
  }
  s.runner.cancel(run);
  void vscode.window.setStatusBarMessage(`Cancelling ${run.runName}…`, 4000);
  return true;
}

async function openMetrics(s: RunCommandServices, arg: unknown): Promise<string | undefined> {
  const runDir = (await runDirOf(arg)) ?? (await pickRunDir(s, 'Open the metrics of which run?', () => true, true));
  if (!runDir) return undefined;
  await s.metrics.open(runDir);
  return path.resolve(runDir);
}

/** Opens the run's W&B page (config.json's wandb.url); returns the URL. */
async function openInWandb(s: RunCommandServices, arg: unknown): Promise<string | undefined> {
  const runDir = (await runDirOf(arg)) ?? (await pickRunDir(s, 'Open which run in W&B?', (r) => r.wandbUrl !== undefined));
  if (!runDir) return undefined;
  const run = (await s.runs.list()).find((r) => path.resolve(r.dir) === path.resolve(runDir));
  if (!run?.wandbUrl) {
    void vscode.window.showInformationMessage(`${path.basename(runDir)} is not logged to W&B (its config.json has no W&B URL). Add "wandb_project" to the spec, or set tinker.wandb.project.`);
    return undefined;
  }
  await windowUi.openExternal(vscode.Uri.parse(run.wandbUrl));
  return run.wandbUrl;
}

/**
 * "Make Preference Pairs from Run…": a GRPO run's training samples → a pairs JSONL file (best against
 * worst sample per group when their rewards differ by at least the threshold; the holdout unused).
 * `options` (tests, agents): { threshold, out } answer the two questions. Returns the file written.
 */
async function makePreferencePairs(s: RunCommandServices, arg: unknown, options: unknown): Promise<string | undefined> {
  const runDir = (await runDirOf(arg)) ?? (await pickRunDir(s, 'Make preference pairs from which GRPO run (its training samples)?', (r) => r.lastReward !== undefined, true));
  if (!runDir) return undefined;
  const given = typeof options === 'object' && options !== null ? (options as { threshold?: unknown; out?: unknown }) : {};
  let threshold = typeof given.threshold === 'number' ? given.threshold : undefined;
  if (threshold === undefined) {
    const text = await vscode.window.showInputBox({
      title: 'Make Preference Pairs from Run',
      prompt: 'Least reward difference between the best and the worst sample of a group for a pair',
      value: '0.5',
      validateInput: (v) => (Number(v) > 0 && Number.isFinite(Number(v)) ? undefined : 'a number above 0, e.g. 0.5'),
    });
    if (text === undefined) return undefined;
    threshold = Number(text);
  }
  let out = typeof given.out === 'string' ? given.out : undefined;
  if (out === undefined) {
    const base = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(path.dirname(runDir));
    const uri = await vscode.window.showSaveDialog({ title: 'Save the preference pairs', defaultUri: vscode.Uri.joinPath(base, `${path.basename(runDir)}.pairs.jsonl`), filters: { 'JSON Lines': ['jsonl'] } });
    if (!uri) return undefined;
    out = uri.fsPath;
  }
  const { makePairsFromRun, pairsJsonl } = await import('../../core/dpo/fromRun');
  const { writeFileAtomic } = await import('../../core/fs/atomic');
  const made = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Making preference pairs from ${path.basename(runDir)}` }, async () => {
    const m = await makePairsFromRun(runDir, { threshold });
    await writeFileAtomic(out!, pairsJsonl(m.pairs));
    return m;
  });
  for (const p of made.problems) s.log.warn(`skipped ${p}`);
  const summary = `${made.pairs.length} preference pairs from ${made.groups} groups (${made.belowThreshold} below the threshold ${threshold}) written to ${vscode.workspace.asRelativePath(out)}`;
  s.log.info(summary);
  void vscode.window.showInformationMessage(`${summary}.`, 'Open File').then((a) => {
    if (a) void vscode.window.showTextDocument(vscode.Uri.file(out!));
  });
  return out;
}

async function runDirOf(arg: unknown): Promise<string | undefined> {
  if (typeof arg === 'string' && arg) return arg;
  if (arg instanceof vscode.Uri) return arg.fsPath;
  const node = (await schemas()).runNode.safeParse(arg);
  return node.success ? node.data.run.dir : undefined;
}

async function pickRunDir(
  s: RunCommandServices,
  placeHolder: string,
  filter: (r: RunSummary) => boolean,
  allowBrowse = false,
): Promise<string | undefined> {
  const runs = (await s.runs.list()).filter(filter);
  type Item = vscode.QuickPickItem & { dir?: string };
  const items: Item[] = runs.map((r) => ({
    label: r.name,
    description: [r.lastStep !== undefined ? `iteration ${r.lastStep}` : undefined, r.lastReward !== undefined ? `reward ${r.lastReward.toFixed(3)}` : undefined, r.finished ? 'completed' : undefined]
      .filter(Boolean)
      .join(' · '),
    detail: r.dir,
    dir: r.dir,
  }));
  if (allowBrowse) items.push({ label: '$(folder-opened) Open a run folder…', description: 'any run directory, e.g. one written by the Python tinker-cookbook', alwaysShow: true });
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`No runs in ${s.runs.runsFolder}.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, { title: 'Tinker', placeHolder, matchOnDetail: true });
  if (!picked) return undefined;
  if (picked.dir) return picked.dir;
  const folder = await vscode.window.showOpenDialog({ canSelectFiles: false, canSelectFolders: true, canSelectMany: false, title: 'Open a run folder (metrics.jsonl)' });
  return folder?.[0]?.fsPath;
}
