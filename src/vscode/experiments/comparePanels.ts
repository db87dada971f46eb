// The Compare Runs panels of the window, one per set of runs (or sweep). Activation registers only
// the serializer; the panel's code and zod load when a panel first opens.
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { ComparePanel, ComparePanelServices, CompareSubject } from './comparePanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const COMPARE_VIEW_TYPE = 'tinker.compare';

export type ComparePanels = Panels<ComparePanel, CompareSubject, typeof import('../../protocol/compareProtocol').ComparePanelState>;

export function comparePanels(s: ComparePanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): ComparePanels {
  return new Panels(
    {
      viewType: COMPARE_VIEW_TYPE,
      state: async () => (await import('../../protocol/compareProtocol')).ComparePanelState,
      keyOf: (x: CompareSubject) => (x.sweepDir ? `sweep:${path.resolve(x.sweepDir)}` : x.runDirs.map((d) => path.resolve(d)).sort().join('\n')),
      subjectOf: (state) => ({ runDirs: state.sweepDir ? [] : state.runDirs, ...(state.sweepDir ? { sweepDir: state.sweepDir } : {}) }),
      title: (x) => (x.sweepDir ? `Compare: sweep ${path.basename(x.sweepDir)}` : `Compare: ${x.runDirs.length} runs`),
      create: async (panel, x, t) => new (await import('./comparePanel')).ComparePanel(panel, x, s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}
