// "Tinker: Reconcile Run Usage…": a run's own token counts beside the service's accounting of its
// sessions (core/runs/usageReconcile.ts), shown as a text table in an editor; when the service's
// usage cannot be read (no billing access, a refused window, not reported yet) the message says so.
// The server asked is the run's own (its config.json's backend and base URL); no session is opened.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ResolvedBackend } from '../../core/config/backendKinds';
import type { Reconciliation } from '../../core/runs/usageReconcile';
import type { TinkerConnection } from '../connection/connection';
import type { Log } from '../common/log';
import { windowUi } from '../common/windowUi';

export async function showRunUsage(s: { connection: Pick<TinkerConnection, 'open'>; log: Log }, runDir: string): Promise<Reconciliation | undefined> {
  const { readRunConfig } = await import('../../core/runs/runConfig');
  const { reconcileRunUsage, reconciliationText } = await import('../../core/runs/usageReconcile');
  const name = path.basename(runDir);
  const config = await readRunConfig(runDir);
  if (!config) {
    void windowUi.showWarningMessage(`${runDir} is not a run directory (no config.json).`);
    return undefined;
  }
  const { readRunSessions } = await import('../../core/runs/runSessions');
  const { DEFAULT_CLOUD_BASE_URL } = await import('../../core/config/backendKinds');
  // the spec's URL, else the server its last session was made on, else (cloud) the default
  const sessionUrl = (await readRunSessions(runDir)).sessions.filter((x) => x.base_url).at(-1)?.base_url;
  const backend = runBackend(config.backend, config.base_url ?? sessionUrl ?? (config.backend === 'cloud' ? DEFAULT_CLOUD_BASE_URL : undefined));
  if (!backend) {
    void vscode.window.showInformationMessage(`${name} ran on the embedded engine, which keeps no billing: there is no service usage to reconcile.`);
    return undefined;
  }
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Reading the service's usage of ${name}` }, async () => {
    const client = await s.connection.open(backend, undefined, { withoutSession: true });
    try {
      return await reconcileRunUsage(runDir, client);
    } finally {
      client.close();
    }
  });
  const text = reconciliationText(result);
  s.log.info(text.trimEnd());
  if (result.ok) {
    const doc = await vscode.workspace.openTextDocument({ content: text, language: 'plaintext' });
    await vscode.window.showTextDocument(doc, { preview: true });
  } else void windowUi.showWarningMessage(`Usage of ${name}: ${result.message}`);
  return result;
}

/** The server the run used, from its config.json; undefined for the embedded engine. */
function runBackend(kind: string | undefined, baseUrl: string | undefined): ResolvedBackend | undefined {
  if (kind === 'cloud' && baseUrl) return { kind: 'cloud', baseUrl, needsApiKey: true };
  if (kind === 'custom' && baseUrl) return { kind: 'custom', baseUrl, needsApiKey: false };
  return undefined;
}
