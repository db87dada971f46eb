// The env editor's commands: "Play as the Model" (the panel on an env file, or as last left) and
// "Dry Run Episode" (one episode played by the model, shown in the same panel as a transcript with
// per-step rewards, under a cancellable progress notification). The model is that of the first run
// spec naming the env (its backend, renderer, max_tokens, temperature, env limits and dataset's first
// line); without one, a pick of the current connection's models (the embedded engine by default).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isEnvFile } from '../../core/env/files';
import type { EnvPlayView } from '../../protocol/envPlayProtocol';
import { errorMessage } from '../../core/errors';
import { COMMAND } from '../common/commandIds';
import { registerTable } from '../common/commandTable';
import type { Log } from '../common/log';
import { readNetworkSettings } from '../common/networkSettings';
import { readBackend, readBackendFor } from '../common/settings';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import type { TinkerConnection } from '../connection/connection';
import type { ApiKeyStore } from '../connection/secrets';
import type { RewardFileIndex } from '../common/rewardFiles';
import type { EnvPlayPreset } from './envPlayPanel';
import { openEnvPlay, type EnvPlayPanels } from './envPlayPanels';
import { ENV_UNTRUSTED_MESSAGE } from './envValidation';

export interface EnvCommandServices {
  log: Log;
  panels: EnvPlayPanels;
  index: Pick<RewardFileIndex, 'envSpecs' | 'ready'>;
  connection: TinkerConnection;
  apiKeys: Pick<ApiKeyStore, 'get'>;
  cacheDir: string;
}

/** What tests and CodeLenses pass Dry Run Episode besides the file: the dataset line, the model (no spec). */
export interface DryRunEpisodeOptions {
  line?: number;
  model?: string;
}

const field = (arg: unknown, key: string): unknown => (typeof arg === 'object' && arg !== null ? (arg as Record<string, unknown>)[key] : undefined);

export function registerEnvCommands(s: EnvCommandServices): vscode.Disposable[] {
  return registerTable(
    {
      [COMMAND.playAsModel]: async (arg?: unknown) => (await openEnvPlay(s.panels, await playPreset(arg))) !== undefined,
      [COMMAND.dryRunEpisode]: (uri?: unknown, options?: unknown) => {
        const line = field(options, 'line');
        const model = field(options, 'model');
        return dryRunEpisode(s, uri instanceof vscode.Uri ? uri : undefined, {
          ...(typeof line === 'number' && Number.isInteger(line) && line > 0 ? { line } : {}),
          ...(typeof model === 'string' && model ? { model } : {}),
        });
      },
    },
    s.log,
  );
}

/** The panel's preset for a command argument: an env file, a form, or the active env file. */
async function playPreset(arg: unknown): Promise<EnvPlayPreset> {
  if (arg instanceof vscode.Uri) return { envFile: arg.fsPath };
  if (arg === undefined) {
    const active = vscode.window.activeTextEditor?.document.uri;
    return active?.scheme === 'file' && isEnvFile(active.fsPath) ? { envFile: active.fsPath } : undefined;
  }
  const { EnvPlayForm } = await import('../../protocol/envPlayProtocol');
  const parsed = EnvPlayForm.partial().strict().safeParse(arg);
  if (!parsed.success) throw new Error(`Tinker: Play as the Model: unexpected argument (${parsed.error.issues[0]?.message ?? 'invalid'})`);
  return parsed.data as EnvPlayPreset;
}

async function dryRunEpisode(s: EnvCommandServices, uri: vscode.Uri | undefined, o: DryRunEpisodeOptions): Promise<EnvPlayView | undefined> {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!target || target.scheme !== 'file' || !isEnvFile(target.fsPath)) {
    void vscode.window.showErrorMessage('Dry Run Episode works on an environment file (*.env.py, *.env.js, *.env.mjs, *.env.cjs, *.env.ts).');
    return undefined;
  }
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(ENV_UNTRUSTED_MESSAGE);
    return undefined;
  }
  const file = target.fsPath;
  const name = path.basename(file);
  await s.index.ready();
  const named = s.index.envSpecs(file)[0];
  const spec = named?.spec;
  const play = await import('../../core/env/play');
  const { EnvSpec } = await import('../../core/grpo/spec');
  const backend = spec ? await readBackendFor(spec.backend, spec.base_url) : await readBackend();
  if (!(await haveKeyFor(backend, s.apiKeys, 'Dry Run Episode'))) return undefined;
  try {
    // the dataset line: the spec's dataset, else a JSONL file beside the env file
    const dataset = spec && named ? play.specDatasetFile(spec, named.specFile) : await play.datasetBeside(file);
    if (!dataset) throw new Error(`no dataset for ${name}: name it in a run spec's "env" (with a JSONL dataset), or put a JSONL file of dataset lines beside it`);
    const model = o.model ?? spec?.model ?? (await pickModel(s));
    if (!model) return undefined;
    const problem = { kind: 'line' as const, file: dataset, line: o.line ?? 1 };
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Dry run episode of ${name}`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort(new Error('cancelled')));
        const service = spec ? await s.connection.open(backend) : await s.connection.get();
        try {
          progress.report({ message: `${model}, ${path.basename(dataset)} line ${problem.line}` });
          const panel = await openEnvPlay(s.panels, { envFile: file, problem, model, ...(spec?.renderer ? { renderer: spec.renderer } : {}), ...(spec?.env?.class ? { className: spec.env.class } : {}) });
          const [{ loadRenderer }, { stopParam }] = await Promise.all([import('../../core/render'), import('../../core/rollouts/rollout')]);
          const { renderer } = await loadRenderer({ model, ...(spec?.renderer ? { renderer: spec.renderer } : {}), cacheDir: s.cacheDir, network: readNetworkSettings() });
          const client = await service.createSamplingClient({ baseModel: model }, abort.signal);
          let turn = 0;
          const sampler = {
            sample: (...args: Parameters<typeof client.sample>) => {
              progress.report({ message: `sampling turn ${++turn}…` });
              return client.sample(...args);
            },
          };
          const maxTokens = spec?.max_tokens ?? 64;
          const view = await panel.play(
            {
              sampler,
              renderer,
              model,
              params: { max_tokens: maxTokens, temperature: spec?.temperature ?? 1, stop: spec?.stop?.length ? spec.stop : stopParam(renderer.stopSequences()) },
              limits: play.envLimitsOf(spec?.env ?? EnvSpec.parse({ file: 'dry-run.env.py' }), maxTokens),
            },
            abort.signal,
          );
          if (view.status === 'failed') void vscode.window.showErrorMessage(`Dry run episode of ${name} failed: ${view.error?.message ?? 'see the panel'}`);
          return view;
        } finally {
          sub.dispose();
          if (spec) service.close();
        }
      },
    );
  } catch (err) {
    const message = errorMessage(err);
    s.log.warn(`dry run episode of ${name} failed: ${message}`);
    void vscode.window.showErrorMessage(`Dry run episode of ${name} failed: ${message}`);
    return undefined;
  }
}

/** The current connection's models, the embedded engine's first when it serves them. */
async function pickModel(s: EnvCommandServices): Promise<string | undefined> {
  const service = await s.connection.get();
  const caps = await service.capabilities();
  const models = caps.supported_models.flatMap((m) => (m.model_name ? [m.model_name] : []));
  if (models.length === 0) throw new Error('the current connection lists no models');
  const pick = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m })),
    { title: 'Dry Run Episode', placeHolder: 'Which model plays the episode? (no run spec names this environment)' },
  );
  return pick?.label;
}
