// Starts GRPO runs inside the extension host through the core entry point (startGrpoRun): asks
// for the API key when the spec's backend needs one, picks the Python interpreter, records the run
// in the registry (status bar, trees and panels follow it), and tells the user how it ended. A run
// never throws into the host: failures become a message with an action and a line in the log.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GrpoRunResult } from '../core/grpo/types';
import type { ResolvedRunSpec } from '../core/runs/spec';
import { TinkerConnection } from './connection';
import { Log } from './log';
import { resolvePython } from './pythonInterpreter';
import { ActiveRun, RunRegistry } from './runRegistry';
import { RunsModel } from './runsModel';
import { ApiKeyStore } from './secrets';
import { readBackendFor, rewardEnvironmentSetting } from './settings';

export interface GrpoRunnerServices {
  log: Log;
  apiKeys: ApiKeyStore;
  runs: RunsModel;
  connection: TinkerConnection;
  registry: RunRegistry;
  /** tokenizer files and dataset pages (the extension's global storage) */
  cacheDir: string;
  /** Workspace Trust (default: vscode.workspace); tests pass a stand-in of an untrusted workspace */
  trust?: { readonly isTrusted: boolean };
}

export interface StartRequest {
  specFile?: string;
  resumeDir?: string;
}

export class GrpoRunner {
  constructor(readonly s: GrpoRunnerServices) {}

  /**
   * Runs a spec (or resumes a run directory) to its end and returns the result; undefined when
   * the user declined a prompt (e.g. the API key). Problems found before the run starts reject.
   */
  async run(req: StartRequest): Promise<GrpoRunResult | undefined> {
    // A run executes the reward function's code: never in a workspace the user has not trusted.
    if (!(this.s.trust ?? vscode.workspace).isTrusted) {
      this.s.log.warn('GRPO run not started: the workspace is not trusted (runs execute the reward function).');
      void vscode.window
        .showWarningMessage('GRPO runs execute the reward function, so they are disabled in an untrusted workspace.', 'Manage Workspace Trust')
        .then((a) => {
          if (a) void vscode.commands.executeCommand('workbench.trust.manage');
        });
      return undefined;
    }
    const { parseRunSpecFile, RunSpecError } = await import('../core/runs/spec');
    let spec: ResolvedRunSpec | undefined;
    if (req.specFile) {
      try {
        spec = (await parseRunSpecFile(req.specFile)).spec;
      } catch (err) {
        if (err instanceof RunSpecError) {
          for (const p of err.problems) this.s.log.error(p);
          const uri = vscode.Uri.file(req.specFile);
          void vscode.window
            .showErrorMessage(`The run spec cannot be used: ${err.problems[0] ?? err.message}${err.problems.length > 1 ? ` (and ${err.problems.length - 1} more; see the log)` : ''}`, 'Open Spec', 'Show Log')
            .then((a) => {
              if (a === 'Open Spec') void vscode.window.showTextDocument(uri);
              if (a === 'Show Log') this.s.log.show();
            });
          return undefined;
        }
        throw err;
      }
    }
    const backendOf = spec ?? (req.resumeDir ? await storedBackend(req.resumeDir) : undefined);
    if (!backendOf) throw new Error('Nothing to run: give a run spec (*.grpo.json) or a run directory to resume.');
    const backend = await readBackendFor(backendOf.backend, backendOf.base_url);
    if (backend.kind === 'cloud' && !(await this.s.apiKeys.get())) {
      const action = await vscode.window.showWarningMessage('This run uses the Tinker cloud, which needs an API key.', 'Set API Key');
      if (action === 'Set API Key') await vscode.commands.executeCommand('tinker.setApiKey');
      if (!(await this.s.apiKeys.get())) {
        void vscode.window.showInformationMessage('The run was not started: no Tinker API key is set.');
        return undefined;
      }
    }

    const already = this.s.registry.active().find((r) => (req.resumeDir ? r.runDir === req.resumeDir : req.specFile && r.specFile === req.specFile));
    if (already) {
      void vscode.window.showWarningMessage(`${already.runName} is already running.`, 'Cancel Run').then((a) => {
        if (a) already.abort.abort();
      });
      return undefined;
    }

    const resource = req.specFile ? vscode.Uri.file(req.specFile) : undefined;
    const python = await resolvePython(resource, this.s.log);
    const name = spec?.name ?? path.basename(req.resumeDir ?? 'run');
    const run = this.s.registry.begin(req.specFile, name);
    this.s.log.info(`starting GRPO run ${name}${req.resumeDir ? ` (resuming ${req.resumeDir})` : ''}; Python ${python.path} (${python.source})`);
    const { startGrpoRun } = await import('../core/grpo/start');
    let result: GrpoRunResult;
    try {
      result = await startGrpoRun({
        specFile: req.specFile,
        spec, // already parsed above: not read and validated a second time
        resumeDir: req.resumeDir,
        runsDir: this.s.runs.runsFolder,
        connect: async (sp) => this.s.connection.open(await readBackendFor(sp.backend, sp.base_url)),
        cacheDir: this.s.cacheDir,
        python: python.path,
        rewardEnvironment: rewardEnvironmentSetting(),
        signal: run.abort.signal,
        onEvent: (e) => {
          this.s.registry.apply(run, e);
          if (e.type === 'started') void this.s.runs.refresh();
          if (e.type === 'warning') this.s.log.warn(`[${run.runName}] iteration ${e.step}: ${e.message}`);
        },
        log: (line) => this.s.log.info(`[${run.runName}] ${line}`),
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      result = { runDir: run.runDir ?? '', status: run.abort.signal.aborted ? 'cancelled' : 'failed', iterationsRun: 0, error: message };
    }
    this.s.registry.finish(run, result);
    await this.s.runs.refresh(); // the views show the final files by the time the command returns
    this.notify(run, result);
    return result;
  }

  /** Cancels a running run (it stops cleanly; its directory keeps every finished iteration). */
  cancel(run: ActiveRun): void {
    this.s.log.info(`cancelling GRPO run ${run.runName}`);
    run.abort.abort();
  }

  private notify(run: ActiveRun, r: GrpoRunResult): void {
    const iters = `${r.iterationsRun} iteration${r.iterationsRun === 1 ? '' : 's'}`;
    const test =
      r.firstTestReward !== undefined && r.lastTestReward !== undefined
        ? `; holdout reward ${r.firstTestReward.toFixed(3)} → ${r.lastTestReward.toFixed(3)}`
        : '';
    const actions = r.runDir ? ['Open Metrics'] : [];
    const act = (a: string | undefined) => {
      if (a === 'Open Metrics') void vscode.commands.executeCommand('tinker.openMetrics', r.runDir);
      if (a === 'Show Log') this.s.log.show();
    };
    switch (r.status) {
      case 'completed':
        this.s.log.info(`GRPO run ${run.runName} completed: ${iters}${test} (${r.runDir})`);
        void vscode.window.showInformationMessage(`GRPO run ${run.runName} completed: ${iters}${test}.`, ...actions).then(act);
        break;
      case 'cancelled':
        this.s.log.info(`GRPO run ${run.runName} cancelled after ${iters}`);
        void vscode.window.showInformationMessage(`GRPO run ${run.runName} cancelled after ${iters}; finished iterations are kept and it can be resumed.`, ...actions).then(act);
        break;
      case 'failed':
        this.s.log.error(`GRPO run ${run.runName} failed: ${r.error ?? 'unknown error'}`);
        void vscode.window.showErrorMessage(`GRPO run ${run.runName} failed: ${this.s.log.redactor.redact(r.error ?? 'unknown error')}`, ...actions, 'Show Log').then(act);
        break;
    }
  }
}

/** The backend a run directory's config.json was started with (for resuming without its spec). */
async function storedBackend(runDir: string): Promise<{ backend: 'local' | 'cloud' | 'custom'; base_url?: string }> {
  const { readRunConfig, runConfigFile } = await import('../core/runs/runConfig');
  let config;
  try {
    config = await readRunConfig(runDir);
  } catch (err) {
    throw new Error(`Cannot resume ${runDir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!config) throw new Error(`Cannot resume ${runDir}: ${runConfigFile(runDir)} is missing.`);
  return { backend: config.backend ?? 'local', ...(config.base_url !== undefined ? { base_url: config.base_url } : {}) };
}
