// Running a suite on a checkpoint from the extension ("Tinker: Run Suite on Checkpoint…", the suite
// file's CodeLens, the Checkpoints view, the suite panel): the core runSuite in the background with a
// cancellable progress notification (the AbortSignal goes into runSuite; a cancelled run keeps every
// graded sample and the next run resumes it). The suite panel opens on the checkpoint as the run
// starts and follows the result as entries finish.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SuiteResult } from '../../core/suite/contract';
import type { TinkerConnection } from '../connection/connection';
import type { ApiKeyStore } from '../connection/secrets';
import { haveKeyFor } from '../connection/apiKeyPrompt';
import { readBackendFor } from '../common/settings';
import type { Log } from '../common/log';
import type { RunsModel } from '../runs/runsModel';
import { resolvePython } from '../common/pythonInterpreter';
import type { SuitePanels } from './suitePanels';

export interface SuiteRunnerServices {
  log: Log;
  suites: SuitePanels;
  runs: RunsModel;
  connection: TinkerConnection;
  apiKeys: ApiKeyStore;
  cacheDir: string;
}

/** What a suite run from the extension ended with. */
export interface SuiteOutcome {
  suiteFile: string;
  /** the checkpoint as the result names it (a run directory or `latest` resolved to its sampler path) */
  checkpoint: string;
  result?: SuiteResult;
  cancelled: boolean;
}

/** The backends the suite's entries use (their eval specs'), for the API key check before anything starts. */
async function suiteBackends(suiteFile: string): Promise<Array<{ backend: 'local' | 'cloud' | 'custom'; base_url?: string }>> {
  const { loadSuite } = await import('../../core/suite/store');
  const { parseEvalSpecFile, parseEvalSpecValue } = await import('../../core/evals/spec');
  const suite = await loadSuite(suiteFile);
  const out = [];
  for (const e of suite.entries) {
    const spec = e.evalFile ? (await parseEvalSpecFile(e.evalFile)).spec : typeof e.spec.eval === 'object' ? parseEvalSpecValue(e.spec.eval, suite.file).spec : undefined;
    if (spec) out.push({ backend: spec.backend, ...(spec.base_url ? { base_url: spec.base_url } : {}) });
  }
  return out;
}

/** Runs (or resumes) the suite on the checkpoint with progress and cancel; the suite panel shows the result. */
export async function runSuiteWithProgress(s: SuiteRunnerServices, suiteFile: string, checkpoint: string): Promise<SuiteOutcome | undefined> {
  // the entries' graders and environments are the workspace's code
  if (!vscode.workspace.isTrusted) throw new Error(`Suite ${path.basename(suiteFile)} was not run: its graders are workspace code, which runs only in a trusted workspace (Workspaces: Manage Workspace Trust).`);
  for (const b of await suiteBackends(suiteFile)) {
    if (!(await haveKeyFor(await readBackendFor(b.backend, b.base_url), s.apiKeys, 'This suite'))) {
      void vscode.window.showInformationMessage('The suite was not started: no Tinker API key is set.');
      return undefined;
    }
  }
  const { runSuite } = await import('../../core/suite/run');
  const python = (await resolvePython(vscode.Uri.file(suiteFile), s.log)).path;
  const name = path.basename(suiteFile);
  const abort = new AbortController();
  let cancelled = false;
  const runsFolder = s.runs.runsFolder;
  const opened = s.suites.open({ suiteFile, checkpoints: [checkpoint] }).catch((err: unknown) => s.log.warn(`suite panel: ${String(err)}`));
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Suite ${name} on ${checkpoint}`, cancellable: true },
    async (progress, token) => {
      token.onCancellationRequested(() => {
        cancelled = true;
        abort.abort();
      });
      let last = 0;
      return runSuite(
        {
          suiteFile,
          checkpoint,
          signal: abort.signal,
          onProgress: (done, total, what) => {
            const pct = total ? (100 * done) / total : 0;
            progress.report({ message: `${done} / ${total}${what ? ` · ${what}` : ''}`, increment: pct - last });
            last = pct;
          },
        },
        {
          connect: async (sp) => s.connection.open(await readBackendFor(sp.backend, sp.base_url)),
          cacheDir: s.cacheDir,
          python,
          runsDirs: [runsFolder],
          cwd: path.dirname(suiteFile),
          log: (line) => s.log.info(`suite ${name}: ${line}`),
        },
      );
    },
  );
  await opened;
  // a checkpoint given as a run directory or `latest` is kept under its sampler path
  const resolved = result.checkpoint.path;
  const panel = await s.suites.open({ suiteFile, checkpoints: [resolved] });
  await panel.refresh();
  if (cancelled || abort.signal.aborted) void vscode.window.showInformationMessage(`Suite ${name} on ${resolved} cancelled: the graded samples are kept; run it again to resume.`);
  return { suiteFile, checkpoint: resolved, result, cancelled: cancelled || !result.complete };
}

/** The current connection's base models (empty when it cannot be reached). */
export async function connectionModels(s: Pick<SuiteRunnerServices, 'connection' | 'log'>): Promise<string[]> {
  try {
    const caps = await (await s.connection.get()).capabilities();
    return caps.supported_models.flatMap((m) => (m.model_name ? [m.model_name] : []));
  } catch (err) {
    s.log.warn(`suite: could not list the connection's models: ${String(err)}`);
    return [];
  }
}
