// The suite results panels of the window, one per suite file and checkpoint(s). Activation registers
// only the serializer; the panel's code and zod load when a panel first opens.
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { SuitePanel, SuitePanelServices } from './suitePanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const SUITE_VIEW_TYPE = 'tinker.suite';

export interface SuiteSubject {
  suiteFile: string;
  /** one checkpoint (its result) or two (Compare Suites: candidate, then production) */
  checkpoints: string[];
}

export type SuitePanels = Panels<SuitePanel, SuiteSubject, typeof import('../../protocol/suiteProtocol').SuitePanelState>;

export function suitePanels(s: SuitePanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): SuitePanels {
  return new Panels(
    {
      viewType: SUITE_VIEW_TYPE,
      state: async () => (await import('../../protocol/suiteProtocol')).SuitePanelState,
      keyOf: (subject: SuiteSubject) => JSON.stringify([path.resolve(subject.suiteFile), ...subject.checkpoints]),
      subjectOf: (state) => ({ suiteFile: state.suiteFile, checkpoints: state.checkpoints }),
      title: (subject) => `Suite: ${path.basename(subject.suiteFile).replace(/\.suite\.json$/i, '')}`,
      create: async (panel, subject, t) => new (await import('./suitePanel')).SuitePanel(panel, path.resolve(subject.suiteFile), subject.checkpoints, s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}
