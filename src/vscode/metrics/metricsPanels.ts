// The metrics panels of the window, one per run directory. Activation registers only the
// serializer; the panel's code and zod load when a panel first opens.
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { MetricsPanel, MetricsPanelServices } from './metricsPanel';
import { Panels } from '../common/webview/panels';
import type { WebviewTransport } from '../common/webview/transport';

export const METRICS_VIEW_TYPE = 'tinker.metrics';

export type MetricsPanels = Panels<MetricsPanel, string, typeof import('../../protocol/metricsProtocol').MetricsPanelState>;

export function metricsPanels(s: MetricsPanelServices, transport?: (panel: vscode.WebviewPanel) => WebviewTransport): MetricsPanels {
  return new Panels(
    {
      viewType: METRICS_VIEW_TYPE,
      state: async () => (await import('../../protocol/metricsProtocol')).MetricsPanelState,
      keyOf: (runDir: string) => path.resolve(runDir),
      subjectOf: (state) => state.runDir,
      title: (runDir) => `Metrics: ${path.basename(runDir)}`,
      create: async (panel, runDir, t) => new (await import('./metricsPanel')).MetricsPanel(panel, path.resolve(runDir), s, t),
    },
    s.extensionUri,
    s.log,
    transport,
  );
}
