// Starts runs of every kind inside the extension host through the kind's descriptor (the kinds
// table, src/core/kinds/registry.ts): asks for the API key when the spec's backend needs one, picks the Python interpreter
// (the workspace's reward, environment or grader files), records the run in the registry (status bar, trees and panels follow it), and tells
// the user how it ended. A run never throws into the host: failures become a message with an action
// and a line in the log. A spec is of the kind its file name says (src/core/spec/kinds.ts); a resumed run, of the kind its config.json records.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunTrackingOptions } from '../../core/runs/runTracking';
import type { RunResultBase } from '../../core/runs/runEvents';
import type { BackendChoice } from '../../core/spec/fields';
import type { ServiceClient } from '../../core/tinker/client';
import { readIfExists } from '../../core/fs/read';
import { TinkerConnection } from '../connection/connection';
import { readNetworkSettings } from '../common/networkSettings';
import { Log } from '../common/log';
import { resolvePython } from '../common/pythonInterpreter';
import { kindRow, runKindIdOfFile, runKindOfConfig, specFileMatches } from '../../core/spec/kinds';
import { errorMessage } from '../../core/errors';
import { ActiveRun, RunRegistry } from './runRegistry';
import { RunsModel } from './runsModel';
import { ApiKeyStore } from '../connection/secrets';
import { readBackendFor, pricesSetting, projectIdSetting, rewardEnvironmentSetting, wandbBaseUrlSetting, wandbProjectSetting } from '../common/settings';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import { COMMAND } from '../common/commandIds';
import { windowUi } from '../common/windowUi';
import { confirmJobCost } from '../common/costConfirm';
import { registryConfigExtra } from '../../core/models/metadata';
import { registryFileIn } from '../../core/models/store';

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
  async run(req: StartRequest): Promise<RunResultBase | undefined> {
    const stored = !req.specFile && req.resumeDir ? await storedRun(req.resumeDir) : undefined;
    const kindId = req.specFile ? runKindIdOfFile(req.specFile) : stored?.kind;
    if (kindId === undefined) {
      if (req.specFile) throw new Error(`${path.basename(req.specFile)} is not a run spec: its name ends in none of ${specFileMatches()}.`);
      // the stored config's problem, in words (thrown once the trust check would have been)
      if (stored?.backend instanceof Error) throw stored.backend;
      throw new Error(`Nothing to run: give a run spec (${specFileMatches()}) or a run directory to resume.`);
    }
    const { runKind } = await import('../../core/kinds/registry');
    const kind = await runKind(kindId);
    const { label } = kind.row;
    const untrusted = !(this.s.trust ?? vscode.workspace).isTrusted;
    // A run that executes the workspace's code (a reward function): never in a workspace the user has not trusted.
    if (kind.row.runsWorkspaceCode && untrusted) {
      this.s.log.warn(`${label} run not started: the workspace is not trusted (runs execute the reward function).`);
      void vscode.window
        .showWarningMessage(`${label} runs execute the reward function, so they are disabled in an untrusted workspace.`, 'Manage Workspace Trust')
        .then((a) => {
          if (a) void vscode.commands.executeCommand('workbench.trust.manage');
        });
      return undefined;
    }
    const { RunSpecError } = await import('../../core/spec/text');
    let spec: (BackendChoice & { name: string }) | undefined;
    if (req.specFile) {
      try {
        spec = (await (await kind.spec()).parseFile(req.specFile)).spec as BackendChoice & { name: string };
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
    // a spec of a kind that otherwise runs no workspace code may (an SFT spec's evaluators run their grader files)
    const runsCode = kind.row.runsWorkspaceCode || (spec !== undefined && kind.runsWorkspaceCode(spec));
    if (runsCode && untrusted) {
      this.s.log.warn(`${label} run not started: the workspace is not trusted (its evaluators run a grader file).`);
      void vscode.window.showWarningMessage(`This ${label} run's evaluators run a grader file, so it is disabled in an untrusted workspace.`, 'Manage Workspace Trust').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.trust.manage');
      });
      return undefined;
    }
    const backendOf = spec ?? stored?.backend;
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

    const name = spec?.name ?? path.basename(req.resumeDir ?? 'run');
    // a run warm-started from a registered model version records it, and its checkpoints carry its name (as the CLI does)
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const registryExtra = req.specFile && !req.resumeDir && root ? await registryConfigExtra(registryFileIn(root), req.specFile) : undefined;
    const common = {
      specFile: req.specFile,
      ...(registryExtra ? { configExtra: registryExtra } : {}),
      resumeDir: req.resumeDir,
      runsDir: this.s.runs.runsFolder,
      connect: async (sp: BackendChoice) => this.s.connection.open(await readBackendFor(sp.backend, sp.base_url), sp.project_id ?? projectIdSetting()),
      cacheDir: this.s.cacheDir,
      network: readNetworkSettings(),
      tracking: await this.tracking(name),
      prices: await pricesSetting(),
    };
    // a new run's whole cost, before it starts (a confirmation above tinker.confirmCostAboveUsd)
    if (spec && req.specFile && !req.resumeDir && !(await confirmJobCost(() => this.estimate(kindId, spec, req.specFile!, common.prices), this.s.log))) return undefined;
    // the workspace's code runs in Python: the interpreter is settled before the run is shown as starting
    const python = runsCode ? await resolvePython(req.specFile ? vscode.Uri.file(req.specFile) : undefined, this.s.log) : undefined;
    const run = this.s.registry.begin(req.specFile, name, kindId);
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
    let result: RunResultBase;
    const stopWatching: Array<() => void> = [];
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
      result = await kind.start({ ...common, connect: this.watchingQueue(run, common.connect, stopWatching), ...(spec ? { spec } : {}), ...(python ? { python: python.path } : {}), rewardEnvironment: rewardEnvironmentSetting(), ...events });
    } catch (err) {
      const message = errorMessage(err);
      const { ServerGone } = await import('../../core/runs/loopRuntime');
      const gone = run.abort.signal.reason instanceof ServerGone;
      result = { kind: run.kind, runDir: run.runDir ?? '', status: run.abort.signal.aborted && !gone ? 'cancelled' : 'failed', iterationsRun: 0, error: message };
    } finally {
      engineWatch?.dispose();
      for (const stop of stopWatching) stop();
    }
    this.s.registry.finish(run, result);
    await this.s.runs.refresh(); // the views show the final files by the time the command returns
    this.notify(run, result, label, kind.outcome(result));
    return result;
  }
  /** `connect`, with the client's queue pauses shown on the run (the status bar, the Runs view) while it runs. */
  private watchingQueue(run: ActiveRun, connect: (sp: BackendChoice) => Promise<ServiceClient>, stops: Array<() => void>): (sp: BackendChoice) => Promise<ServiceClient> {
    return async (sp) => {
      const service = await connect(sp);
      stops.push(service.queuePauses.onChange((pause) => this.s.registry.setQueuePause(run, pause)));
      return service;
    };
  }

  /** The estimate of a run of `spec` at the table in force. */
  private async estimate(kindId: string, spec: unknown, specFile: string, prices: Awaited<ReturnType<typeof pricesSetting>>) {
    const [{ runUsageEstimate }, { priceEstimate }] = await Promise.all([import('../../core/kinds/estimate'), import('../../core/cost/estimate')]);
    const e = await runUsageEstimate(kindId, spec, { specDir: path.dirname(specFile), cacheDir: this.s.cacheDir });
    return e && priceEstimate(prices, e);
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

  /** How the run ended, in a message with its actions; `test` is the kind's own words for how it went (`; train NLL 1.2 → 0.8`). */
  private notify(run: ActiveRun, r: RunResultBase, label: string, test: string): void {
    const unit = kindRow(r.kind).unit;
    const iters = `${r.iterationsRun} ${r.iterationsRun === 1 ? unit.one : unit.many}`;
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
        // stopped by its budget: a warning in the budget's words, with the way on
        if (r.budgetStop) {
          this.s.log.info(`${label} run ${run.runName} ${r.budgetStop} (after ${iters})`);
          void vscode.window
            .showWarningMessage(`${label} run ${run.runName} ${r.budgetStop}.`, 'Resume Run', ...actions)
            .then((a) => (a === 'Resume Run' ? void vscode.commands.executeCommand(COMMAND.resumeRun, r.runDir) : act(a)));
          break;
        }
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
 * A resumed run's config.json, read once: its kind (the kinds table's, by run_kind; none: a GRPO run from before SFT) and
 * the backend it was started with, or why it cannot be resumed (thrown once the trust check is past).
 */
async function storedRun(runDir: string): Promise<{ kind: string | undefined; backend: BackendChoice | Error }> {
  const { parseRunConfig, runConfigFile } = await import('../../core/runs/runConfig');
  const file = runConfigFile(runDir);
  const cannot = (err: unknown) => new Error(`Cannot resume ${runDir}: ${errorMessage(err)}`);
  let text: string | undefined;
  try {
    text = await readIfExists(file);
  } catch (err) {
    return { kind: undefined, backend: cannot(err) };
  }
  if (text === undefined) return { kind: undefined, backend: new Error(`Cannot resume ${runDir}: ${file} is missing.`) };
  let recorded: unknown;
  try {
    recorded = JSON.parse(text);
  } catch {
    // parseRunConfig below reports the broken JSON in words
  }
  const kind = recorded === undefined ? undefined : runKindOfConfig(recorded);
  try {
    const config = parseRunConfig(text, file);
    if (kind === undefined) return { kind, backend: cannot(new Error(`config.json's run_kind ${JSON.stringify((recorded as { run_kind?: unknown }).run_kind)} is no kind of run this version has`)) };
    return { kind, backend: { backend: config.backend ?? 'local', ...(config.base_url !== undefined ? { base_url: config.base_url } : {}) } };
  } catch (err) {
    return { kind, backend: cannot(err) };
  }
}
