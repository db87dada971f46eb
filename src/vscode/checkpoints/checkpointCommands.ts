// The Checkpoints view's actions: copy a checkpoint's tinker:// path, publish/unpublish, set/clear
// TTL, delete (multi-select, one confirmation), download (progress with cancel), weights info, start
// GRPO/SFT from a state checkpoint, resume its run, refresh and "Load more". Each runs on src/core/checkpoints; a failing
// item is reported with what happened and the others go on, and the tree stays usable. The optional
// last argument carries answers (tests, other commands) that skip the prompts.
import * as vscode from 'vscode';
import type { ItemOutcome } from '../../core/checkpoints/bulk';
import { CheckpointTarget, CheckpointsTreeProvider, checkpointPath, isCheckpointRow, targetOf } from './checkpointsTree';
import { COMMAND } from '../common/commandIds';
import { Handler, registerTable } from '../common/commandTable';
import { TinkerConnection } from '../connection/connection';
import { readNetworkSettings } from '../common/networkSettings';
import { Log } from '../common/log';
import { type SpecKind, specKind } from '../../core/spec/kinds';
import { CommandArgumentError, commandArg } from '../common/commandArgs';
import { errorMessage } from '../../core/errors';

export interface CheckpointCommandServices {
  log: Log;
  connection: Pick<TinkerConnection, 'get'>;
  tree: CheckpointsTreeProvider;
}

/** Answers given up front skip their prompt. */
export interface CheckpointAnswers {
  /** true: the delete confirmation is answered "Delete" */
  confirm?: boolean;
  /** a TTL as typed ("7d", "3600") */
  ttl?: string;
  /** the folder a download goes into */
  folder?: string;
  /** further answers for the guided GRPO/SFT flow started from a checkpoint */
  guided?: Record<string, unknown>;
}

/** What a bulk action returns: each path and how it went. */
export interface ActionReport {
  tinkerPath: string;
  ok: boolean;
  error?: string;
}

export function registerCheckpointCommands(s: CheckpointCommandServices): vscode.Disposable[] {
  const table: Record<string, Handler> = {
    [COMMAND.copyCheckpointPath]: (node?: unknown, which?: unknown) => copyCheckpointPath(node, which),
    [COMMAND.checkpointsRefresh]: () => s.tree.refresh(),
    [COMMAND.checkpointsLoadMore]: () => s.tree.loadMore(),
    [COMMAND.checkpointsPublish]: (n?: unknown, sel?: unknown) => bulk(s, targets(n, sel), 'published', 'publish', (m, c, p, t) => m.publishCheckpoint(c, p, t)),
    [COMMAND.checkpointsUnpublish]: (n?: unknown, sel?: unknown) => bulk(s, targets(n, sel), 'unpublished', 'unpublish', (m, c, p, t) => m.unpublishCheckpoint(c, p, t)),
    [COMMAND.checkpointsSetTtl]: async (n?: unknown, sel?: unknown, a?: unknown) => setTtl(s, targets(n, sel), await answers(COMMAND.checkpointsSetTtl, a)),
    [COMMAND.checkpointsClearTtl]: (n?: unknown, sel?: unknown) =>
      bulk(s, targets(n, sel), 'kept without expiry', 'clear the TTL of', (m, c, p, t) => m.setCheckpointTtl(c, p, null, t)),
    [COMMAND.checkpointsDelete]: async (n?: unknown, sel?: unknown, a?: unknown) => deleteMany(s, targets(n, sel), await answers(COMMAND.checkpointsDelete, a)),
    [COMMAND.checkpointsDownload]: async (n?: unknown, _sel?: unknown, a?: unknown) => download(s, one(n), await answers(COMMAND.checkpointsDownload, a)),
    [COMMAND.checkpointsWeightsInfo]: (n?: unknown) => weightsInfo(s, one(n)),
    [COMMAND.checkpointsStartGrpo]: async (n?: unknown, _sel?: unknown, a?: unknown) => startFrom(s, one(n), 'grpo', await answers(COMMAND.checkpointsStartGrpo, a)),
    [COMMAND.checkpointsStartSft]: async (n?: unknown, _sel?: unknown, a?: unknown) => startFrom(s, one(n), 'sft', await answers(COMMAND.checkpointsStartSft, a)),
    [COMMAND.checkpointsSearch]: async (a?: unknown) => searchCommand(s, await commandArg(COMMAND.checkpointsSearch, 'answers', a, ({ z }) => z.strictObject({ query: z.string() }).optional())),
    [COMMAND.checkpointsResumeRun]: (n?: unknown) => {
      const t = one(n);
      if (!t.runDir) throw new Error('This checkpoint was not saved by a run in the runs folder, so there is no run to resume.');
      return vscode.commands.executeCommand(COMMAND.resumeRun, t.runDir);
    },
  };
  return registerTable(table, s.log);
}

/** The answers argument (tests and other commands give it; menus do not). */
async function answers(command: string, a: unknown): Promise<CheckpointAnswers> {
  const given = await commandArg(command, 'answers', a, ({ z }) =>
    z.strictObject({ confirm: z.boolean().optional(), ttl: z.string().optional(), folder: z.string().optional(), guided: z.record(z.string(), z.unknown()).optional() }).optional(),
  );
  return given ?? {};
}

/** The checkpoints an action applies to: the selection when the clicked row is part of it, else the row. */
export function targets(node: unknown, selected: unknown): CheckpointTarget[] {
  const rows = Array.isArray(selected) && selected.length > 0 && isCheckpointRow(node) && selected.includes(node) ? selected : [node];
  const out: CheckpointTarget[] = [];
  for (const r of rows) {
    if (!isCheckpointRow(r)) continue;
    const t = targetOf(r);
    if (t && !out.some((o) => o.tinkerPath === t.tinkerPath)) out.push(t);
  }
  if (!out.length) throw new Error('Select a state or sampler checkpoint in the Checkpoints view.');
  return out;
}

function one(node: unknown): CheckpointTarget {
  return targets(node, undefined)[0]!;
}

type Manage = typeof import('../../core/checkpoints/manage');
type ClientOf = Awaited<ReturnType<CheckpointCommandServices['connection']['get']>>;
type Action = (m: Manage, client: ClientOf, tinkerPath: string, ctx: { expiresAt?: Date }) => Promise<void>;

/** Runs `action` on each target (bounded), reports failures in one message, refreshes the tree. */
async function bulk(s: CheckpointCommandServices, list: CheckpointTarget[], doneWord: string, verb: string, action: Action): Promise<ActionReport[]> {
  const m = await import('../../core/checkpoints/manage');
  const client = await s.connection.get();
  const byPath = new Map(list.map((t) => [t.tinkerPath, t]));
  const outcomes = await vscode.window.withProgress(
    { location: { viewId: 'tinker.checkpoints' }, title: `${verb} ${list.length} checkpoint${list.length === 1 ? '' : 's'}` },
    () => m.forEachCheckpoint([...byPath.keys()], (p) => action(m, client, p, { expiresAt: byPath.get(p)?.server?.expiresAt })),
  );
  s.tree.refresh();
  report(s, outcomes, doneWord, m);
  return outcomes.map((o) => ({ tinkerPath: o.item, ok: o.ok, ...(o.ok ? {} : { error: o.error.message }) }));
}

function report(s: CheckpointCommandServices, outcomes: Array<ItemOutcome<string, void>>, doneWord: string, m: Manage): void {
  const summary = m.bulkSummary(doneWord, outcomes);
  if (outcomes.some((o) => !o.ok)) {
    s.log.warn(summary);
    void vscode.window.showErrorMessage(s.log.redactor.redact(outcomes.length === 1 && !outcomes[0]!.ok ? outcomes[0]!.error.message : summary));
  } else void vscode.window.setStatusBarMessage(`Tinker: ${summary}`, 5000);
}

async function setTtl(s: CheckpointCommandServices, list: CheckpointTarget[], a: CheckpointAnswers): Promise<ActionReport[] | undefined> {
  const { parseTtl, durationText } = await import('../../core/checkpoints/format');
  const typed =
    a.ttl ??
    (await vscode.window.showInputBox({
      title: `Set TTL of ${list.length === 1 ? list[0]!.tinkerPath : `${list.length} checkpoints`}`,
      prompt: 'Expire after (from now): seconds, or a number with s, m, h, d or w',
      value: '7d',
      validateInput: (v) => {
        try {
          parseTtl(v);
          return undefined;
        } catch (err) {
          return errorMessage(err);
        }
      },
    }));
  if (typed === undefined) return undefined;
  const seconds = parseTtl(typed);
  return bulk(s, list, `set to expire in ${durationText(seconds * 1000)}`, 'set the TTL of', (m, c, p, ctx) => m.setCheckpointTtl(c, p, seconds, ctx));
}

/** The delete confirmation: how many, and which (the first ten paths, then how many more). */
export function deleteConfirmation(paths: readonly string[]): { message: string; detail: string } {
  const n = paths.length;
  const shown = paths.slice(0, 10);
  const more = n - shown.length;
  return {
    message: `Delete ${n} checkpoint${n === 1 ? '' : 's'} from the server?`,
    detail: `${shown.join('\n')}${more > 0 ? `\n…and ${more} more` : ''}\n\nThe weights are deleted on the server and cannot be recovered. Local run records are kept.`,
  };
}

async function deleteMany(s: CheckpointCommandServices, list: CheckpointTarget[], a: CheckpointAnswers): Promise<ActionReport[] | undefined> {
  if (a.confirm !== true) {
    const c = deleteConfirmation(list.map((t) => t.tinkerPath));
    const pick = await vscode.window.showWarningMessage(c.message, { modal: true, detail: c.detail }, 'Delete');
    if (pick !== 'Delete') return undefined;
  }
  return bulk(s, list, 'deleted', 'delete', (m, c, p, ctx) => m.deleteCheckpoint(c, p, ctx));
}

async function download(s: CheckpointCommandServices, t: CheckpointTarget, a: CheckpointAnswers) {
  let folder = a.folder;
  if (!folder) {
    const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Download here', title: `Download ${t.tinkerPath}` });
    folder = picked?.[0]?.fsPath;
  }
  if (!folder) return undefined;
  const { downloadCheckpoint } = await import('../../core/checkpoints/download');
  const { sizeText } = await import('../../core/checkpoints/format');
  const client = await s.connection.get();
  const dest = folder;
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Downloading ${t.tinkerPath}`, cancellable: true },
    async (progress, token) => {
      const ac = new AbortController();
      const sub = token.onCancellationRequested(() => ac.abort());
      let last = 0;
      try {
        return await downloadCheckpoint(client, t.tinkerPath, dest, {
          signal: ac.signal,
          network: readNetworkSettings(),
          onProgress: ({ received, total }) => {
            const pct = total ? (received / total) * 100 : undefined;
            progress.report({ message: `${sizeText(received)}${total ? ` of ${sizeText(total)}` : ''}`, increment: pct !== undefined ? pct - last : undefined });
            if (pct !== undefined) last = pct;
          },
        });
      } catch (err) {
        if (ac.signal.aborted) return undefined;
        throw err;
      } finally {
        sub.dispose();
      }
    },
  );
  if (!result) {
    void vscode.window.setStatusBarMessage('Tinker: download cancelled; nothing was written', 5000);
    return undefined;
  }
  s.log.info(`downloaded ${t.tinkerPath} into ${result.dir} (${result.files.join(', ')})`);
  void vscode.window.showInformationMessage(`Downloaded ${t.tinkerPath} into ${result.dir}`, 'Reveal').then((x) => {
    if (x === 'Reveal') void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(result.dir));
  });
  return result;
}

async function weightsInfo(s: CheckpointCommandServices, t: CheckpointTarget) {
  const { checkpointWeightsInfo, weightsInfoLines } = await import('../../core/checkpoints/manage');
  const w = await checkpointWeightsInfo(await s.connection.get(), t.tinkerPath, { expiresAt: t.server?.expiresAt });
  void vscode.window.showInformationMessage(`${t.tinkerPath}: ${weightsInfoLines(w).join(' · ')}`);
  return w;
}

/** The guided GRPO/SFT flow with the base model and load_checkpoint_path taken from the checkpoint. */
async function startFrom(s: CheckpointCommandServices, t: CheckpointTarget, kind: SpecKind, a: CheckpointAnswers) {
  if (t.kind !== 'state') throw new Error(`${t.tinkerPath} is ${t.kind === 'sampler' ? 'sampler weights' : `a checkpoint of type "${t.kind}"`}; a run starts from a training-state checkpoint (…/weights/…).`);
  const { checkpointWeightsInfo } = await import('../../core/checkpoints/manage');
  const w = await checkpointWeightsInfo(await s.connection.get(), t.tinkerPath, { expiresAt: t.server?.expiresAt });
  return vscode.commands.executeCommand(specKind(kind).startCommand, { guided: { ...a.guided, model: w.baseModel, loadCheckpointPath: t.tinkerPath } });
}

/**
 * "Search Checkpoints…": filters typed on one line (key=value, type:, base:, project:) over the
 * server's checkpoint listing, with progress and cancel; the matches open in a quick pick (choosing
 * one copies its path), with "Load more" while the listing goes on. Returns the first page.
 */
async function searchCommand(s: CheckpointCommandServices, given: { query: string } | undefined) {
  const { parseSearchQuery, searchCheckpoints } = await import('../../core/checkpoints/search');
  const { windowUi } = await import('../common/windowUi');
  const text =
    given?.query ??
    (await windowUi.showInputBox({
      title: 'Search Checkpoints',
      prompt: 'Filters: key=value (metadata), type:sampler|training|external, base:<model>, project:<id>; empty lists every checkpoint',
      placeHolder: 'run_name=my-run type:sampler',
      validateInput: (v) => {
        try {
          parseSearchQuery(v);
          return undefined;
        } catch (err) {
          return errorMessage(err);
        }
      },
    }));
  if (text === undefined) return undefined;
  const q = parseSearchQuery(text);
  const client = await s.connection.get();
  const fetchPage = (from: number) =>
    vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Searching checkpoints…', cancellable: true }, (_p, token) => {
      const c = new AbortController();
      token.onCancellationRequested(() => c.abort());
      return searchCheckpoints(client, q, { from, limit: 50, signal: c.signal });
    });
  const first = await fetchPage(0);
  const { expiryText, sizeText } = await import('../../core/checkpoints/format');
  type Item = vscode.QuickPickItem & { tinkerPath?: string; more?: number };
  const itemOf = (c: (typeof first.matches)[number]): Item => ({
    label: c.name,
    description: [c.kind, c.baseModel, c.time?.toLocaleString(), c.public ? 'public' : undefined, expiryText(c.expiresAt, new Date()), c.sizeBytes !== undefined ? sizeText(c.sizeBytes) : undefined]
      .filter(Boolean)
      .join(' · '),
    detail: [c.tinkerPath, ...Object.entries(c.userMetadata ?? {}).map(([k, v]) => `${k}=${v}`)].join('  '),
    tinkerPath: c.tinkerPath,
  });
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = `Checkpoints matching ${text.trim() || 'anything'}`;
  qp.matchOnDetail = true;
  const more = (next: number | undefined): Item[] => (next !== undefined ? [{ label: '$(ellipsis) Load more…', more: next, alwaysShow: true }] : []);
  let shown = first.matches.map(itemOf);
  qp.items = [...shown, ...more(first.next)];
  if (shown.length === 0 && first.next === undefined) qp.placeholder = 'No checkpoint matches';
  qp.onDidAccept(async () => {
    const picked = qp.selectedItems[0];
    if (!picked) return;
    if (picked.more !== undefined) {
      qp.busy = true;
      try {
        const page = await fetchPage(picked.more);
        shown = [...shown, ...page.matches.map(itemOf)];
        qp.items = [...shown, ...more(page.next)];
      } catch (err) {
        void vscode.window.showErrorMessage(`Searching checkpoints failed: ${errorMessage(err)}`);
      } finally {
        qp.busy = false;
      }
      return;
    }
    if (picked.tinkerPath) {
      await vscode.env.clipboard.writeText(picked.tinkerPath);
      void vscode.window.setStatusBarMessage(`Copied ${picked.tinkerPath}`, 4000);
      qp.hide();
    }
  });
  qp.onDidHide(() => qp.dispose());
  qp.show();
  return { matches: first.matches.map((c) => c.tinkerPath), next: first.next };
}

async function copyCheckpointPath(node: unknown, which: unknown): Promise<string | undefined> {
  if (node !== undefined && !isCheckpointRow(node)) throw new CommandArgumentError(`${COMMAND.copyCheckpointPath} was called with an unusable node argument: not a row of the Checkpoints view`);
  const n = node;
  const target = n ? targetOf(n) : undefined;
  if (target) {
    await vscode.env.clipboard.writeText(target.tinkerPath);
    void vscode.window.setStatusBarMessage(`Copied ${target.tinkerPath}`, 4000);
    return target.tinkerPath;
  }
  if (!n || n.kind !== 'checkpoint') throw new Error('Select a checkpoint in the Checkpoints view to copy its path.');
  let p = checkpointPath(n.checkpoint);
  if (which === 'state' || which === 'sampler') {
    p = which === 'state' ? n.checkpoint.state_path : n.checkpoint.sampler_path;
  } else if (n.checkpoint.state_path && n.checkpoint.sampler_path) {
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Sampler weights', description: n.checkpoint.sampler_path, value: n.checkpoint.sampler_path },
        { label: 'Training state (weights + optimizer)', description: n.checkpoint.state_path, value: n.checkpoint.state_path },
      ],
      { title: `Copy path of checkpoint ${n.checkpoint.name}` },
    );
    if (!pick) return undefined;
    p = pick.value;
  }
  if (!p) throw new Error(`Checkpoint ${n.checkpoint.name} has no tinker:// path.`);
  await vscode.env.clipboard.writeText(p);
  void vscode.window.setStatusBarMessage(`Copied ${p}`, 4000);
  return p;
}
