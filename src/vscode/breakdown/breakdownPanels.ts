// The group breakdown panels of the window, one per run directory. Activation registers only the
// serializer; the panel's code and zod load when a panel first opens.
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { BreakdownPanel, BreakdownPanelServices } from './breakdownPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const BREAKDOWN_VIEW_TYPE = 'tinker.breakdown';

/** A run directory and, optionally, the iteration to show. */
export interface BreakdownSubject {
  runDir: string;
  ref?: { iteration: number; split: 'train' | 'eval' };
}

export type BreakdownPanels = Panels<BreakdownPanel, BreakdownSubject, typeof import('../../protocol/breakdownProtocol').BreakdownPanelState>;

export function breakdownPanels(s: BreakdownPanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): BreakdownPanels {
  return new Panels(
    {
      viewType: BREAKDOWN_VIEW_TYPE,
      state: async () => (await import('../../protocol/breakdownProtocol')).BreakdownPanelState,
      keyOf: (subject: BreakdownSubject) => path.resolve(subject.runDir),
      subjectOf: (state) => ({ runDir: state.runDir, ...(state.shown ? { ref: state.shown } : {}) }),
      title: (subject) => `Groups: ${path.basename(subject.runDir)}`,
      create: async (panel, subject, t) => new (await import('./breakdownPanel')).BreakdownPanel(panel, path.resolve(subject.runDir), subject.ref, s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}

/** Opens (or reuses) the run's panel and shows the iteration. */
export async function showIteration(panels: BreakdownPanels, subject: BreakdownSubject): Promise<BreakdownPanel> {
  const existing = panels.get(subject);
  const panel = await panels.open(subject);
  if (existing && subject.ref) await panel.show(subject.ref);
  return panel;
}
