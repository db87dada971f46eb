// The Play as the Model panel's host (one per window): runs one episode of an environment file in the
// env worker pool training uses (src/core/env/pool.ts, through createEnvRunner), with the run's rules
// (src/core/env/play.ts on the loop's runEpisode). The person types the assistant's replies, parsed
// by the chosen renderer as a sample would be; or the model plays ("Dry Run Episode", envCommands.ts).
// Each change of the episode goes to the webview as the whole view. Env code runs only in a trusted
// workspace. The form is kept in workspace state.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EnvPlayForm, EnvPlayProtocol, EnvPlayRequests, type EnvPlayView, type FromWebview, type ToWebview } from '../../protocol/envPlayProtocol';
import type { EnvRunner } from '../../core/env/runner';
import type { EpisodeLimits } from '../../core/env/episode';
import type { ResolvedGrpoSpec } from '../../core/grpo/spec';
import type { LoadedRenderer } from '../../core/render';
import type { SamplingClient } from '../../core/tinker/client';
import type { SamplingParams } from '../../core/tinker/types';
import { errorMessage } from '../../core/errors';
import { toDisposable } from '../common/lifecycle';
import type { Log } from '../common/log';
import { readNetworkSettings } from '../common/networkSettings';
import { rewardEnvironmentSetting } from '../common/settings';
import { showPanelPage } from '../common/webview/html';
import { PanelHost, type RequestHandlers } from '../common/webview/panelHost';
import type { WebviewTransport } from '../common/webview/transport';
import { ENV_UNTRUSTED_MESSAGE } from './envValidation';

/** The model the panel parses replies for when no spec names the env: the embedded engine's. */
export const DEFAULT_PLAY_MODEL = 'tinker-studio/arith-chat';
/** max_tokens of a typed episode without a spec (only the context limit reads it) */
const DEFAULT_MAX_TOKENS = 256;
const FORM_KEY = 'tinker.envPlay.form';

/** What the panel needs from the window. */
export interface EnvPlayPanelServices {
  extensionUri: vscode.Uri;
  log: Log;
  state: vscode.Memento;
  cacheDir: string;
  /** the specs naming an env file (its model, renderer, dataset, limits) */
  envSpecs(file: string): Array<{ specFile: string; spec: ResolvedGrpoSpec }>;
  /** the workspace's env files: those specs name and the *.env.* files */
  envFiles(): Promise<string[]>;
  python(file: string): Promise<string | undefined>;
  trusted(): boolean;
}

/** What the panel opens with: an env file (its spec's model, first dataset line), or a whole form. */
export type EnvPlayPreset = Partial<EnvPlayForm> | undefined;

/** How the model plays an episode ("Dry Run Episode"): its sampler, renderer and parameters. */
export interface ModelPlayer {
  sampler: Pick<SamplingClient, 'sample'>;
  renderer: LoadedRenderer['renderer'];
  model: string;
  params: SamplingParams;
  limits: EpisodeLimits;
}

export class EnvPlayPanel extends PanelHost<ToWebview, FromWebview, typeof EnvPlayRequests> {
  private form: EnvPlayForm;
  private view: EnvPlayView | undefined;
  private running: { controller: AbortController; reply?: (text: string) => void; done: Promise<unknown> } | undefined;
  protected readonly requestHandlers: RequestHandlers<typeof EnvPlayRequests> = {};

  constructor(
    panel: vscode.WebviewPanel,
    private readonly s: EnvPlayPanelServices,
    transport: WebviewTransport,
    preset: EnvPlayPreset,
  ) {
    super(panel, transport, EnvPlayProtocol, s.log, 'Play as the Model');
    showPanelPage(panel, s.extensionUri, { entry: 'envplay', title: 'Play as the Model' });
    const saved = EnvPlayForm.safeParse(s.state.get(FORM_KEY));
    this.form = this.withPreset(saved.success ? saved.data : { problem: { kind: 'text', text: '' }, model: DEFAULT_PLAY_MODEL }, preset);
    this._register(toDisposable(() => this.running?.controller.abort(new Error('the panel was closed'))));
  }

  /** the episode shown (tests) */
  get currentView(): EnvPlayView | undefined {
    return this.view;
  }

  get currentForm(): EnvPlayForm {
    return this.form;
  }

  /** Applies what the panel was (re)opened with. */
  async applyPreset(preset: EnvPlayPreset): Promise<void> {
    this.form = this.withPreset(this.form, preset);
    await this.s.state.update(FORM_KEY, this.form);
    this.post({ type: 'form', form: this.form, datasets: await this.datasets() });
  }

  /** An env file's defaults: the model and renderer of the first spec naming it, its dataset's first line. */
  private withPreset(form: EnvPlayForm, preset: EnvPlayPreset): EnvPlayForm {
    if (!preset) return form;
    const out: EnvPlayForm = { ...form, ...preset } as EnvPlayForm;
    if (preset.envFile && preset.envFile !== form.envFile) {
      const named = this.s.envSpecs(preset.envFile)[0];
      if (named && !preset.model) {
        out.model = named.spec.model;
        if (named.spec.renderer) out.renderer = named.spec.renderer;
        else delete out.renderer;
      }
      if (named?.spec.env?.class && !preset.className) out.className = named.spec.env.class;
      else if (!preset.className) delete out.className;
      const p = named?.spec.dataset?.path;
      if (named && p && !preset.problem) out.problem = { kind: 'line', file: path.resolve(path.dirname(named.specFile), p), line: 1 };
    }
    return out;
  }

  protected override async sendSnapshot(): Promise<void> {
    const [{ RENDERER_NAMES }, envFiles, datasets] = await Promise.all([import('../../core/render'), this.s.envFiles().catch(() => []), this.datasets()]);
    this.post({ type: 'snapshot', form: this.form, envFiles, datasets, renderers: [...RENDERER_NAMES], trusted: this.s.trusted(), ...(this.view ? { view: this.view } : {}) });
  }

  /** JSONL files beside the env file, and its specs' datasets */
  private async datasets(): Promise<string[]> {
    const env = this.form.envFile;
    if (!env) return [];
    const beside = await fs.readdir(path.dirname(env)).catch(() => [] as string[]);
    const fromSpecs = this.s.envSpecs(env).flatMap(({ spec, specFile }) => (spec.dataset?.path ? [path.resolve(path.dirname(specFile), spec.dataset.path)] : []));
    return [...new Set([...fromSpecs, ...beside.filter((f) => f.endsWith('.jsonl')).map((f) => path.join(path.dirname(env), f))])];
  }

  protected override notificationFailed(message: string): void {
    this.post({ type: 'error', message });
  }

  protected override async onNotification(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'start':
        await this.saveForm(msg.form);
        void this.play().catch(() => undefined); // failures are in the view
        break;
      case 'reply':
        this.reply(msg.text);
        break;
      case 'stop':
        await this.stop();
        break;
      case 'saveForm':
        await this.saveForm(msg.form);
        break;
      case 'pickEnvFile': {
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'Environment file to play', filters: { 'Environment files': ['py', 'js', 'mjs', 'cjs', 'ts'] } });
        if (picked?.[0]) await this.applyPreset({ envFile: picked[0].fsPath });
        break;
      }
      case 'pickDataset': {
        const folder = this.form.envFile ? vscode.Uri.file(path.dirname(this.form.envFile)) : undefined;
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'Dataset (JSONL) whose line constructs the environment', filters: { JSONL: ['jsonl'] }, ...(folder ? { defaultUri: folder } : {}) });
        if (picked?.[0]) await this.applyPreset({ problem: { kind: 'line', file: picked[0].fsPath, line: 1 } });
        break;
      }
      case 'openEnvFile': {
        const file = this.view?.envFile ?? this.form.envFile;
        if (!file) break;
        const at = new vscode.Position(Math.max((msg.line ?? 1) - 1, 0), 0);
        await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(at, at), viewColumn: vscode.ViewColumn.Beside });
        break;
      }
      case 'webviewError':
        this.log.warn(`Play as the Model: ${msg.message}`);
        break;
    }
  }

  private async saveForm(form: EnvPlayForm): Promise<void> {
    const envChanged = form.envFile !== this.form.envFile;
    this.form = form;
    await this.s.state.update(FORM_KEY, form);
    if (envChanged) this.post({ type: 'form', form, datasets: await this.datasets() });
  }

  /** Hands the episode in progress the person's reply. */
  reply(text: string): void {
    const r = this.running?.reply;
    if (!r || this.view?.status !== 'awaiting') throw new Error('no episode is waiting for a reply: start one first');
    r(text);
  }

  /** Stops the episode in progress (and waits until it has stopped). */
  async stop(): Promise<void> {
    const r = this.running;
    if (!r) return;
    r.controller.abort(new Error('stopped'));
    await r.done.catch(() => undefined);
  }

  /** Starts an episode of the form's env, the person playing (`model` absent) or the model; resolves with its last view. */
  async play(model?: ModelPlayer, signal?: AbortSignal): Promise<EnvPlayView> {
    await this.stop();
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onOuterAbort, { once: true });
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const running: NonNullable<EnvPlayPanel['running']> = { controller, done };
    this.running = running;
    const form = this.form;
    const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const base = { id, player: model ? ('model' as const) : ('you' as const), envFile: form.envFile ?? '', className: form.className ?? '', renderer: model?.renderer.name ?? form.renderer ?? '', problem: '' };
    let env: EnvRunner | undefined;
    try {
      if (!form.envFile) throw new Error('choose an environment file first');
      if (!this.s.trusted()) throw new Error(ENV_UNTRUSTED_MESSAGE);
      const file = form.envFile;
      const named = this.s.envSpecs(file)[0];
      const problem = await this.problemOf(form);
      base.problem = JSON.stringify(problem);
      this.show({ ...base, turns: [], status: 'starting', total: 0 });
      const [{ createEnvRunner }, play, { EnvSpec }] = await Promise.all([import('../../core/env/runner'), import('../../core/env/play'), import('../../core/grpo/spec')]);
      const renderer = model?.renderer ?? (await this.rendererOf(form));
      base.renderer = renderer.name;
      const python = path.extname(file).toLowerCase() === '.py' ? await this.s.python(file) : undefined;
      env = await createEnvRunner({
        file,
        workers: 1,
        ...(form.className ? { className: form.className } : {}),
        ...(named?.spec.env ? { timeoutMs: named.spec.env.timeout_ms } : {}),
        ...(python ? { python } : {}),
        environment: rewardEnvironmentSetting(),
        signal: controller.signal,
      });
      base.className = env.className;
      const typed = model ? undefined : new play.TypedReplies(renderer);
      if (typed) running.reply = (text) => typed.reply(text);
      const limits = model?.limits ?? play.envLimitsOf(named?.spec.env ?? EnvSpec.parse({ file: 'play.env.py' }), named?.spec.max_tokens ?? DEFAULT_MAX_TOKENS);
      const { view } = await play.playEpisode({
        env,
        problem,
        renderer,
        policy: model?.sampler ?? typed!,
        params: model?.params ?? { max_tokens: limits.maxTokens, temperature: 1 },
        limits,
        onUpdate: (v) => this.show(v),
        view: { ...base, ...(model ? { model: model.model } : { model: form.model }) },
        signal: controller.signal,
      });
      return view;
    } catch (err) {
      const cancelled = controller.signal.aborted;
      const last = this.view?.id === id ? this.view : { ...base, turns: [], total: 0 };
      const view: EnvPlayView = { ...last, status: cancelled ? 'cancelled' : 'failed', ...(cancelled ? {} : { error: { where: 'episode', kind: 'load', message: errorMessage(err) } }) };
      delete view.pending;
      this.show(view);
      if (!cancelled) this.log.warn(`Play as the Model: ${errorMessage(err)}`);
      return view;
    } finally {
      signal?.removeEventListener('abort', onOuterAbort);
      await env?.close().catch(() => undefined);
      if (this.running === running) this.running = undefined;
      finish();
    }
  }

  private show(view: EnvPlayView): void {
    this.view = view;
    this.post({ type: 'view', view });
  }

  private async problemOf(form: EnvPlayForm): Promise<unknown> {
    const { datasetLine, typedProblem } = await import('../../core/env/play');
    if (form.problem.kind === 'text') {
      if (!form.problem.text.trim()) throw new Error('type the problem (a JSON dataset line, or text) or choose a dataset line');
      return typedProblem(form.problem.text);
    }
    const file = form.problem.file;
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      throw new Error(`cannot read the dataset ${file}: ${errorMessage(err)}`);
    }
    return datasetLine(text, form.problem.line, path.basename(file));
  }

  private async rendererOf(form: EnvPlayForm): Promise<LoadedRenderer['renderer']> {
    const { loadRenderer } = await import('../../core/render');
    const { renderer, warnings } = await loadRenderer({ model: form.model, ...(form.renderer ? { renderer: form.renderer } : {}), cacheDir: this.s.cacheDir, network: readNetworkSettings() });
    for (const w of warnings) this.log.warn(`Play as the Model: ${w}`);
    return renderer;
  }
}
