// The Preference Pairs panels of the window, one per source (a pairs file or a DPO run directory).
// Activation registers only the serializer; the panel's code and zod load when a panel first opens.
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { PairsPanel, PairsPanelServices } from './pairsPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const PAIRS_VIEW_TYPE = 'tinker.pairs';

export type PairsPanels = Panels<PairsPanel, string, typeof import('../../protocol/pairsProtocol').PairsPanelState>;

export function pairsPanels(s: PairsPanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): PairsPanels {
  return new Panels(
    {
      viewType: PAIRS_VIEW_TYPE,
      state: async () => (await import('../../protocol/pairsProtocol')).PairsPanelState,
      keyOf: (source: string) => path.resolve(source),
      subjectOf: (state) => state.source,
      title: (source) => `Pairs: ${path.basename(source)}`,
      create: async (panel, source, t) => new (await import('./pairsPanel')).PairsPanel(panel, path.resolve(source), s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}
