// Starts GRPO and SFT runs inside the extension host through the core entry points (startGrpoRun,
// startSftRun): asks for the API key when the spec's backend needs one, picks the Python interpreter
// (GRPO rewards), records the run in the registry (status bar, trees and panels follow it), and tells
// the user how it ended. A run never throws into the host: failures become a message with an action
// and a line in the log. A spec is of the kind its file name says (src/core/spec/kinds.ts); a resumed run, of the kind its config.json records.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunTrackingOptions } from '../../core/runs/runTracking';
import type { RunResult } from '../../core/runs/runEvents';
import type { BackendChoice } from '../../core/spec/fields';
import type { ResolvedSftSpec } from '../../core/sft/spec';
import type { ResolvedDpoSpec } from '../../core/dpo/spec';
import { readIfExists } from '../../core/fs/read';
import { TinkerConnection } from '../connection/connection';
import { readNetworkSettings } from '../common/networkSettings';
import { Log } from '../common/log';
import { resolvePython } from '../rewards/pythonInterpreter';
import type { ResolvedGrpoSpec } from '../../core/grpo/spec';
import { DEFAULT_SPEC_KIND, type SpecKind, specFileMatches, specKind, specKindOfConfig, specKindOfFile } from '../../core/spec/kinds';
import { errorMessage } from '../../core/errors';
import { ActiveRun, RunRegistry } from './runRegistry';
import { RunsModel } from './runsModel';
import { ApiKeyStore } from '../connection/secrets';
import { readBackendFor, projectIdSetting, rewardEnvironmentSetting, wandbBaseUrlSetting, wandbProjectSetting } from '../common/settings';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import { COMMAND } from '../common/commandIds';
import { windowUi } from '../common/windowUi';

export interface RunRunnerServices {
  log: Log;
  apiKeys: ApiKeyStore;
  /** the W&B key (SecretStorage, else WANDB_API_KEY) */
  wandbKeys?: { get(): Promise<string | undefined> };
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

export class RunRunner {
  constructor(readonly s: RunRunnerServices) {}

  /**
   * Runs a spec (or resumes a run directory) to its end and returns the result; undefined when
   * the user declined a prompt (e.g. the API key). Problems found before the run starts reject.
   */
  async run(req: StartRequest): Promise<RunResult | undefined> {
    const stored = !req.specFile && req.resumeDir ? await storedRun(req.resumeDir) : undefined;
    const kind: SpecKind = req.specFile ? (specKindOfFile(req.specFile) ?? DEFAULT_SPEC_KIND) : (stored?.kind ?? DEFAULT_SPEC_KIND);
    const { label } = specKind(kind);
    // A GRPO run executes the reward function's code: never in a workspace the user has not trusted.
    if (specKind(kind).runsWorkspaceCode && !(this.s.trust ?? vscode.workspace).isTrusted) {
      this.s.log.warn('GRPO run not started: the workspace is not trusted (runs execute the reward function).');
      void vscode.window
        .showWarningMessage('GRPO runs execute the reward function, so they are disabled in an untrusted workspace.', 'Manage Workspace Trust')
        .then((a) => {
          if (a) void vscode.commands.executeCommand('workbench.trust.manage');
        });
      return undefined;
    }
    const { RunSpecError } = await import('../../core/spec/text');
    let spec: ResolvedGrpoSpec | undefined;
    let sftSpec: ResolvedSftSpec | undefined;
    let dpoSpec: ResolvedDpoSpec | undefined;
    if (req.specFile) {
      try {
        if (kind === 'dpo') dpoSpec = (await (await import('../../core/dpo/spec')).parseDpoSpecFile(req.specFile)).spec;
        else if (kind === 'sft') sftSpec = (await (await import('../../core/sft/spec')).parseSftSpecFile(req.specFile)).spec;
        else spec = (await (await import('../../core/grpo/spec')).parseGrpoSpecFile(req.specFile)).spec;
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
    // an SFT spec's sampling evaluators run their graders (workspace code) as GRPO runs their reward
    if (sftSpec?.evals?.some((e) => e.grader) && !(this.s.trust ?? vscode.workspace).isTrusted) {
      this.s.log.warn('SFT run not started: the workspace is not trusted (its evaluators run a grader file).');
      void vscode.window.showWarningMessage('This SFT run\'s evaluators run a grader file, so it is disabled in an untrusted workspace.', 'Manage Workspace Trust').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.trust.manage');
      });
      return undefined;
    }
    const backendOf = spec ?? sftSpec ?? dpoSpec ?? stored?.backend;
    if (!backendOf) throw new Error(`Nothing to run: give a run spec (${specFileMatches()}) or a run directory to resume.`);
    if (backendOf instanceof Error) throw backendOf;
    const backend = await readBackendFor(backendOf.backend, backendOf.base_url);
    if (!(await haveKeyFor(backend, this.s.apiKeys, 'This run'))) {
      void vscode.window.showInformationMessage('The run was not started: no Tinker API key is set.');
      return undefined;
    }

    const already = this.s.registry.active().find((r) => (req.resumeDir ? r.runDir === req.resumeDir : req.specFile && r.specFile === req.specFile));
    if (already) {
      void vscode.window.showWarningMessage(`${already.runName} is already running.`, 'Cancel Run').then((a) => {
        if (a) already.abort.abort();
      });
      return undefined;
    }

    const name = spec?.name ?? sftSpec?.name ?? dpoSpec?.name ?? path.basename(req.resumeDir ?? 'run');
    const common = {
      specFile: req.specFile,
      resumeDir: req.resumeDir,
      runsDir: this.s.runs.runsFolder,
      connect: async (sp: BackendChoice) => this.s.connection.open(await readBackendFor(sp.backend, sp.base_url), sp.project_id ?? projectIdSetting()),
      cacheDir: this.s.cacheDir,
      network: readNetworkSettings(),
      tracking: await this.tracking(name),
    };
    // GRPO rewards run in Python: the interpreter is settled before the run is shown as starting
    const python = kind === 'grpo' || sftSpec?.evals?.some((e) => e.grader) ? await resolvePython(req.specFile ? vscode.Uri.file(req.specFile) : undefined, this.s.log) : undefined;
    const run = this.s.registry.begin(req.specFile, name, kind);
    this.s.log.info(`starting ${label} run ${name}${req.resumeDir ? ` (resuming ${req.resumeDir})` : ''}${python ? `; Python ${python.path} (${python.source})` : ''}`);
    const events = {
      signal: run.abort.signal,
      onEvent: (e: Parameters<RunRegistry['apply']>[1]) => {
        this.s.registry.apply(run, e);
        if (e.type === 'started') void this.s.runs.refresh();
        if (e.type === 'warning') this.s.log.warn(`[${run.runName}] step ${e.step}: ${e.message}`);
      },
      log: (line: string) => this.s.log.info(`[${run.runName}] ${line}`),
    };
    let result: RunResult;
    // the engine dying under a local run stops it at once, as a failure it can be resumed from
    const engineWatch =
      backend.kind === 'local'
        ? this.s.connection.onLocalEngineExit(async (message) => {
            const { ServerGone } = await import('../../core/runs/loopRuntime');
            run.abort.abort(new ServerGone(`${message}; Resume continues from the last checkpoint`));
          })
        : undefined;
    try {
      // the spec already parsed above is not read and validated a second time
      if (kind === 'dpo') {
        const { startDpoRun } = await import('../../core/dpo/start');
        result = await startDpoRun({ ...common, spec: dpoSpec, ...events });
      } else if (kind === 'sft') {
        const { startSftRun } = await import('../../core/sft/start');
        result = await startSftRun({ ...common, spec: sftSpec, python: python?.path, rewardEnvironment: rewardEnvironmentSetting(), ...events });
      } else {
        const { startGrpoRun } = await import('../../core/grpo/start');
        result = await startGrpoRun({ ...common, spec, python: python?.path, rewardEnvironment: rewardEnvironmentSetting(), ...events });
      }
    } catch (err) {
      const message = errorMessage(err);
      const { ServerGone } = await import('../../core/runs/loopRuntime');
      const gone = run.abort.signal.reason instanceof ServerGone;
      result = { kind: run.kind, runDir: run.runDir ?? '', status: run.abort.signal.aborted && !gone ? 'cancelled' : 'failed', iterationsRun: 0, error: message };
    } finally {
      engineWatch?.dispose();
    }
    this.s.registry.finish(run, result);
    await this.s.runs.refresh(); // the views show the final files by the time the command returns
    this.notify(run, result, label);
    return result;
  }
  /** W&B for a run: the spec's wandb_* fields, else the tinker.wandb.project setting; the key from secret storage or WANDB_API_KEY. */
  async tracking(runName: string): Promise<RunTrackingOptions> {
    const { wandbTrackerFactory } = await import('../../core/tracking/wandbSetup');
    let warned = false;
    return {
      tracker: wandbTrackerFactory({ project: wandbProjectSetting(), apiKey: await this.s.wandbKeys?.get(), baseUrl: wandbBaseUrlSetting(), env: process.env }),
      onWarning: (message) => {
        this.s.log.warn(`[${runName}] ${message}`);
        if (warned) return;
        warned = true;
        void windowUi.showWarningMessage(`${runName}: ${message}`, 'Set W&B API Key').then((a) => {
          if (a) void vscode.commands.executeCommand(COMMAND.setWandbApiKey);
        });
      },
    };
  }


  /** Cancels a running run (it stops cleanly; its directory keeps every finished iteration). */
  cancel(run: ActiveRun): void {
    this.s.log.info(`cancelling run ${run.runName}`);
    run.abort.abort();
  }

  private notify(run: ActiveRun, r: RunResult, label: string): void {
    const unit = label === 'GRPO' ? 'iteration' : 'step';
    const iters = `${r.iterationsRun} ${unit}${r.iterationsRun === 1 ? '' : 's'}`;
    const sft = r.kind === 'sft' ? r : undefined;
    const nll =
      sft?.firstTrainNll !== undefined && sft.lastTrainNll !== undefined
        ? `; train NLL ${sft.firstTrainNll.toFixed(3)} → ${sft.lastTrainNll.toFixed(3)}${sft.firstTestNll !== undefined && sft.lastTestNll !== undefined ? `, validation NLL ${sft.firstTestNll.toFixed(3)} → ${sft.lastTestNll.toFixed(3)}` : ''}`
        : '';
    const dpo =
      r.kind === 'dpo' && r.firstAccuracy !== undefined && r.lastAccuracy !== undefined
        ? `; pair accuracy ${r.firstAccuracy.toFixed(2)} → ${r.lastAccuracy.toFixed(2)}, DPO loss ${r.firstDpoLoss?.toFixed(3)} → ${r.lastDpoLoss?.toFixed(3)}`
        : undefined;
    const test =
      dpo ?? (r.kind === 'grpo' && r.firstTestReward !== undefined && r.lastTestReward !== undefined
        ? `; holdout reward ${r.firstTestReward.toFixed(3)} → ${r.lastTestReward.toFixed(3)}`
        : nll);
    const actions = r.runDir ? ['Open Metrics'] : [];
    const act = (a: string | undefined) => {
      if (a === 'Open Metrics') void vscode.commands.executeCommand(COMMAND.openMetrics, r.runDir);
      if (a === 'Show Log') this.s.log.show();
    };
    switch (r.status) {
      case 'completed':
        this.s.log.info(`${label} run ${run.runName} completed: ${iters}${test} (${r.runDir})`);
        void vscode.window.showInformationMessage(`${label} run ${run.runName} completed: ${iters}${test}.`, ...actions).then(act);
        break;
      case 'cancelled':
        this.s.log.info(`${label} run ${run.runName} cancelled after ${iters}`);
        void vscode.window.showInformationMessage(`${label} run ${run.runName} cancelled after ${iters}; finished iterations are kept and it can be resumed.`, ...actions).then(act);
        break;
      case 'failed': {
        this.s.log.error(`${label} run ${run.runName} failed: ${r.error ?? 'unknown error'}`);
        const resumable = r.runDir && fs.existsSync(path.join(r.runDir, 'checkpoints.jsonl')) ? ['Resume Run'] : [];
        void vscode.window
          .showErrorMessage(`${label} run ${run.runName} failed: ${this.s.log.redactor.redact(r.error ?? 'unknown error')}`, ...resumable, ...actions, 'Show Log')
          .then((a) => (a === 'Resume Run' ? void vscode.commands.executeCommand(COMMAND.resumeRun, r.runDir) : act(a)));
        break;
      }
    }
  }
}

/**
 * A resumed run's config.json, read once: its kind (SFT when it says run_kind "sft", else GRPO) and
 * the backend it was started with, or why it cannot be resumed (thrown once the trust check is past).
 */
async function storedRun(runDir: string): Promise<{ kind: SpecKind; backend: BackendChoice | Error }> {
  const { parseRunConfig, runConfigFile } = await import('../../core/runs/runConfig');
  const file = runConfigFile(runDir);
  const cannot = (err: unknown) => new Error(`Cannot resume ${runDir}: ${errorMessage(err)}`);
  let text: string | undefined;
  try {
    text = await readIfExists(file);
  } catch (err) {
    return { kind: DEFAULT_SPEC_KIND, backend: cannot(err) };
  }
  if (text === undefined) return { kind: DEFAULT_SPEC_KIND, backend: new Error(`Cannot resume ${runDir}: ${file} is missing.`) };
  let kind: SpecKind = DEFAULT_SPEC_KIND;
  try {
    kind = specKindOfConfig(JSON.parse(text));
  } catch {
    // parseRunConfig below reports the broken JSON in words
  }
  try {
    const config = parseRunConfig(text, file);
    return { kind, backend: { backend: config.backend ?? 'local', ...(config.base_url !== undefined ? { base_url: config.base_url } : {}) } };
  } catch (err) {
    return { kind, backend: cannot(err) };
  }
}
