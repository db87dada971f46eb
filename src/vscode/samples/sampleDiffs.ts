// Sample diffs across evaluations and runs, in the native diff editors:
// - "Tinker: Compare Holdout Problem Across Evaluations": one holdout problem in two evaluations of a
//   run (default: the first and the latest);
// - "Tinker: Compare Samples Across Runs": one prompt in two runs (each run's latest evaluation or a picked iteration,
//   else its latest training iteration);
// - "Tinker: What Changed": a multi-diff (`vscode.changes`) of every holdout problem whose reward
//   changed between two evaluations, improved first, then regressed, each entry titled with the
//   problem and its reward before → after.
// Pairing and ordering are pure (src/core/runs/sampleChanges.ts); each command returns what it opened.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import type { z } from 'zod';
import type { SampleRecord } from '../../protocol/sampleSchema';
import type { SamplePair } from '../../core/runs/sampleChanges';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import type { RunsModel } from '../runs/runsModel';
import { readSample, sampleUri } from './sampleDocuments';

export interface SampleDiffServices {
  log: Log;
  runs: RunsModel;
}

export function registerSampleDiffs(s: SampleDiffServices): vscode.Disposable[] {
  return registerTable(
    {
      [COMMAND.compareEvaluations]: (arg?: unknown) => compareEvaluations(s, arg),
      [COMMAND.compareRuns]: (arg?: unknown) => compareRuns(s, arg),
      [COMMAND.whatChanged]: (arg?: unknown) => whatChanged(s, arg),
    },
    s.log,
  );
}

/** What a diff command opened. */
export interface OpenedDiff {
  title: string;
  left: string;
  right: string;
}

type Split = 'train' | 'eval';

const addressOf = (runDir: string, iteration: number, split: Split, r: SampleRecord) => ({ runDir, iteration, split, groupIdx: r.group_idx, trajIdx: r.traj_idx });

async function schemas() {
  const { z } = await import('zod');
  const nat = z.number().int().nonnegative();
  return {
    /** a run node of the Runs view */
    runNode: z.object({ run: z.object({ dir: z.string().min(1) }) }),
    evaluations: z.object({
      runDir: z.string().min(1),
      /** the holdout problem; or the evaluation sample naming it (`iteration`, `groupIdx`, `trajIdx`) */
      problemId: z.string().optional(),
      iteration: nat.optional(),
      groupIdx: nat.optional(),
      trajIdx: nat.optional(),
      before: nat.optional(),
      after: nat.optional(),
    }),
    runs: z.object({
      runDir: z.string().min(1),
      otherRunDir: z.string().min(1).optional(),
      /** a sample of `runDir` whose prompt to look for (default: pick among the prompts both runs have) */
      iteration: nat.optional(),
      split: z.enum(['train', 'eval']).optional(),
      groupIdx: nat.optional(),
      trajIdx: nat.optional(),
      /** the other run's iteration (default: its latest sampled one) */
      otherIteration: nat.optional(),
      otherSplit: z.enum(['train', 'eval']).optional(),
      /** ask for the iteration of each side not given (the palette always asks) */
      pickIterations: z.boolean().optional(),
    }),
    changes: z.object({ runDir: z.string().min(1), before: nat.optional(), after: nat.optional() }),
  };
}

type Schemas = Awaited<ReturnType<typeof schemas>>;

/** The command's argument: a run directory (path, file URI or Runs view node) or the command's options; undefined when none was given. */
async function parseArg<S extends z.ZodType>(pick: (s: Schemas) => S, arg: unknown, command: string): Promise<z.output<S> | undefined> {
  if (arg === undefined) return undefined;
  const sch = await schemas();
  const node = sch.runNode.safeParse(arg);
  const value = typeof arg === 'string' ? { runDir: arg } : arg instanceof vscode.Uri ? { runDir: arg.fsPath } : node.success ? { runDir: node.data.run.dir } : arg;
  const parsed = pick(sch).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${command}: unexpected argument (${issue ? `${issue.path.join('.') || 'argument'}: ${issue.message}` : 'invalid'})`);
  }
  return parsed.data;
}

async function pickRun(s: SampleDiffServices, title: string, placeHolder: string, except?: string): Promise<string | undefined> {
  const runs = (await s.runs.list()).filter((r) => r.dir !== except);
  if (runs.length === 0) {
    void vscode.window.showInformationMessage(`${title}: no ${except ? 'other ' : ''}run in the runs folder.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    runs.map((r) => ({ label: r.name, description: r.model, dir: r.dir })),
    { title, placeHolder },
  );
  return picked?.dir;
}

/**
 * Asks which sampled iteration of a run to compare (the latest first, so Enter keeps it); undefined
 * when the run has one or none (the default applies), null when the person dismissed the pick.
 */
async function pickIteration(runDir: string, title: string, side: string): Promise<{ iteration: number; split: Split } | undefined | null> {
  const { sampledIterations } = await import('../../core/runs/sampleRecord');
  const its = await sampledIterations(runDir);
  const items = [
    ...[...its.eval].reverse().map((i) => ({ label: `evaluation ${i}`, description: 'holdout', iteration: i, split: 'eval' as Split })),
    ...[...its.train].reverse().map((i) => ({ label: `iteration ${i}`, description: 'training', iteration: i, split: 'train' as Split })),
  ];
  if (items.length <= 1) return undefined;
  const picked = await vscode.window.showQuickPick(items, { title, placeHolder: `Which iteration of ${path.basename(runDir)} (${side})?` });
  return picked ? { iteration: picked.iteration, split: picked.split } : null;
}

/** The run's first-vs-latest (or given) holdout evaluations, read and paired by problem. */
async function evaluationChanges(runDir: string, given: { before: number | undefined; after: number | undefined }, command: string) {
  const { sampledIterations } = await import('../../core/runs/sampleRecord');
  const { evaluationPair, pairSamples, rewardChanges } = await import('../../core/runs/sampleChanges');
  const its = evaluationPair((await sampledIterations(runDir)).eval, given);
  if (!its) {
    void vscode.window.showInformationMessage(`${command}: ${path.basename(runDir)} has fewer than two holdout evaluations with samples (eval_every and a holdout in the spec write them).`);
    return undefined;
  }
  const [before, after] = await Promise.all([readSample({ runDir, iteration: its.before, split: 'eval' }), readSample({ runDir, iteration: its.after, split: 'eval' })]);
  const pairing = pairSamples(before, after, 'problem');
  return { ...its, pairing, changes: rewardChanges(pairing.pairs) };
}

/** Pairs ordered for a pick: the changed ones first (improved, then regressed), then the rest. */
async function pickPair(pairs: readonly SamplePair[], title: string, placeHolder: string): Promise<SamplePair | undefined> {
  const { changeTitle, rewardChanges } = await import('../../core/runs/sampleChanges');
  // a change is its pair with the delta added, so it serves as the pair
  const changed = rewardChanges(pairs);
  const changedBefore = new Set(changed.map((c) => c.before));
  const items: Array<{ label: string; description: string; pair: SamplePair }> = changed.map((c) => ({ label: changeTitle(c), description: c.direction, pair: c }));
  for (const p of pairs) if (!changedBefore.has(p.before)) items.push({ label: changeTitle(p), description: 'unchanged', pair: p });
  return (await vscode.window.showQuickPick(items, { title, placeHolder, matchOnDescription: true }))?.pair;
}

/** One holdout problem in two evaluations of a run, in the diff editor. */
export async function compareEvaluations(s: SampleDiffServices, arg: unknown): Promise<OpenedDiff | undefined> {
  const command = 'Tinker: Compare Holdout Problem Across Evaluations';
  const opts = await parseArg((x) => x.evaluations, arg, command);
  const runDir = opts?.runDir ?? (await pickRun(s, command, 'The evaluations of which run?'));
  if (!runDir) return undefined;
  let problemId = opts?.problemId;
  let given = { before: opts?.before, after: opts?.after };
  if (problemId === undefined && opts?.iteration !== undefined && opts.groupIdx !== undefined) {
    const from = (await readSample({ runDir, iteration: opts.iteration, split: 'eval' })).find((r) => r.group_idx === opts.groupIdx && r.traj_idx === (opts.trajIdx ?? 0));
    if (!from) throw new Error(`evaluation ${opts.iteration} of ${runDir} has no sample ${opts.trajIdx ?? 0} in group ${opts.groupIdx}`);
    problemId = from.problem_id;
    if (given.before === undefined && given.after === undefined) given = { before: undefined, after: opts.iteration };
  }
  const ev = await evaluationChanges(runDir, given, command);
  if (!ev) return undefined;
  const pair =
    problemId !== undefined
      ? ev.pairing.pairs.find((p) => p.problemId === problemId)
      : await pickPair(ev.pairing.pairs, command, `Which holdout problem? (evaluation ${ev.before} → ${ev.after})`);
  if (!pair) {
    if (problemId !== undefined) throw new Error(`holdout problem ${problemId} is not in both evaluation ${ev.before} and evaluation ${ev.after} of ${runDir}`);
    return undefined;
  }
  const { changeTitle } = await import('../../core/runs/sampleChanges');
  const left = sampleUri(addressOf(runDir, ev.before, 'eval', pair.before));
  const right = sampleUri(addressOf(runDir, ev.after, 'eval', pair.after));
  const title = `${path.basename(runDir)} ${changeTitle(pair)} (evaluation ${ev.before} ↔ ${ev.after})`;
  await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  return { title, left: left.toString(), right: right.toString() };
}

/** One prompt in two runs, in the diff editor. */
export async function compareRuns(s: SampleDiffServices, arg: unknown): Promise<OpenedDiff | undefined> {
  const command = 'Tinker: Compare Samples Across Runs';
  const opts = await parseArg((x) => x.runs, arg, command);
  const runDir = opts?.runDir ?? (await pickRun(s, command, 'The first run (left)?'));
  if (!runDir) return undefined;
  const otherRunDir = opts?.otherRunDir ?? (await pickRun(s, command, `Compare ${path.basename(runDir)} with which run (right)?`, runDir));
  if (!otherRunDir) return undefined;
  const { sampledIterations } = await import('../../core/runs/sampleRecord');
  const { changeTitle, latestSampled, pairSamples } = await import('../../core/runs/sampleChanges');
  const sideOf = async (dir: string, given?: { iteration: number; split: Split }) => {
    const at = given ?? latestSampled(await sampledIterations(dir));
    if (!at) throw new Error(`${dir} has no samples files yet (iteration_NNNNNN/*_samples.jsonl)`);
    return { ...at, records: await readSample({ runDir: dir, ...at }) };
  };
  const ask = arg === undefined || opts?.pickIterations === true;
  const chosen = async (dir: string, side: string, iteration: number | undefined, split: Split | undefined) => {
    if (iteration !== undefined) return { iteration, split: split ?? 'eval' };
    return ask ? await pickIteration(dir, command, side) : undefined;
  };
  const atA = await chosen(runDir, 'left', opts?.iteration, opts?.split);
  if (atA === null) return undefined;
  const atB = await chosen(otherRunDir, 'right', opts?.otherIteration, opts?.otherSplit);
  if (atB === null) return undefined;
  const a = await sideOf(runDir, atA);
  const b = await sideOf(otherRunDir, atB);
  let pairs = pairSamples(a.records, b.records, 'prompt').pairs;
  if (opts?.groupIdx !== undefined) {
    const from = a.records.find((r) => r.group_idx === opts.groupIdx && r.traj_idx === (opts.trajIdx ?? 0));
    if (!from) throw new Error(`iteration ${a.iteration} of ${runDir} has no sample ${opts.trajIdx ?? 0} in group ${opts.groupIdx}`);
    // the sample's own partner, else the first sample of the other run with that prompt
    const partner = pairs.find((p) => p.before === from) ?? pairs.find((p) => p.key === from.prompt);
    const other = partner?.after ?? b.records.find((r) => r.prompt === from.prompt);
    pairs = other ? [{ key: from.prompt, problemId: from.problem_id, before: from, after: other }] : [];
  }
  const where = (x: { iteration: number; split: Split }) => `${x.split === 'eval' ? 'evaluation' : 'iteration'} ${x.iteration}`;
  if (pairs.length === 0) {
    void vscode.window.showInformationMessage(`${command}: ${path.basename(otherRunDir)} (${where(b)}) has no sample with the same prompt as ${path.basename(runDir)} (${where(a)}).`);
    return undefined;
  }
  const pair = pairs.length === 1 ? pairs[0] : await pickPair(pairs, command, `Which prompt? (${pairs.length} in both runs)`);
  if (!pair) return undefined;
  const left = sampleUri(addressOf(runDir, a.iteration, a.split, pair.before));
  const right = sampleUri(addressOf(otherRunDir, b.iteration, b.split, pair.after));
  const title = `${path.basename(runDir)} ${where(a)} ↔ ${path.basename(otherRunDir)} ${where(b)}: ${changeTitle(pair)}`;
  await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  return { title, left: left.toString(), right: right.toString() };
}

/** What "What Changed" opened: its title and one entry per changed problem, in order. */
export interface OpenedChanges {
  title: string;
  entries: Array<OpenedDiff & { label: string }>;
}

/** Every holdout problem whose reward changed between two evaluations, in one multi-diff editor. */
export async function whatChanged(s: SampleDiffServices, arg: unknown): Promise<OpenedChanges | undefined> {
  const command = 'Tinker: What Changed';
  const opts = await parseArg((x) => x.changes, arg, command);
  const runDir = opts?.runDir ?? (await pickRun(s, command, 'What changed in which run?'));
  if (!runDir) return undefined;
  const ev = await evaluationChanges(runDir, { before: opts?.before, after: opts?.after }, command);
  if (!ev) return undefined;
  const { changeTitle, describeChanges } = await import('../../core/runs/sampleChanges');
  const summary = describeChanges(ev.pairing, ev.changes);
  const title = `What changed: ${path.basename(runDir)}, evaluation ${ev.before} → ${ev.after} (${summary})`;
  if (ev.changes.length === 0) {
    void vscode.window.showInformationMessage(`${command}: no holdout reward changed in ${path.basename(runDir)} between evaluation ${ev.before} and ${ev.after}: ${summary}.`);
    return { title, entries: [] };
  }
  const entries = ev.changes.map((c) => {
    const label = changeTitle(c);
    const left = sampleUri(addressOf(runDir, ev.before, 'eval', c.before), label);
    const right = sampleUri(addressOf(runDir, ev.after, 'eval', c.after), label);
    return { label, left, right };
  });
  await vscode.commands.executeCommand('vscode.changes', title, entries.map((e) => [e.right, e.left, e.right]));
  return { title, entries: entries.map((e) => ({ label: e.label, title: e.label, left: e.left.toString(), right: e.right.toString() })) };
}
