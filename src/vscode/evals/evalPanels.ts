// The evaluation results panels of the window, one per results folder. Activation registers only
// the serializer; the panel's code and zod load when a panel first opens.
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { EvalPanel, EvalPanelServices } from './evalPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const EVAL_VIEW_TYPE = 'tinker.evals';

export interface EvalSubject {
  dir: string;
}

export type EvalPanels = Panels<EvalPanel, EvalSubject, typeof import('../../protocol/evalsProtocol').EvalPanelState>;

export function evalPanels(s: EvalPanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): EvalPanels {
  return new Panels(
    {
      viewType: EVAL_VIEW_TYPE,
      state: async () => (await import('../../protocol/evalsProtocol')).EvalPanelState,
      keyOf: (subject: EvalSubject) => path.resolve(subject.dir),
      subjectOf: (state) => ({ dir: state.dir }),
      title: (subject) => `Eval: ${path.basename(subject.dir)}`,
      create: async (panel, subject, t) => new (await import('./evalPanel')).EvalPanel(panel, path.resolve(subject.dir), s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}
