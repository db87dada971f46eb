// The evaluation results panel's host: one panel per results folder (`evals/<spec name>/`). It reads
// the folder (src/core/evals/resultsView.ts) into a snapshot, watches it while an eval writes to it,
// and answers the webview's actions: a matrix cell's problem of two targets in the diff editor, What
// changed between two targets (the What Changed pairing and order of src/core/runs/sampleChanges.ts:
// improved first, then regressed), and Open in Playground with the problem filled in.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { COMMAND } from '../common/commandIds';
import { EvalProtocol, EvalRequests, EvalSnapshot, FromWebview, ToWebview } from '../../protocol/evalsProtocol';
import type { Log } from '../common/log';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { errorMessage } from '../../core/errors';
import { readAllTargetSamples, readEvalSnapshot, TargetSamples } from '../../core/evals/resultsView';
import { evalSampleUri, forgetResults, problemSamples, rememberResults } from './evalSampleDocuments';
import { toDisposable } from '../common/lifecycle';

export interface EvalPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
}

/** What a diff opened (for the tests). */
export interface OpenedEvalDiff {
  title: string;
  left: string;
  right: string;
}

export class EvalPanel extends PanelHost<ToWebview, FromWebview, typeof EvalRequests> {
  protected readonly requestHandlers: RequestHandlers<typeof EvalRequests> = {};
  private current: EvalSnapshot | undefined;
  /** the targets' samples of the current snapshot, read after it painted */
  private samples: Promise<TargetSamples[]> | undefined;
  private generation = 0;
  private readonly refreshSoon: () => void;
  /** the last diff or What changed opened (the host tests read it) */
  lastOpened: OpenedEvalDiff | { title: string; entries: OpenedEvalDiff[] } | undefined;

  constructor(
    panel: vscode.WebviewPanel,
    readonly dir: string,
    s: EvalPanelServices,
    transport: WebviewTransport,
  ) {
    super(panel, transport, EvalProtocol, s.log, `eval results ${dir}`);
    showPanelPage(panel, s.extensionUri, { entry: 'evals', title: 'Evaluation' });
    panel.title = `Eval: ${path.basename(dir)}`;
    let timer: NodeJS.Timeout | undefined;
    this.refreshSoon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void this.sendSnapshot(), 300);
    };
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), '{summary.json,eval.json,targets/*/samples.jsonl}'));
    this._registerAll(watcher, watcher.onDidChange(this.refreshSoon), watcher.onDidCreate(this.refreshSoon), watcher.onDidDelete(this.refreshSoon));
    this._register(toDisposable(() => {
      clearTimeout(timer);
      forgetResults(dir);
    }));
  }

  /** The snapshot last prepared (the host tests read it). */
  get snapshot(): EvalSnapshot | undefined {
    return this.current;
  }

  /** Reads the folder again and repaints. */
  async refresh(): Promise<void> {
    await this.sendSnapshot();
  }

  protected override async sendSnapshot(): Promise<void> {
    const generation = ++this.generation;
    try {
      const snapshot = await readEvalSnapshot(this.dir);
      if (generation !== this.generation || this.isDisposed) return;
      this.current = snapshot;
      this.samples = undefined;
      this.panel.title = `Eval: ${snapshot.name}`;
      this.post(snapshot);
    } catch (err) {
      this.log.error(`eval results: could not read ${this.dir}`, err);
      this.post({ type: 'error', message: `Could not read the evaluation results in ${this.dir}: ${errorMessage(err)}` });
    }
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'diff':
        await this.openDiff(msg.problemId, msg.left, msg.right);
        break;
      case 'whatChanged':
        await this.whatChanged(msg.before, msg.after);
        break;
      case 'openInPlayground':
        await this.openInPlayground(msg.problemId, msg.target);
        break;
      case 'openSpec':
        await this.openSpec();
        break;
      case 'webviewError':
        this.log.warn(`eval results ${this.dir}: ${msg.message}`);
        break;
    }
  }

  /** Target i's samples (the folder's samples are read once per snapshot, when first needed). */
  private async target(i: number): Promise<TargetSamples> {
    const snap = this.current;
    if (!snap) throw new Error(`the evaluation in ${this.dir} is not read yet`);
    this.samples ??= Promise.resolve().then(() => {
      const all = readAllTargetSamples(this.dir, snap.targets.map((t) => t.id));
      rememberResults(this.dir, all);
      return all;
    });
    const t = (await this.samples)[i];
    if (!t) throw new Error(`the evaluation in ${this.dir} has no target ${i}`);
    return t;
  }

  /** A problem's samples of two targets, side by side in the diff editor. */
  async openDiff(problemId: string, leftIdx: number, rightIdx: number): Promise<OpenedEvalDiff> {
    const l = await this.target(leftIdx);
    const r = await this.target(rightIdx);
    const mean = (t: TargetSamples) => {
      const s = problemSamples(t.records, problemId);
      return s.length ? String(Number((s.reduce((a, x) => a + x.reward, 0) / s.length).toPrecision(3))) : '–';
    };
    const left = evalSampleUri(this.dir, l.id, problemId, undefined, `${l.id} · ${problemId}`);
    const right = evalSampleUri(this.dir, r.id, problemId, undefined, `${r.id} · ${problemId}`);
    const title = `${problemId}: ${l.id} (reward ${mean(l)}) ↔ ${r.id} (reward ${mean(r)})`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
    return (this.lastOpened = { title, left: left.toString(), right: right.toString() });
  }

  /** Every sample whose reward changed from `before` to `after`, improved first, in one multi-diff. */
  async whatChanged(beforeIdx: number, afterIdx: number): Promise<{ title: string; entries: OpenedEvalDiff[] }> {
    const b = await this.target(beforeIdx);
    const a = await this.target(afterIdx);
    const { pairSamples, rewardChanges, describeChanges, changeTitle } = await import('../../core/runs/sampleChanges');
    const pairing = pairSamples(b.records, a.records, 'problem');
    const changes = rewardChanges(pairing.pairs);
    const title = `What changed: ${b.id} → ${a.id} (${describeChanges(pairing, changes)})`;
    const kOf = (t: TargetSamples, s: (typeof changes)[number]['before']) => problemSamples(t.records, s.problem_id).indexOf(s);
    const entries = changes.map((c) => {
      const label = changeTitle(c);
      return { label, left: evalSampleUri(this.dir, b.id, c.problemId, kOf(b, c.before), `${label} (${b.id})`), right: evalSampleUri(this.dir, a.id, c.problemId, kOf(a, c.after), `${label} (${a.id})`) };
    });
    if (entries.length === 0) void vscode.window.showInformationMessage(`No sample's reward changed between ${b.id} and ${a.id}.`);
    else await vscode.commands.executeCommand('vscode.changes', title, entries.map((e) => [e.right, e.left, e.right]));
    const opened = { title, entries: entries.map((e) => ({ title: e.label, left: e.left.toString(), right: e.right.toString() })) };
    this.lastOpened = opened;
    return opened;
  }

  private async openInPlayground(problemId: string, targetIdx: number): Promise<void> {
    const t = await this.target(targetIdx);
    const s = problemSamples(t.records, problemId)[0];
    if (!s) throw new Error(`${t.id} has no sample of ${problemId}`);
    const question = s.question ?? s.prompt;
    const view = this.current?.targets[targetIdx];
    const A = view?.source ? (view.source.kind === 'base' ? { kind: 'base' as const, model: view.source.value } : { kind: 'checkpoint' as const, path: view.source.value }) : undefined;
    await vscode.commands.executeCommand(COMMAND.openInPlayground, { ...(A ? { A } : {}), messages: [{ role: 'user', content: question }], groundTruth: s.ground_truth });
  }

  private async openSpec(): Promise<void> {
    const { findEvalSpec } = await import('./evalFolders');
    const spec = await findEvalSpec(this.dir);
    if (!spec) {
      void vscode.window.showInformationMessage(`No *.eval.json spec found next to ${this.dir}.`);
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(spec), { viewColumn: vscode.ViewColumn.Beside });
  }
}
