// The sample playground panel's host side (one per window): runs the webview's form through the
// playground session (src/core/playground), streams each sample to the webview as it arrives, and
// keeps the form and the last runs (with their tokens) in workspace state so both survive a reload.
// Rewards go through the same reward runner as training, only in a trusted workspace.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  applyRunUpdate,
  DEFAULT_PARAMS,
  FromWebview,
  ParsedReply,
  PlaygroundForm,
  PlaygroundProtocol,
  PlaygroundRequests,
  RunUpdate,
  RunView,
  SampleView,
  SideId,
  ToWebview,
} from '../../protocol/playgroundProtocol';
import type { PlaygroundEvent, PlaygroundSample } from '../../core/playground/types';
import type { LoadedRenderer } from '../../core/render';
import { recordedRewardError } from '../../protocol/sampleSchema';
import type { RewardRunner } from '../../core/reward/types';
import type { ServiceClient } from '../../core/tinker/client';
import { toDisposable } from '../common/lifecycle';
import type { Log } from '../common/log';
import { describe, playgroundSampleUri, readHistory, rememberRun, StoredRun, tokenKey as key } from './playgroundHistory';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { errorMessage } from '../../core/errors';

/** What the panel needs from the window. */
export interface PlaygroundPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
  /** the connected client of the current backend (asks for the API key / starts the engine when needed) */
  service(): Promise<ServiceClient>;
  /** where tokenizer files are cached */
  cacheDir: string;
  /** the workspace's memory: the form and the last runs */
  state: vscode.Memento;
  /** the runs of the runs folder (for "Pick a problem") */
  runs(): Promise<Array<{ name: string; dir: string }>>;
  /** sampler checkpoints of the runs folder, newest first */
  checkpoints(): Promise<Array<{ label: string; path: string }>>;
  rewardFiles(): Promise<string[]>;
  /** the Python interpreter for a .py reward file */
  python(file: string): Promise<string | undefined>;
  /** reward code runs only in a trusted workspace */
  trusted(): boolean;
  /** preference collection: the workspace's pairs file (asked the first time; undefined: the person declined), and the pairs panel on it */
  preferences?: { file(): Promise<string | undefined>; open(): Promise<void> };
}

/** What the panel opens with: sides, a conversation, a ground truth (all optional). */
export interface PlaygroundPreset {
  A?: PlaygroundForm['A'];
  B?: PlaygroundForm['B'];
  messages?: PlaygroundForm['messages'];
  groundTruth?: string;
  rewardFile?: string;
}

const FORM_KEY = 'tinker.playground.form';

export class PlaygroundPanel extends PanelHost<ToWebview, FromWebview, typeof PlaygroundRequests> {
  private form: PlaygroundForm;
  private shown: StoredRun | undefined;
  private running: AbortController | undefined;
  private runDone: Promise<void> = Promise.resolve();
  private readonly renderers = new Map<string, Promise<LoadedRenderer>>();

  protected readonly requestHandlers: RequestHandlers<typeof PlaygroundRequests> = {
    renderedPrompt: async ({ source, messages }, token) => {
      const signal = abortOn(token);
      const service = await this.s.service();
      const { resolveBaseModel, sideRenderer, renderedPrompt } = await import('../../core/playground/session');
      const deps = { service, rendererFor: (m: string) => this.rendererFor(m) };
      const baseModel = await resolveBaseModel(deps, 'A', source, signal);
      const renderer = await sideRenderer(deps, 'A', baseModel);
      return { ...renderedPrompt(renderer, messages), baseModel };
    },
    sampleTokens: async ({ side, index }) => {
      const run = this.shown;
      const t = run?.tokens[key(side, index)];
      const model = run?.view.sides[side]?.info?.baseModel;
      if (!run || !t || !model) throw new Error(`the shown run has no sample ${index} on side ${side}`);
      const { tokenizer } = await this.rendererFor(model);
      return { tokens: t.tokens.map((id, i) => ({ text: tokenizer.decode([id]), logprob: t.logprobs[i] ?? null })) };
    },
  };

  constructor(
    panel: vscode.WebviewPanel,
    private readonly s: PlaygroundPanelServices,
    transport: WebviewTransport,
    preset: PlaygroundPreset | undefined,
  ) {
    super(panel, transport, PlaygroundProtocol, s.log, 'sample playground');
    showPanelPage(panel, s.extensionUri, { entry: 'playground', title: 'Sample Playground' });
    this.form = withPreset(savedForm(s.state), preset);
    this.shown = readHistory(s.state)[0];
    this._register(toDisposable(() => this.running?.abort()));
  }

  /** Applies what the panel was (re)opened with: sides, conversation, ground truth. */
  async applyPreset(preset: PlaygroundPreset): Promise<void> {
    this.form = withPreset(this.form, preset);
    await this.s.state.update(FORM_KEY, this.form);
    this.post({ type: 'form', form: this.form });
  }

  protected override async sendSnapshot(): Promise<void> {
    const [checkpoints, rewardFiles] = await Promise.all([this.s.checkpoints().catch(() => []), this.s.rewardFiles().catch(() => [])]);
    this.post({
      type: 'snapshot',
      form: this.form,
      checkpoints,
      rewardFiles,
      ...(this.shown ? { run: this.shown.view } : {}),
      history: historyItems(readHistory(this.s.state)),
    });
    try {
      const service = await this.s.service();
      const caps = await service.capabilities();
      this.post({ type: 'models', models: caps.supported_models.flatMap((m) => (m.model_name ? [m.model_name] : [])) });
    } catch (err) {
      this.post({ type: 'models', models: [], error: errorMessage(err) });
    }
  }

  /** the person who clicked hears why it did not work, in the panel and as a notification */
  protected override notificationFailed(message: string): void {
    this.post({ type: 'error', message });
    void vscode.window.showErrorMessage(`Sample playground: ${message}`);
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'run':
        await this.startRun(msg.form);
        break;
      case 'cancel':
        this.running?.abort();
        await this.runDone;
        break;
      case 'saveForm':
        this.form = msg.form;
        await this.s.state.update(FORM_KEY, msg.form);
        break;
      case 'openRewardFile':
        await this.openRewardFile(msg.line);
        break;
      case 'compare':
        await this.compare(msg.left, msg.right);
        break;
      case 'saveExample':
        await this.saveExample(msg.side, msg.index, msg.expected);
        break;
      case 'copyJson':
        await vscode.env.clipboard.writeText(JSON.stringify(this.asJson(msg.side, msg.index), null, 2));
        void vscode.window.setStatusBarMessage('Tinker: copied as JSON', 3000);
        break;
      case 'showHistory': {
        const run = readHistory(this.s.state).find((h) => h.view.id === msg.id);
        if (run) {
          this.shown = run;
          this.form = run.view.form;
          await this.sendSnapshot();
        }
        break;
      }
      case 'pickRewardFile': {
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'Reward file for the playground', filters: { 'Reward functions': ['py', 'js', 'mjs', 'cjs', 'ts'] } });
        if (picked?.[0]) await this.applyPreset({ rewardFile: picked[0].fsPath });
        break;
      }
      case 'pickProblem':
        await this.pickProblem();
        break;
      case 'preference':
        await this.savePreference(msg.better, msg.A, msg.B);
        break;
      case 'openPreferences':
        await this.s.preferences?.open();
        break;
      case 'webviewError':
        this.log.warn(`sample playground: ${msg.message}`);
        break;
    }
  }

  private async pickProblem(): Promise<void> {
    const runs = await this.s.runs();
    const run = await vscode.window.showQuickPick(
      runs.map((r) => ({ label: r.name, dir: r.dir })),
      { title: 'Pick a problem', placeHolder: runs.length ? 'From the dataset of which run?' : 'No runs in the runs folder' },
    );
    if (!run) return;
    const { runProblems, problemPrompt } = await import('../../core/playground/problems');
    const problems = await runProblems(run.dir, this.s.cacheDir);
    const item = (p: (typeof problems.train)[number], split: string) => ({ label: p.messages.at(-1)?.content.slice(0, 120) ?? p.id, description: `ground truth ${p.groundTruth}`, detail: `${split} · ${p.id}`, problem: p });
    const picked = await vscode.window.showQuickPick([...problems.holdout.map((p) => item(p, 'holdout')), ...problems.train.map((p) => item(p, 'train'))], {
      title: `Pick a problem — ${run.label}`,
      placeHolder: `${problems.holdout.length} holdout and ${problems.train.length} train problems`,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) return;
    await this.applyPreset(problemPrompt(picked.problem, problems.rewardFile));
  }

  private rendererFor(model: string): Promise<LoadedRenderer> {
    let r = this.renderers.get(model);
    if (!r) {
      r = import('../../core/render').then(({ loadRenderer }) => loadRenderer({ model, cacheDir: this.s.cacheDir }));
      r.catch(() => this.renderers.delete(model));
      this.renderers.set(model, r);
    }
    return r;
  }

  private async startRun(form: PlaygroundForm): Promise<void> {
    this.running?.abort();
    await this.runDone;
    this.form = form;
    await this.s.state.update(FORM_KEY, form);
    const controller = new AbortController();
    this.running = controller;
    const run: StoredRun = {
      view: { id: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, startedAt: new Date().toISOString(), form, status: 'running', sides: {} },
      tokens: {},
    };
    for (const side of ['A', 'B'] as const) if (form[side]) run.view.sides[side] = { samples: [], errors: [] };
    this.shown = run;
    let finish!: () => void;
    this.runDone = new Promise((resolve) => (finish = resolve));
    try {
      await this.execute(run, controller.signal);
    } catch (err) {
      const message = errorMessage(err);
      for (const side of ['A', 'B'] as const) run.view.sides[side]?.errors.push(message);
      this.log.warn(`sample playground: ${message}`);
    } finally {
      run.view.status = controller.signal.aborted ? 'cancelled' : 'done';
      if (this.running === controller) this.running = undefined;
      const history = await rememberRun(this.s.state, run);
      this.post({ type: 'runDone', run: run.view, history: historyItems(history) });
      finish();
    }
  }

  private async execute(run: StoredRun, signal: AbortSignal): Promise<void> {
    const form = run.view.form;
    const reward = await this.rewardRunner(run, signal);
    try {
      this.post({ type: 'runStarted', run: run.view });
      const service = await this.s.service();
      const { startPlayground } = await import('../../core/playground/session');
      const session = startPlayground(
        {
          prompt: { messages: form.messages, ...(form.groundTruth !== undefined ? { groundTruth: form.groundTruth } : {}) },
          params: form.params,
          sides: { ...(form.A ? { A: form.A } : {}), ...(form.B ? { B: form.B } : {}) },
        },
        { service, rendererFor: (m) => this.rendererFor(m), ...(reward ? { reward } : {}) },
        signal,
      );
      for await (const e of session) this.apply(run, e);
      const summary = await session.summary;
      for (const side of ['A', 'B'] as const) {
        const mean = summary.sides[side]?.meanReward;
        const r = run.view.sides[side];
        if (r && mean !== undefined) r.meanReward = mean;
      }
    } finally {
      await reward?.close();
    }
  }

  private async rewardRunner(run: StoredRun, signal: AbortSignal): Promise<RewardRunner | undefined> {
    const { rewardFile, groundTruth } = run.view.form;
    if (!rewardFile) return undefined;
    if (groundTruth === undefined) {
      run.view.rewardNote = 'No rewards: give the ground truth the reward function compares with.';
      return undefined;
    }
    if (!this.s.trusted()) {
      run.view.rewardNote = 'No rewards: reward code is not run in an untrusted workspace.';
      return undefined;
    }
    const { createRewardRunner } = await import('../../core/reward');
    const python = rewardFile.endsWith('.py') ? await this.s.python(rewardFile) : undefined;
    try {
      return await createRewardRunner({ file: rewardFile, workers: 2, ...(python ? { python } : {}), signal });
    } catch (err) {
      run.view.rewardNote = `No rewards: ${path.basename(rewardFile)} does not load: ${errorMessage(err)}`;
      return undefined;
    }
  }

  private apply(run: StoredRun, e: PlaygroundEvent): void {
    const runId = run.view.id;
    let update: RunUpdate;
    if (e.type === 'side') {
      update = { type: 'side', runId, info: { side: e.info.side, baseModel: e.info.baseModel, renderer: e.info.renderer, promptTokens: e.info.promptTokens } };
    } else if (e.type === 'sample') {
      run.tokens[key(e.sample.side, e.sample.index)] = { tokens: e.sample.tokens, logprobs: e.sample.logprobs };
      update = { type: 'sample', runId, sample: sampleView(e.sample) };
    } else update = { type: 'sideError', runId, side: e.side, message: e.message };
    applyRunUpdate(run.view, update);
    this.post(update);
  }

  private sampleOf(side: SideId, index: number): { run: StoredRun; sample: SampleView } {
    const run = this.shown;
    const sample = run?.view.sides[side]?.samples.find((x) => x.index === index);
    if (!run || !sample) throw new Error(`the shown run has no sample ${index} on side ${side}`);
    return { run, sample };
  }

  private async compare(left: { side: SideId; index: number }, right: { side: SideId; index: number }): Promise<void> {
    const { run } = this.sampleOf(left.side, left.index);
    this.sampleOf(right.side, right.index);
    const l = playgroundSampleUri(run.view, left.side, left.index);
    const r = playgroundSampleUri(run.view, right.side, right.index);
    const name = (x: { side: SideId; index: number }) => `${x.side} #${x.index} (${describe(run.view.form[x.side])})`;
    await vscode.commands.executeCommand('vscode.diff', l, r, `Playground: ${name(left)} ↔ ${name(right)}`, { preview: true });
  }

  private async saveExample(side: SideId, index: number, expected: number): Promise<void> {
    const { run, sample } = this.sampleOf(side, index);
    const { rewardFile, groundTruth } = run.view.form;
    if (!rewardFile) throw new Error('Choose a reward file first: the example goes to its <reward>.examples.jsonl.');
    if (groundTruth === undefined) throw new Error('Give the ground truth first: an example pairs the completion with it.');
    const { appendRewardExample } = await import('../../core/playground/examples');
    const at = await appendRewardExample(rewardFile, { completion: sample.text, groundTruth, expected });
    void vscode.window.showInformationMessage(`Saved as example ${at.line} of ${path.basename(at.file)}.`);
  }

  /** Appends "side `better`'s sample beats the other side's" to the preferences file, with its provenance. */
  private async savePreference(better: SideId, a: number, b: number): Promise<void> {
    if (!this.s.preferences) throw new Error('preference collection is not available in this window');
    const A = this.sampleOf('A', a);
    const B = this.sampleOf('B', b);
    const run = A.run;
    const file = await this.s.preferences.file();
    if (!file) return;
    const [win, lose] = better === 'A' ? [A.sample, B.sample] : [B.sample, A.sample];
    const form = run.view.form;
    const side = (x: SampleView) => ({ side: x.side, model: describe(form[x.side]), sample: x.index, ...(x.reward !== undefined ? { reward: x.reward } : {}) });
    const { appendPreference } = await import('../../core/playground/preferences');
    const at = await appendPreference(file, {
      prompt: form.messages,
      chosen: win.text,
      rejected: lose.text,
      source: {
        tool: 'playground',
        chosen: side(win),
        rejected: side(lose),
        sampling: { ...form.params },
        ...(form.groundTruth !== undefined ? { ground_truth: form.groundTruth } : {}),
        run: run.view.id,
        time: new Date().toISOString(),
      },
    });
    this.post({ type: 'preferenceSaved', file, line: at.line, pairs: at.pairs });
  }

  private asJson(side: SideId | undefined, index: number | undefined): unknown {
    const run = this.shown;
    if (!run) return {};
    const withTokens = (sd: SideId, s: SampleView) => ({ ...s, ...(run.tokens[key(sd, s.index)] ?? {}) });
    if (side !== undefined && index !== undefined) return withTokens(side, this.sampleOf(side, index).sample);
    const sides = Object.fromEntries(
      (['A', 'B'] as const).flatMap((sd) => {
        const r = run.view.sides[sd];
        return r ? [[sd, { ...r, samples: r.samples.map((s) => withTokens(sd, s)) }]] : [];
      }),
    );
    return { ...run.view, sides };
  }

  private async openRewardFile(line: number | undefined): Promise<void> {
    const file = this.shown?.view.form.rewardFile ?? this.form.rewardFile;
    if (!file) return;
    const at = new vscode.Position(Math.max((line ?? 1) - 1, 0), 0);
    await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(at, at), viewColumn: vscode.ViewColumn.Beside });
  }
}

function abortOn(token: vscode.CancellationToken): AbortSignal {
  const c = new AbortController();
  token.onCancellationRequested(() => c.abort());
  return c.signal;
}

function sampleView(s: PlaygroundSample): SampleView {
  return {
    side: s.side,
    index: s.index,
    text: s.text,
    stopReason: s.stopReason,
    tokens: s.tokens.length,
    ms: s.ms,
    termination: s.termination,
    message: parsedReply(s.message),
    ...(s.reward !== undefined ? { reward: s.reward } : {}),
    ...(s.rewardError ? { rewardError: recordedRewardError(s.rewardError) } : {}),
  };
}

/** The parsed reply as the webview shows it: the fields it has, no role. */
function parsedReply(m: PlaygroundSample['message']): ParsedReply {
  return {
    content: m.content,
    ...(m.thinking ? { thinking: m.thinking } : {}),
    ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
    ...(m.unparsed_tool_calls?.length ? { unparsed_tool_calls: m.unparsed_tool_calls } : {}),
  };
}

function historyItems(history: readonly StoredRun[]): Array<{ id: string; startedAt: string; label: string }> {
  return history.map((h) => ({ id: h.view.id, startedAt: h.view.startedAt, label: historyLabel(h.view) }));
}

function historyLabel(v: RunView): string {
  const last = v.form.messages.at(-1)?.content ?? '';
  const sides = (['A', 'B'] as const).flatMap((s) => (v.form[s] ? [describe(v.form[s])] : [])).join(' vs ');
  return `${last.slice(0, 60)}${last.length > 60 ? '…' : ''} — ${sides}`;
}

const DEFAULT_FORM: PlaygroundForm = { messages: [{ role: 'user', content: '' }], params: DEFAULT_PARAMS };

function savedForm(state: vscode.Memento): PlaygroundForm {
  const parsed = PlaygroundForm.safeParse(state.get(FORM_KEY));
  return parsed.success ? parsed.data : DEFAULT_FORM;
}

function withPreset(form: PlaygroundForm, preset: PlaygroundPreset | undefined): PlaygroundForm {
  if (!preset) return form;
  const out: PlaygroundForm = { ...form };
  if (preset.A) out.A = preset.A;
  if (preset.B) out.B = preset.B;
  if (preset.messages?.length) out.messages = preset.messages;
  if (preset.groundTruth !== undefined) out.groundTruth = preset.groundTruth;
  if (preset.rewardFile) out.rewardFile = preset.rewardFile;
  return out;
}
