// The model card panels of the window, one per model version. Activation registers only the
// serializer; the panel's code and zod load when a card first opens.
import type * as vscode from 'vscode';
import type { ModelCardPanel, ModelCardServices } from './modelCardPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const MODEL_CARD_VIEW_TYPE = 'tinker.modelcard';

export interface ModelCardSubject {
  id: string;
  registryFile: string;
}

export type ModelCardPanels = Panels<ModelCardPanel, ModelCardSubject, typeof import('../../protocol/modelCardProtocol').ModelCardPanelState>;

export function modelCardPanels(s: ModelCardServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): ModelCardPanels {
  return new Panels(
    {
      viewType: MODEL_CARD_VIEW_TYPE,
      state: async () => (await import('../../protocol/modelCardProtocol')).ModelCardPanelState,
      keyOf: (subject: ModelCardSubject) => `${subject.registryFile}#${subject.id}`,
      subjectOf: (state) => ({ id: state.id, registryFile: state.registryFile }),
      title: (subject) => `Model: ${subject.id}`,
      create: async (panel, subject, t) => new (await import('./modelCardPanel')).ModelCardPanel(panel, subject.id, subject.registryFile, s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}
