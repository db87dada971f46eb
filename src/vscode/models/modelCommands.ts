// The Models view's actions, also run by the model card's buttons: open the card, promote (to staging,
// or to production through the suite gate: a refusal shows every reason and number in one message,
// with "Promote Anyway…" asking for a written reason), retire, run the suite (background, cancellable),
// open in the playground, compare with production, copy the path, clear the checkpoint's TTL, open
// MODELS.md; and register a finished run's final checkpoint (Runs view) or a checkpoint (Checkpoints
// view). Every write goes through src/core/models (locked, atomic, MODELS.md regenerated).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SuiteRunner } from '../../core/suite/contract';
import type { ModelStatus } from '../../core/models/registry';
import { COMMAND } from '../common/commandIds';
import { commandArg } from '../common/commandArgs';
import { Handler, registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import { windowUi } from '../common/windowUi';
import type { TinkerConnection } from '../connection/connection';
import type { ModelCardPanels } from './modelCardPanels';
import { isModelRow } from './modelsTree';
import type { ModelRegistryFile } from './registryFile';

export interface ModelCommandServices {
  log: Log;
  registry: ModelRegistryFile;
  cards: Pick<ModelCardPanels, 'open' | 'all'>;
  connection: Pick<TinkerConnection, 'get'>;
  /** the suite runner (src/core/suite/run.ts) with this window's backend, cache and Python */
  suiteRunner(registryFile: string): Promise<SuiteRunner>;
}

/** What a promotion came to (the host tests read it). */
export interface PromoteResult {
  outcome: 'promoted' | 'anyway' | 'refused' | 'staged' | 'cancelled';
  id: string;
  message: string;
}

export const PROMOTE_ANYWAY = 'Promote Anyway…';
/** The suite panel's Compare Suites (issue 47), when this build contributes it. */
const COMPARE_SUITES = 'tinker.compareSuites';

/** The version a command acts on: a Models view row, or `{ id, registryFile? }` (the card, tests, other commands). */
async function versionArg(s: ModelCommandServices, command: string, arg: unknown): Promise<{ id: string; file: string }> {
  if (isModelRow(arg)) {
    if (arg.kind !== 'version') throw new Error('Select a model version in the Models view.');
    return { id: arg.version.id, file: arg.registryFile || s.registry.requireFile() };
  }
  const a = await commandArg(command, 'version', arg, ({ z }) => z.strictObject({ id: z.string().min(1), registryFile: z.string().min(1).optional() }));
  return { id: a.id, file: a.registryFile ?? s.registry.requireFile() };
}

async function readVersion(file: string, id: string) {
  const [{ readRegistry }, { requireVersion }] = await Promise.all([import('../../core/models/store'), import('../../core/models/lifecycle')]);
  const reg = await readRegistry(file);
  return { reg, v: requireVersion(reg, id) };
}

export function registerModelCommands(s: ModelCommandServices): vscode.Disposable[] {
  const changed = () => s.registry.fire();
  const table: Record<string, Handler> = {
    [COMMAND.modelsRefresh]: () => changed(),
    [COMMAND.modelsOpenCard]: async (arg?: unknown) => {
      const { id, file } = await versionArg(s, COMMAND.modelsOpenCard, arg);
      return s.cards.open({ id, registryFile: file });
    },
    [COMMAND.modelsPromote]: async (arg?: unknown, answers?: unknown) => {
      const a = await commandArg(COMMAND.modelsPromote, 'answers', answers, ({ z }) => z.strictObject({ to: z.enum(['staging', 'production']).optional() }).optional());
      const r = await promoteCommand(s, await versionArg(s, COMMAND.modelsPromote, arg), a?.to);
      changed();
      return r;
    },
    [COMMAND.modelsRetire]: async (arg?: unknown) => {
      const { id, file } = await versionArg(s, COMMAND.modelsRetire, arg);
      const { v } = await readVersion(file, id);
      if (v.status === 'production') {
        const ok = await windowUi.showWarningMessage(`Retire ${id}? It is the production version of ${v.name}: nothing will be in production until another version is promoted.`, 'Retire');
        if (ok !== 'Retire') return undefined;
      }
      const reason = await windowUi.showInputBox({ title: `Retire ${id}`, prompt: 'Why is it retired? (kept in its status history; may be empty)', placeHolder: 'e.g. replaced by a better version' });
      if (reason === undefined) return undefined;
      const { setStatus } = await import('../../core/models/lifecycle');
      const out = await setStatus(file, id, 'retired', reason.trim() ? { reason: reason.trim() } : {});
      changed();
      void vscode.window.setStatusBarMessage(`Tinker: ${id} retired`, 5000);
      return out;
    },
    [COMMAND.modelsRunSuite]: async (arg?: unknown) => runSuiteCommand(s, await versionArg(s, COMMAND.modelsRunSuite, arg)),
    [COMMAND.modelsOpenInPlayground]: async (arg?: unknown) => {
      const { id, file } = await versionArg(s, COMMAND.modelsOpenInPlayground, arg);
      const { v } = await readVersion(file, id);
      if (!v.sampler_path) throw new Error(`${id} has no sampler path: the playground samples sampler weights (register the checkpoint with its sampler weights).`);
      return vscode.commands.executeCommand(COMMAND.openInPlayground, { A: { kind: 'checkpoint', path: v.sampler_path } });
    },
    [COMMAND.modelsCompareWithProduction]: async (arg?: unknown) => {
      const { id, file } = await versionArg(s, COMMAND.modelsCompareWithProduction, arg);
      const { reg, v } = await readVersion(file, id);
      const prod = reg.versions.find((x) => x.name === v.name && x.status === 'production');
      // Compare Suites (the suite panel, production as B) where this build has it; else the card, whose
      // gate section has the same paired verdicts entry by entry
      if (prod?.sampler_path && v.sampler_path && reg.gate_suite && (await vscode.commands.getCommands(true)).includes(COMPARE_SUITES)) {
        const suiteFile = path.resolve(path.dirname(file), reg.gate_suite);
        return vscode.commands.executeCommand(COMPARE_SUITES, { suiteFile, checkpoints: [v.sampler_path, prod.sampler_path] });
      }
      if (!prod) void vscode.window.showInformationMessage(`${v.name} has no production version to compare ${id} with yet.`);
      const card = await s.cards.open({ id, registryFile: file });
      await card.refresh();
      return card;
    },
    [COMMAND.modelsCopyPath]: async (arg?: unknown) => {
      const { id, file } = await versionArg(s, COMMAND.modelsCopyPath, arg);
      const { v } = await readVersion(file, id);
      const p = v.sampler_path ?? v.state_path;
      if (!p) throw new Error(`${id} records no tinker:// path.`);
      await vscode.env.clipboard.writeText(p);
      void vscode.window.setStatusBarMessage(`Tinker: copied ${p}`, 5000);
      return p;
    },
    [COMMAND.modelsClearTtl]: async (arg?: unknown) => clearTtlCommand(s, await versionArg(s, COMMAND.modelsClearTtl, arg)),
    [COMMAND.modelsOpenModelsMd]: async () => {
      const file = s.registry.requireFile();
      const [{ readRegistry, writeModelsMd, modelsMdOf }] = await Promise.all([import('../../core/models/store')]);
      const md = modelsMdOf(file);
      if (!fs.existsSync(md)) await writeModelsMd(file, await readRegistry(file));
      await vscode.window.showTextDocument(vscode.Uri.file(md), { preview: true });
      return md;
    },
    [COMMAND.modelsRegisterRun]: async (node?: unknown, answers?: unknown) => {
      const a = await nameAnswer(COMMAND.modelsRegisterRun, answers);
      const run = await commandArg(COMMAND.modelsRegisterRun, 'run', node, ({ z }) => z.object({ kind: z.literal('run'), run: z.object({ dir: z.string().min(1), name: z.string() }).passthrough() }).passthrough());
      const file = s.registry.requireFile();
      const name = a?.name ?? (await askName(file, run.run.name));
      if (!name) return undefined;
      const { registerFromRun } = await import('../../core/models/lifecycle');
      const v = await registerFromRun(file, { name, runDir: run.run.dir });
      return registered(s, v.id, file);
    },
    [COMMAND.modelsRegisterCheckpoint]: async (node?: unknown, answers?: unknown) => registerCheckpoint(s, node, await nameAnswer(COMMAND.modelsRegisterCheckpoint, answers)),
  };
  return registerTable(table, s.log);
}

async function nameAnswer(command: string, answers: unknown): Promise<{ name?: string } | undefined> {
  return commandArg(command, 'answers', answers, ({ z }) => z.strictObject({ name: z.string().min(1).optional() }).optional());
}

async function registered(s: ModelCommandServices, id: string, file: string) {
  s.registry.fire();
  void vscode.window.showInformationMessage(`Tinker: registered ${id} as a candidate in ${path.basename(file)}.`);
  return id;
}

/** The model name for a new version: a name already in the registry, or a new one (default: from the run's name). */
async function askName(file: string, suggestion: string): Promise<string | undefined> {
  const [{ readRegistry }, { MODEL_NAME_RE }] = await Promise.all([import('../../core/models/store'), import('../../core/models/registry')]);
  const names = [...new Set((await readRegistry(file)).versions.map((v) => v.name))];
  const fallback = suggestion.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '') || 'model';
  const name = await windowUi.showInputBox({
    title: 'Register as a model version',
    prompt: names.length ? `The model's name: a new one, or one of ${names.join(', ')} for its next version` : "The model's name (its versions are <name>@v1, @v2 …)",
    value: names.length === 1 ? names[0] : fallback,
    validateInput: (v) => (MODEL_NAME_RE.test(v.trim()) ? undefined : 'Letters, digits, ".", "_" or "-", starting with a letter or digit'),
  });
  return name?.trim() || undefined;
}

async function registerCheckpoint(s: ModelCommandServices, node: unknown, a: { name?: string } | undefined): Promise<string | undefined> {
  const { isCheckpointRow } = await import('../checkpoints/checkpointsTree');
  if (!isCheckpointRow(node)) throw new Error('Select a checkpoint (or its sampler or state path) in the Checkpoints view.');
  const file = s.registry.requireFile();
  const lifecycle = await import('../../core/models/lifecycle');
  if (node.kind === 'checkpoint' || node.kind === 'path') {
    const name = a?.name ?? (await askName(file, node.run.name));
    if (!name) return undefined;
    const expires = node.kind === 'path' && typeof node.server === 'object' ? node.server.expiresAt : undefined;
    const v = await lifecycle.registerFromRun(file, { name, runDir: node.run.dir, checkpoint: node.checkpoint.name, ...(expires ? { expiresAt: expires.toISOString() } : {}) });
    return registered(s, v.id, file);
  }
  if (node.kind === 'serverCheckpoint') {
    const c = node.checkpoint;
    if (!c.baseModel) throw new Error(`The server does not say which base model ${c.tinkerPath} was trained from: register it with the CLI (tinker-studio registry register ${c.tinkerPath} --base-model <model>).`);
    const name = a?.name ?? (await askName(file, c.runId));
    if (!name) return undefined;
    const v = await lifecycle.registerFromPath(file, {
      name,
      baseModel: c.baseModel,
      ...(c.kind === 'sampler' ? { samplerPath: c.tinkerPath } : { statePath: c.tinkerPath }),
      ...(c.expiresAt ? { expiresAt: c.expiresAt.toISOString() } : {}),
    });
    return registered(s, v.id, file);
  }
  throw new Error('Select a checkpoint (or its sampler or state path) in the Checkpoints view.');
}

async function promoteCommand(s: ModelCommandServices, { id, file }: { id: string; file: string }, given?: 'staging' | 'production'): Promise<PromoteResult> {
  const { v } = await readVersion(file, id);
  let to: ModelStatus | undefined = given;
  if (!to) {
    const picks = (['production', 'staging'] as const).filter((x) => x !== v.status).map((x) => ({ label: x, description: x === 'production' ? 'through the suite gate, paired against the current production version' : 'ready for production, not serving yet' }));
    to = (await vscode.window.showQuickPick(picks, { title: `Promote ${id} (${v.status}) to…` }))?.label;
    if (!to) return { outcome: 'cancelled', id, message: 'cancelled' };
  }
  const lifecycle = await import('../../core/models/lifecycle');
  if (to === 'staging') {
    await lifecycle.setStatus(file, id, 'staging', { reason: `promoted from ${v.status}` });
    const message = `${id} is in staging.`;
    void vscode.window.showInformationMessage(`Tinker: ${message}`);
    return { outcome: 'staged', id, message };
  }
  const { promote, PromotionRefusedError } = await import('../../core/models/promotion');
  try {
    const out = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Checking the promotion gate for ${id}…` }, () => promote(file, id));
    const message = `${id} is in production${out.replaced ? ` (${out.replaced.id} retired)` : ''}: ${out.check.passes.length} gate check${out.check.passes.length === 1 ? '' : 's'} passed.`;
    void vscode.window.showInformationMessage(`Tinker: ${message}`);
    return { outcome: 'promoted', id, message };
  } catch (err) {
    if (!(err instanceof PromotionRefusedError)) throw err;
    const c = err.check;
    const against = c.production ? `against ${c.production.id}` : '(no production version yet)';
    const message = `${id} was not promoted to production ${against}${c.suite ? ` on suite ${c.suite.name} (version ${c.suite.version})` : ''}: ${c.refusals.map((r, i) => `(${i + 1}) ${r}`).join(' ')}`;
    s.log.warn(`promotion refused: ${err.message}`);
    const choice = await windowUi.showWarningMessage(message, PROMOTE_ANYWAY);
    if (choice !== PROMOTE_ANYWAY) return { outcome: 'refused', id, message };
    const reason = await windowUi.showInputBox({
      title: `Promote ${id} anyway`,
      prompt: `The gate refused (${c.refusals.length} reason${c.refusals.length === 1 ? '' : 's'}). Why does this model ship anyway? The registry keeps your reason in its status history.`,
      placeHolder: 'a written reason',
      validateInput: (x) => (x.trim() ? undefined : 'Promoting past the gate needs a written reason'),
    });
    if (!reason?.trim()) return { outcome: 'refused', id, message };
    const out = await promote(file, id, { anyway: reason });
    const done = `${id} is in production despite the gate${out.replaced ? ` (${out.replaced.id} retired)` : ''}; the reason is kept in its history.`;
    void vscode.window.showInformationMessage(`Tinker: ${done}`);
    return { outcome: 'anyway', id, message: done };
  }
}

async function runSuiteCommand(s: ModelCommandServices, { id, file }: { id: string; file: string }) {
  const runner = await s.suiteRunner(file);
  const { recordSuiteResult } = await import('../../core/models/promotion');
  const abort = new AbortController();
  const out = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Suite on ${id}`, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => abort.abort());
    return recordSuiteResult(file, id, { runSuite: runner, signal: abort.signal, onProgress: (line) => progress.report({ message: line.trim() }) });
  });
  s.registry.fire();
  if (out.stale.length) void vscode.window.showWarningMessage(`Tinker: the suite result of ${id} does not stand yet: ${out.stale.join('; ')}`);
  else void vscode.window.setStatusBarMessage(`Tinker: suite result of ${id} recorded`, 5000);
  return out.version;
}

async function clearTtlCommand(s: ModelCommandServices, { id, file }: { id: string; file: string }) {
  const { v } = await readVersion(file, id);
  const paths = [v.state_path, v.sampler_path].filter((p): p is string => !!p);
  if (!paths.length) throw new Error(`${id} records no tinker:// path.`);
  const [{ setCheckpointTtl }, { setExpiry }] = await Promise.all([import('../../core/checkpoints/manage'), import('../../core/models/lifecycle')]);
  const client = await s.connection.get();
  for (const p of paths) await setCheckpointTtl(client, p, null);
  const out = await setExpiry(file, id, undefined);
  s.registry.fire();
  void vscode.window.showInformationMessage(`Tinker: ${id}'s checkpoint is kept without expiry.`);
  return out;
}
